// The TypeScript SDK against a real `wrangler dev` (run by
// tests/tests/quickstart/sdks.rs, which starts the service and passes BVS_BASE, an
// Enterprise BVS_API_KEY and the tenant's dashboard BVS_JWT).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";

import { Client, ConflictError, ValidationError, verifyWebhook } from "../dist/index.js";

const base = process.env.BVS_BASE;
const apiKey = process.env.BVS_API_KEY;
const jwt = process.env.BVS_JWT;
if (!base || !apiKey || !jwt) throw new Error("BVS_BASE, BVS_API_KEY and BVS_JWT are required (tests/tests/quickstart/sdks.rs)");

const run = `ts${Date.now().toString(36)}`;
const noWait = async () => {};
const client = new Client({ baseUrl: base, apiKey, sleep: noWait });

async function eventually(what, f, ms = 120_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function dashboard(method, path, body) {
  const r = await fetch(new URL(path, base), {
    method,
    headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

test("a POST retried through a transient failure records one delta, not two", async () => {
  const customer = `${run}_retry`;
  const sent = [];
  let dropped = false;
  // The first emit reaches the service, then its answer is lost (a network
  // error after the write): the SDK retries with the same Idempotency-Key.
  const flaky = async (url, init) => {
    sent.push({ url: String(url), key: init.headers["idempotency-key"] });
    const response = await fetch(url, init);
    if (!dropped && init.method === "POST") {
      dropped = true;
      await response.text();
      throw new TypeError("fetch failed: connection reset");
    }
    return response;
  };
  const c = new Client({ baseUrl: base, apiKey, fetch: flaky, sleep: noWait });
  const record = await c.deltas.emit({ customerId: customer, delta: 12.5, reason: "retried" });
  assert.equal(record.status, "QUEUED");
  assert.equal(sent.length, 2);
  assert.ok(sent[0].key && sent[0].key === sent[1].key, "the retry carries the same Idempotency-Key");
  const detail = await eventually("the delta to verify", async () => {
    const d = await client.customers.get(customer);
    return d.totalDeltas === 1 && d.pendingDeltas === 0 ? d : undefined;
  });
  assert.equal(detail.computedBalance, 12.5);

  // A 503 is retried too; a 409 (the key reused with another body) never.
  let calls = 0;
  const unavailable = async (url, init) => {
    calls++;
    if (calls === 1) return new Response('{"statusCode":503,"error":"Service Unavailable","message":"down"}', { status: 503 });
    return fetch(url, init);
  };
  const c2 = new Client({ baseUrl: base, apiKey, fetch: unavailable, sleep: noWait });
  await c2.deltas.emit({ customerId: customer, delta: 1, reason: "after a 503" }, { idempotencyKey: `${run}-k` });
  assert.equal(calls, 2);
  calls = 10;
  await assert.rejects(
    c2.deltas.emit({ customerId: customer, delta: 2, reason: "another body" }, { idempotencyKey: `${run}-k` }),
    (e) => e instanceof ConflictError && e.code === "idempotency_key_reused" && e.status === 409,
  );
  assert.equal(calls, 11, "a 409 is not retried");
});

test("derive's deltas come page after page: 250 deltas", async () => {
  const customer = `${run}_pages`;
  for (let start = 0; start < 250; start += 100) {
    const items = [];
    for (let i = start; i < Math.min(250, start + 100); i++) items.push({ customerId: customer, delta: i + 1, reason: `page ${i}` });
    const batch = await client.deltas.batch(items);
    assert.equal(batch.totalQueued, items.length);
  }
  await eventually("250 verified deltas", async () => (await client.customers.get(customer)).totalDeltas === 250);
  const seen = [];
  for await (const d of client.deltas.iterate(customer, { pageSize: 100 })) seen.push(d);
  assert.equal(seen.length, 250);
  assert.equal(new Set(seen.map((d) => d.anchorId)).size, 250);
  assert.deepEqual(seen.map((d) => d.delta), Array.from({ length: 250 }, (_, i) => i + 1));
  let customers = 0;
  for await (const c of client.customers.iterate({ pageSize: 1 })) customers += c.customerId.startsWith(run) ? 1 : 0;
  assert.ok(customers >= 2, `customers iterated: ${customers}`);
});

test("a validation error is a typed object naming the field", async () => {
  await assert.rejects(client.deltas.emit({ customerId: "not a valid id!", delta: 1, reason: "x" }), (e) => {
    assert.ok(e instanceof ValidationError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.code, "validation_failed");
    assert.equal(e.field, "customerId");
    assert.match(e.requestId ?? "", /^req_/);
    return true;
  });
});

/** A receiver on loopback that keeps each request's raw body and headers. */
async function receiver() {
  const got = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, got, close: () => server.close() };
}

test("webhooks verify good, tampered and stale deliveries (and the standardwebhooks package agrees)", async () => {
  const rx = await receiver();
  try {
    const created = await dashboard("POST", "/dashboard/webhooks", { url: rx.url, events: ["delta.verified"], description: "sdk" });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { id, secret, publicKey } = created.body.data;
    const sent = await dashboard("POST", `/dashboard/webhooks/${id}/test`, { type: "delta.verified" });
    assert.equal(sent.body.data.success, true, JSON.stringify(sent.body));
    const { headers, body } = rx.got.at(-1);
    // Issue 40: the key is the endpoint's own, from its answer; the SDK
    // reads it with a dashboard token, and no public route lists any key.
    assert.match(publicKey, /^whpk_/);
    const withJwt = new Client({ baseUrl: base, apiKey, dashboardToken: jwt, sleep: noWait });
    assert.equal((await withJwt.webhooks.get(id)).publicKey, publicKey);
    assert.deepEqual(await client.webhooks.keys(), []);

    // Good: with the secret (v1), with the public key (v1a), and by the
    // independent Standard Webhooks library (v1).
    const event = await client.webhooks.verify(body, headers, { secret });
    assert.equal(event.event, "delta.verified");
    assert.equal((await verifyWebhook(body, headers, { publicKey })).id, headers["webhook-id"]);
    const independent = new Webhook(secret).verify(body, {
      "webhook-id": headers["webhook-id"],
      "webhook-timestamp": headers["webhook-timestamp"],
      "webhook-signature": headers["webhook-signature"],
    });
    assert.equal(independent.id, event.id);

    // Tampered: one byte of the body, or another secret; or another
    // endpoint's key (a delivery forwarded from another receiver).
    const tampered = body.replace('"delta.verified"', '"delta.verifieD"');
    for (const opts of [{ secret }, { publicKey }]) {
      await assert.rejects(verifyWebhook(tampered, headers, opts), (e) => e.reason === "bad_signature");
    }
    const other = await dashboard("POST", "/dashboard/webhooks", { url: rx.url, events: ["test"], description: "sdk other" });
    assert.notEqual(other.body.data.publicKey, publicKey);
    await assert.rejects(verifyWebhook(body, headers, { publicKey: other.body.data.publicKey }), (e) => e.reason === "bad_signature");
    await dashboard("DELETE", `/dashboard/webhooks/${other.body.data.id}`);
    await assert.rejects(verifyWebhook(body, headers, { secret: "whsec_" + "A".repeat(32) }), (e) => e.reason === "bad_signature");
    assert.throws(() => new Webhook(secret).verify(tampered, headers));

    // Stale: more than the tolerance (300 s) away.
    const now = Number(headers["webhook-timestamp"]) + 301;
    await assert.rejects(verifyWebhook(body, headers, { secret, now }), (e) => e.reason === "stale");
    await verifyWebhook(body, headers, { secret, now, toleranceSeconds: 600 });
  } finally {
    rx.close();
  }
});

test("a receipt verifies with the service's verifier, and a tampered one is refused", async () => {
  const customer = `${run}_receipt`;
  let last;
  for (const delta of [100, -4.25]) last = await client.deltas.emit({ customerId: customer, delta, reason: "receipt" });
  await eventually("the deltas to verify", async () => (await client.deltas.status(last.anchorId)).status === "ANCHORED");
  const cp = await client.checkpoints.create({ customerId: customer });
  await eventually("the checkpoint to commit", async () => {
    for await (const c of client.checkpoints.iterate({ customerId: customer })) if (c.checkpointId === cp.checkpointId) return c.status === "COMMITTED";
    return false;
  });
  const receipt = await client.receipts.get(customer, { period: cp.period });
  assert.equal(receipt.finalBalance, 95.75);
  const logs = await (await fetch(new URL("/api/v1/logs", base))).json();
  const key = logs.data.logs.find((l) => l.name === receipt.log.name).verifierKey;

  const report = await client.receipts.verify(receipt, { key });
  assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => !c.ok)));
  assert.ok(report.checks.length > 4);

  // Tampered: an amount changed in the receipt's text.
  const text = JSON.stringify(receipt);
  const forged = text.replace('"finalBalance":95.75', '"finalBalance":96.75');
  assert.notEqual(forged, text);
  const refused = await client.receipts.verify(forged, { key });
  assert.equal(refused.ok, false);
  // Another log's key is refused too.
  const other = logs.data.logs.find((l) => l.name !== receipt.log.name).verifierKey;
  assert.equal((await client.receipts.verify(receipt, { key: other })).ok, false);
  await assert.rejects(client.receipts.verify(receipt, {}), TypeError);
  shared.receipt = { customer, period: cp.period, key };
});

