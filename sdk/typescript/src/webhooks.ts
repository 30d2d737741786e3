// Standard Webhooks verification on WebCrypto (crypto.subtle), so it runs
// the same on Node 20+, Cloudflare Workers, Deno and browsers
// (docs/webhooks.md). Signed content: `{webhook-id}.{webhook-timestamp}.{body}`;
// `v1,` is HMAC-SHA256 keyed with the base64 decoding of the secret after
// `whsec_`, `v1a,` Ed25519 with the endpoint's own `whpk_` public key
// (its `publicKey` in the dashboard answers; issue 40). A delivery passes when one of its signatures
// verifies with one of the given secrets or keys, and its timestamp is
// within the tolerance of now (300 s by default, as Stripe's).

import { WebhookVerificationError } from "./errors.js";
import type { components } from "./schema.js";

export type WebhookEvent = components["schemas"]["WebhookEvent"];

export interface WebhookVerifyOptions {
  /** `whsec_...` secret(s): checks `v1,` signatures (two during a rotation). */
  secret?: string | string[];
  /** Your endpoint's own `whpk_...` key(s), its `publicKey` (two during a rotation): checks `v1a,`. */
  publicKey?: string | string[];
  /** Largest distance of `webhook-timestamp` from now, in seconds (300). */
  toleranceSeconds?: number;
  /** Now, in unix seconds (tests). */
  now?: number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined;
  }
  const map = headers as Record<string, string | string[] | undefined>;
  for (const k of Object.keys(map)) {
    if (k.toLowerCase() === name) {
      const v = map[k];
      return Array.isArray(v) ? v[0] : v;
    }
  }
  return undefined;
}

export function base64Decode(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function bytesOf(payload: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof payload === "string") return new TextEncoder().encode(payload);
  return new Uint8Array(payload);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

async function v1Matches(secret: string, content: Uint8Array<ArrayBuffer>, signatures: Uint8Array<ArrayBuffer>[]): Promise<boolean> {
  if (!secret.startsWith("whsec_")) throw new TypeError("a webhook secret starts with whsec_");
  const key = await crypto.subtle.importKey(
    "raw",
    base64Decode(secret.slice("whsec_".length)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, content));
  return signatures.some((s) => equal(s, mac));
}

async function v1aMatches(publicKey: string, content: Uint8Array<ArrayBuffer>, signatures: Uint8Array<ArrayBuffer>[]): Promise<boolean> {
  if (!publicKey.startsWith("whpk_")) throw new TypeError("a webhook public key starts with whpk_");
  const key = await crypto.subtle.importKey(
    "raw",
    base64Decode(publicKey.slice("whpk_".length)),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  for (const s of signatures) {
    if (await crypto.subtle.verify({ name: "Ed25519" }, key, s, content)) return true;
  }
  return false;
}

/**
 * Verifies a delivery and returns its parsed body. `payload` is the raw
 * body exactly as received (text or bytes), never a re-serialized object.
 *
 * @throws WebhookVerificationError (`missing_header`, `bad_timestamp`,
 *   `stale`, `bad_signature`).
 */
export async function verifyWebhook(
  payload: string | Uint8Array | ArrayBuffer,
  headers: HeaderSource,
  options: WebhookVerifyOptions,
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signature = header(headers, "webhook-signature");
  if (!id || !timestamp || !signature) {
    throw new WebhookVerificationError("missing_header", "webhook-id, webhook-timestamp and webhook-signature are required");
  }
  if (!/^[0-9]+$/.test(timestamp)) {
    throw new WebhookVerificationError("bad_timestamp", "webhook-timestamp is not unix seconds");
  }
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("stale", `webhook-timestamp is more than ${tolerance} s from now`);
  }
  const secrets = list(options.secret);
  const keys = list(options.publicKey);
  if (secrets.length === 0 && keys.length === 0) {
    throw new TypeError("give a secret (v1) or a publicKey (v1a) to verify with");
  }
  const body = bytesOf(payload);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  const v1: Uint8Array<ArrayBuffer>[] = [];
  const v1a: Uint8Array<ArrayBuffer>[] = [];
  for (const part of signature.split(" ")) {
    const comma = part.indexOf(",");
    if (comma < 0) continue;
    let sig: Uint8Array<ArrayBuffer>;
    try {
      sig = base64Decode(part.slice(comma + 1));
    } catch {
      continue;
    }
    const version = part.slice(0, comma);
    if (version === "v1") v1.push(sig);
    else if (version === "v1a") v1a.push(sig);
  }
  let ok = false;
  for (const s of secrets) ok ||= v1.length > 0 && (await v1Matches(s, content, v1));
  for (const k of keys) ok ||= v1a.length > 0 && (await v1aMatches(k, content, v1a));
  if (!ok) {
    throw new WebhookVerificationError("bad_signature", "no signature of the delivery verifies with the given secret or key");
  }
  return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
}
