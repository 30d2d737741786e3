// One request with the SDK's safety net: an Idempotency-Key on every POST
// (the same on each retry, so a retried POST never makes a second object),
// and retries with exponential backoff and jitter on 429 (honouring
// Retry-After), 5xx, network errors and time-outs, as Stripe's SDKs do.
// 409 (an Idempotency-Key reused with another body) and the other 4xx are
// never retried. An answer "still processing" (202 with
// `data.status: "processing"`) is retried too: the first request holds the
// key, and the retry gets its stored answer.

import { BvsError, ConnectionError, errorFor, type ErrorBody } from "./errors.js";

export interface TransportOptions {
  baseUrl: string;
  headers: Record<string, string>;
  /** Retries after the first attempt (2). */
  maxRetries: number;
  /** Per attempt (30 s for writes, the spec's advice; reads too). */
  timeoutMs: number;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  newIdempotencyKey: () => string;
}

export interface Answer<T> {
  status: number;
  data: T;
  /** The answer's exact text (receipts are verified from it). */
  text: string;
  requestId: string | undefined;
  /** True when this is the stored answer of an earlier request with the key. */
  replayed: boolean;
}

export interface RequestOptions {
  /** Your own Idempotency-Key for a POST (otherwise one is made per call). */
  idempotencyKey?: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | undefined>;
  /** Extra headers (e.g. X-Credit-Pool-Id). */
  headers?: Record<string, string>;
}

/** Backoff before retry n (1-based): 0.5 s doubling, capped at 8 s, with jitter. */
export function backoffMs(retry: number): number {
  const base = Math.min(500 * 2 ** (retry - 1), 8000);
  return base / 2 + Math.random() * (base / 2);
}

const RETRY_AFTER_MAX_SECONDS = 60;

function retryAfterSeconds(h: string | null): number | undefined {
  if (h === null) return undefined;
  const n = Number(h);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function url(base: string, path: string, query?: RequestOptions["query"]): string {
  const u = new URL(path, base.endsWith("/") ? base : base + "/");
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) u.searchParams.set(k, String(v));
  }
  return u.toString();
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function processing(status: number, body: unknown): boolean {
  const data = (body as { data?: { status?: unknown; idempotencyKey?: unknown } } | undefined)?.data;
  return status === 202 && data?.status === "processing" && typeof data.idempotencyKey === "string";
}

export async function request<T>(
  t: TransportOptions,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...t.headers, ...options.headers, accept: "application/json" };
  if (method === "POST") {
    headers["content-type"] = "application/json";
    headers["idempotency-key"] = options.idempotencyKey ?? t.newIdempotencyKey();
  }
  const target = url(t.baseUrl, path, options.query);
  const payload = method === "POST" ? JSON.stringify(body ?? {}) : undefined;
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= t.maxRetries;
    let response: Response;
    let text: string;
    try {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), t.timeoutMs);
      try {
        response = await t.fetch(target, { method, headers, body: payload, signal: controller.signal });
        text = await response.text();
      } finally {
        clearTimeout(timer);
      }
    } catch (cause) {
      if (!last) {
        await t.sleep(backoffMs(attempt + 1));
        continue;
      }
      throw new ConnectionError(`no answer from ${method} ${path}: ${String(cause)}`, {
        status: 0,
        code: "connection_error",
        cause,
      });
    }
    const parsed = parse(text);
    const requestId = response.headers.get("request-id") ?? undefined;
    const retryAfter = retryAfterSeconds(response.headers.get("retry-after"));
    const retryable = response.status === 429 || response.status >= 500 || processing(response.status, parsed);
    if (retryable && !last) {
      const wait = retryAfter !== undefined ? Math.min(retryAfter, RETRY_AFTER_MAX_SECONDS) * 1000 : backoffMs(attempt + 1);
      await t.sleep(wait);
      continue;
    }
    if (response.status >= 400 || parsed === undefined) {
      if (parsed === undefined && response.status < 400) {
        throw new BvsError(`not JSON from ${method} ${path}`, { status: response.status, code: "bad_answer", requestId });
      }
      throw errorFor(response.status, parsed as ErrorBody | undefined, requestId, retryAfter);
    }
    return {
      status: response.status,
      data: (parsed as { data: T }).data,
      text,
      requestId,
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  }
}
