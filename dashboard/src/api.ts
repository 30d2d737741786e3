// Every call the dashboard makes goes through `call`: one place that adds
// the credentials, reads the API's envelopes and turns an error reply into
// an `ApiError` carrying the API's own `message`.

import type {
  ApiKey,
  Checkpoint,
  Contract,
  CreatedApiKey,
  CreatedWebhook,
  Customer as CustomerOf,
  DailyUsage,
  Delivery,
  DeliveryAttempt,
  DeltaObject,
  Derivation,
  EmitRecord,
  EventDelivery,
  LoggedEvent as ContractEvent,
  LoggedIn,
  LogWitnesses as WitnessLog,
  Pagination,
  Profile,
  RequestLogEntry as LoggedRequest,
  RequestLogPage as RequestPage,
  Resent,
  RotatedWebhookSecret,
  Usage,
  Webhook as WebhookOf,
  WebhookTest,
  WindowSummary,
  WitnessStatus as WitnessState,
} from "../../sdk/typescript/src/types";

/** The API's shapes, from the SDK's names of the OpenAPI schemas (one
 * source for both); the rest of this file adds what the contract does not
 * say (narrower types, the dashboard's own routes). */
export type { ApiKey, Checkpoint, Contract, CreatedApiKey, CreatedWebhook, DailyUsage, Delivery, DeliveryAttempt, DeltaObject, Derivation, EmitRecord, EventDelivery, LoggedIn, LoggedRequest, Pagination, Profile, RequestPage, Resent, RotatedWebhookSecret, Usage, WebhookTest, WindowSummary, WitnessLog, WitnessState };

/** An error reply of the API (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter: number | null = null,
    /** The answer's Request-Id: where the request log has it. */
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
}

/** Exact decimal amounts, kept as the JSON text the API wrote. */
export type Amount = string;

// Amounts are exact decimals with up to 18 fractional digits: a JS number
// would round them. Their number tokens are turned into strings before
// JSON.parse. A key inside a JSON string is escaped (\"delta\"), so this
// never matches text inside a reason or a payload.
const AMOUNT_TOKENS =
  /"(delta|computedBalance|netDelta|startingBalance|finalBalance|balanceAfter)":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

export function parseExact(text: string): unknown {
  return JSON.parse(text.replace(AMOUNT_TOKENS, '"$1":"$2"'));
}

export interface Reply<T> {
  data: T;
  message: string | null;
  /** The reply as the API sent it (for downloads). */
  raw: string;
}

interface CallOptions {
  /** A JSON-ready value, or a JSON text already built (exact amounts). */
  body?: unknown;
  jwt?: string | null;
  apiKey?: string | null;
  query?: Record<string, string | number | undefined | null>;
}

type UnauthorizedHandler = (message: string) => void;
let onUnauthorized: UnauthorizedHandler = () => {};

/** Called when the API answers 401 to a request that carried the JWT. */
export function setUnauthorizedHandler(f: UnauthorizedHandler): void {
  onUnauthorized = f;
}

export async function call<T>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: "application/json" };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  }
  if (opts.jwt) headers.authorization = `Bearer ${opts.jwt}`;
  if (opts.apiKey) headers["x-api-key"] = opts.apiKey;
  let url = path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) {
      if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
    }
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body });
  } catch {
    throw new ApiError(0, "The service did not answer. Check your connection (or that scripts/dev.sh is running) and try again.");
  }
  const raw = await res.text();
  let parsed: { data?: unknown; message?: unknown } | null = null;
  try {
    const v = raw ? parseExact(raw) : null;
    if (v && typeof v === "object") parsed = v as { data?: unknown; message?: unknown };
  } catch {
    // Not JSON: the status line speaks instead.
  }
  if (!res.ok) {
    const message =
      typeof parsed?.message === "string" && parsed.message
        ? parsed.message
        : `The service answered ${res.status} ${res.statusText}`.trim();
    const retry = Number(res.headers.get("retry-after"));
    if (res.status === 401 && opts.jwt) onUnauthorized(message);
    throw new ApiError(res.status, message, Number.isFinite(retry) && retry > 0 ? retry : null, res.headers.get("request-id"));
  }
  return {
    data: (parsed?.data ?? null) as T,
    message: typeof parsed?.message === "string" ? parsed.message : null,
    raw,
  };
}

// ---------------------------------------------------------------- types

export type EnvName = "sandbox" | "production";
export type ContractEnv = "testnet" | "mainnet";
export type KeyEnv = "test" | "live";

export const ENV_LABEL: Record<EnvName, string> = { sandbox: "Sandbox", production: "Production" };
export const CONTRACT_OF: Record<EnvName, ContractEnv> = { sandbox: "testnet", production: "mainnet" };
export const KEY_ENV_OF: Record<EnvName, KeyEnv> = { sandbox: "test", production: "live" };
export const ENV_OF_CONTRACT: Record<ContractEnv, EnvName> = { testnet: "sandbox", mainnet: "production" };
export const ENV_OF_KEY: Record<KeyEnv, EnvName> = { test: "sandbox", live: "production" };

/** A webhook; its own page (`GET /dashboard/webhooks/:id`) adds when it
 * last fired. */
export interface Webhook extends WebhookOf {
  lastTriggeredAt?: string | null;
}

/** A customer's ledger: its balance as exact text (`Amount`); the
 * customer's own page adds its pending deltas. */
export interface Customer extends Omit<CustomerOf, "computedBalance"> {
  computedBalance: Amount;
  pendingDeltas?: number;
}

export interface Receipt {
  customerId: string;
  period?: string;
  deltasCount: number;
  finalBalance: Amount;
  receiptId: string;
}

export interface Mail {
  id: string;
  to: string;
  subject: string;
  kind: string;
  body: string;
  token: string | null;
  createdAt: string;
}

/** `GET /dashboard/usage`: one environment's month of verified deltas against the plan. */
export type EnvUsage = Usage["environments"][number];

// ---------------------------------------------------------------- issue 30: logs, events, search, charts

/** An event as the event log lists it: the contract's, with its
 * environment narrowed (the schema says only "string"). */
export interface LoggedEvent extends Omit<ContractEvent, "environment"> {
  environment: EnvName | null;
}

export interface EventPage {
  events: LoggedEvent[];
  nextCursor: string | null;
}

export interface LoggedRequestDetail extends LoggedRequest {
  requestBody: string | null;
  responseBody: string | null;
}

export interface SearchHit {
  kind: "delta" | "submission" | "receipt" | "checkpoint" | "customer" | "event" | "request" | "fact" | "delivery";
  id: string;
  environment: EnvName | null;
  customerId: string | null;
  proofRoot: string | null;
  state: string | null;
  eventId: string | null;
}

export interface HistoryPoint {
  ledgerSeq: number;
  anchorId: string;
  verifiedAt: string;
  delta: Amount;
  balanceAfter: Amount;
}

export interface BalanceHistory {
  customerId: string;
  computedBalance: Amount;
  totalDeltas: number;
  step: number;
  points: HistoryPoint[];
}

