// Retries without a service: 429 waits Retry-After, 5xx and network errors
// back off, 400 and 409 are not retried, and every attempt of one POST
// carries the same Idempotency-Key.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, RateLimitError, ServerError, ValidationError } from "../dist/index.js";

function scripted(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push(init.headers["idempotency-key"]);
    const next = answers.shift();
    if (next instanceof Error) throw next;
    const [status, headers = {}] = next;
    const body = status < 300 ? { success: true, statusCode: status, data: { ok: true } } : { statusCode: status, code: "x", message: "m" };
    return new Response(JSON.stringify(body), { status, headers });
  };
  return { fetch, calls };
}

test("429 waits Retry-After, then 5xx and a network error back off; one key for all attempts", async () => {
  const waits = [];
  const { fetch, calls } = scripted([[429, { "retry-after": "2" }], [503], new TypeError("reset"), [202]]);
  const c = new Client({ baseUrl: "http://x.invalid", apiKey: "k", fetch, maxRetries: 3, sleep: async (ms) => void waits.push(ms) });
  assert.deepEqual(await c.deltas.emit({ customerId: "c", delta: 1, reason: "r" }), { ok: true });
  assert.equal(calls.length, 4);
  assert.equal(new Set(calls).size, 1);
  assert.equal(waits[0], 2000);
  assert.ok(waits[1] > 0 && waits[1] <= 1000 && waits[2] > 0 && waits[2] <= 2000, String(waits));
});

test("after the retries, the typed error; 400 is not retried", async () => {
  const a = scripted([[500], [500], [500]]);
  const c = new Client({ baseUrl: "http://x.invalid", apiKey: "k", fetch: a.fetch, sleep: async () => {} });
  await assert.rejects(c.deltas.emit({ customerId: "c", delta: 1, reason: "r" }), ServerError);
  assert.equal(a.calls.length, 3);
  const b = scripted([[429, { "retry-after": "0" }], [429], [429]]);
  const d = new Client({ baseUrl: "http://x.invalid", apiKey: "k", fetch: b.fetch, sleep: async () => {} });
  await assert.rejects(d.checkpoints.create(), (e) => e instanceof RateLimitError && e.status === 429);
  const v = scripted([[400]]);
  const e = new Client({ baseUrl: "http://x.invalid", apiKey: "k", fetch: v.fetch, sleep: async () => {} });
  await assert.rejects(e.facts.create({ content: "x" }), ValidationError);
  assert.equal(v.calls.length, 1);
});