const shared = {};

/** A free loopback port. */
async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
}

test("the SDK runs inside a Worker (wrangler dev): receipt verified, webhook verified", async () => {
  assert.ok(shared.receipt, "runs after the receipt test");
  const port = await freePort();
  const here = fileURLToPath(new URL("./worker/", import.meta.url));
  const state = mkdtempSync(join(tmpdir(), "bvs-sdk-worker-"));
  const wrangler = spawn(
    "wrangler",
    ["dev", "--config", join(here, "wrangler.toml"), "--ip", "127.0.0.1", "--port", String(port),
      "--inspector-port", String(await freePort()), "--persist-to", state, "--show-interactive-dev-session=false"],
    { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
  );
  let log = "";
  wrangler.stdout.on("data", (d) => (log += d));
  wrangler.stderr.on("data", (d) => (log += d));
  const worker = `http://127.0.0.1:${port}`;
  try {
    await eventually("the consumer Worker to start", async () => {
      if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited: ${log}`);
      try {
        return (await fetch(`${worker}/health`)).ok;
      } catch {
        return false;
      }
    }, 180_000);
    const { customer, period, key } = shared.receipt;
    const q = new URLSearchParams({ base, apiKey, customer, period, key });
    const r = await fetch(`${worker}/receipt?${q}`);
    const report = await r.json();
    assert.equal(r.status, 200, JSON.stringify(report));
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.forgedOk, false);

    // A webhook delivery, verified by the SDK inside the Worker.
    const rx = await receiver();
    try {
      const created = await dashboard("POST", "/dashboard/webhooks", { url: rx.url, events: ["test"], description: "worker" });
      const { id, secret, publicKey } = created.body.data;
      await dashboard("POST", `/dashboard/webhooks/${id}/test`, {});
      const { headers, body } = rx.got.at(-1);
      const forward = (payload) =>
        fetch(`${worker}/webhook?${new URLSearchParams({ secret, publicKey })}`, {
          method: "POST",
          body: payload,
          headers: {
            "webhook-id": headers["webhook-id"],
            "webhook-timestamp": headers["webhook-timestamp"],
            "webhook-signature": headers["webhook-signature"],
          },
        }).then((r) => r.json());
      assert.deepEqual(await forward(body), { v1: true, v1a: true });
      assert.deepEqual(await forward(body + " "), { v1: "bad_signature", v1a: "bad_signature" });
    } finally {
      rx.close();
    }
  } finally {
    try {
      process.kill(-wrangler.pid, "SIGTERM");
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
    rmSync(state, { recursive: true, force: true });
  }
});
