// Every call the dashboard makes goes through `call`: one place that adds
// the credentials, reads the API's envelopes and turns an error reply into
// an `ApiError` carrying the API's own `message`.

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

export interface LoggedIn {
  id: string;
  email: string;
  name: string;
  role: string;
  isVerified: boolean;
  tenantId: string;
  token: string;
}

export interface Profile {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  tenantId: string;
  emailVerified: boolean;
  role: string;
  preferredEnvironment: EnvName;
  createdAt: string;
}

export interface Contract {
  id: string;
  tenantId: string;
  environment: ContractEnv;
  status: "not_provisioned" | "provisioning" | "active" | "error";
  provisionedAt: string | null;
}

export interface ApiKey {
  id: string;
  name: string | null;
  environment: KeyEnv;
  prefix: string;
  active: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  createdAt: string;
  lastTriggeredAt?: string | null;
}

export interface CreatedWebhook extends Webhook {
  secret: string;
}

/** `POST /dashboard/webhooks/:id/rotate-secret`: the new secret, shown once. */
export interface RotatedWebhookSecret {
  id: string;
  secret: string;
  previousSecretExpiresAt: string | null;
  message: string;
}

export interface WebhookTest {
  success: boolean;
  httpStatus: number;
  message: string;
  deliveryId: string;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  outcome: string;
  error: string | null;
}

export interface Delivery {
  id: string;
  event: string;
  eventId: string;
  environment?: string | null;
  status: string;
  attempts: DeliveryAttempt[];
  nextAttemptAt?: string | null;
  lastHttpStatus?: number | null;
  createdAt: string;
  completedAt?: string | null;
  url?: string | null;
  dataPurged: boolean;
}

export interface Pagination {
  total: number;
  limit: number;
  offset: number;
}

export interface Customer {
  customerId: string;
  ledgerId: string;
  totalDeltas: number;
  computedBalance: Amount;
  firstActivityAt: string | null;
  lastActivityAt: string | null;
  latestReceiptId: string | null;
  createdAt: string;
  pendingDeltas?: number;
}

export interface DeltaObject {
  anchorId: string;
  itemHash: string;
  itemsRoot: string;
  receiptId: string;
  delta: Amount;
  reason: string | null;
  referenceId: string | null;
  window: string | null;
  declaredTimestamp: string;
  blockTimestamp: string | null;
  dataPurged: boolean;
  verified: boolean;
}

export interface WindowSummary {
  window: string;
  deltasCount: number;
  netDelta: Amount;
  firstBlockTimestamp: string;
  lastBlockTimestamp: string;
}

export interface Derivation {
  customerId: string;
  computedBalance: Amount;
  deltasCount: number;
  deltas: DeltaObject[];
  windowSummaries: WindowSummary[];
  pagination: Pagination;
}

export interface Checkpoint {
  checkpointId: string;
  customerId: string;
  period: string;
  merkleRoot: string;
  deltaCount: number;
  status: "QUEUED" | "COMMITTED";
  createdAt: string;
  committedAt: string | null;
  message?: string;
}

export interface Receipt {
  customerId: string;
  period?: string;
  deltasCount: number;
  finalBalance: Amount;
  receiptId: string;
}

export interface EmitRecord {
  anchorId: string;
  customerId: string;
  delta: Amount;
  status: string;
  receiptId: string;
  message: string;
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

/** `GET /dashboard/usage`: this month's verified deltas against the plan. */
export interface EnvUsage {
  environment: EnvName;
  plan: string;
  /** Deltas per month; null means unlimited. */
  quota: number | null;
  used: number;
  remaining: number | null;
  resetsAt: string;
  /** Deltas emitted and not yet verified, and the plan's bound on them. */
  backlog: number;
  backlogMax: number;
}

export interface Usage {
  plan: string;
  period: string;
  resetsAt: string;
  environments: EnvUsage[];
}

// ---------------------------------------------------------------- issue 30: logs, events, search, charts

/** A request of the request log (`GET /dashboard/logs/requests`). */
export interface LoggedRequest {
  requestId: string;
  source: "sandbox" | "production" | "dashboard";
  method: string;
  path: string;
  route: string;
  status: number;
  code: string | null;
  keyId: string | null;
  keyName: string | null;
  durationMs: number;
  createdAt: string;
}

export interface LoggedRequestDetail extends LoggedRequest {
  requestBody: string | null;
  responseBody: string | null;
}

export interface RequestPage {
  requests: LoggedRequest[];
  nextCursor: string | null;
}

export interface EventDelivery {
  id: string;
  webhookId: string;
  url: string | null;
  status: string;
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  createdAt: string;
  completedAt: string | null;
  dataPurged: boolean;
}

export interface LoggedEvent {
  id: string | null;
  type: string | null;
  environment: EnvName | null;
  createdAt: string | null;
  dispatchedAt: string | null;
  inOutbox: boolean;
  summary: Record<string, string>;
  deliveries: EventDelivery[];
  payload?: unknown;
}

export interface EventPage {
  events: LoggedEvent[];
  nextCursor: string | null;
}

export interface Resent {
  deliveryId: string;
  success: boolean;
  httpStatus: number;
  message: string;
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

export interface DailyUsage {
  environment: EnvName;
  plan: string;
  period: string;
  quota: number;
  used: number;
  days: { day: string; verified: number; lagP50Ms: number | null; lagP99Ms: number | null }[];
}

/** One witness of a log: `GET /api/v1/logs/witnesses` (issue 28). */
export interface WitnessState {
  name: string;
  vkey: string;
  url: string | null;
  cosignedSize: number | null;
  cosignedAt: string | null;
  /** pending, cosigned, unavailable, refused, conflict, config, misbehaved */
  status: string;
  lastError: string | null;
  lastErrorAt: string | null;
  attemptedAt: string | null;
}

/** A log's witnesses, its quorum in words and its newest witnessed size. */
export interface WitnessLog {
  environment: EnvName;
  shard: number;
  name: string;
  treeSize: number;
  witnessedSize: number | null;
  quorum: string;
  witnesses: WitnessState[];
}
