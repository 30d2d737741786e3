// The TypeScript SDK holds a receipt's signed tree head to a witness policy
// (issue 40), against a real `wrangler dev` with three local witnesses (run
// by tests/tests/sdk_witness.rs, which saves a witnessed receipt's answer):
// a Client pins the log list's policy on first use and the receipt passes;
// its cosignature lines stripped, it fails `witnesses`, pinned or given;
// without a Client a policy is required. Prints "sdk ok".
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { Client, receipts } from "../dist/index.js";

const env = (name) => process.env[name] ?? assert.fail(`${name} is required (tests/tests/sdk_witness.rs)`);
const [base, apiKey, key, policy] = ["BVS_BASE", "BVS_API_KEY", "BVS_LOG_KEY", "BVS_POLICY"].map(env);
const text = readFileSync(env("BVS_RECEIPT_FILE"), "utf8");
const failed = (r) => r.checks.filter((c) => !c.ok).map((c) => c.name);

// The same answer with every cosignature line taken out of its head: the
// note keeps the log's own signature (its first signature line).
const head = JSON.parse(text).data.proof.treeHead;
const [body, sigs] = head.split("\n\n");
const lines = sigs.split("\n").filter((l) => l !== "");
assert.ok(lines.length >= 3, `a head with the log's signature and a quorum of cosignatures: ${head}`);
const bare = `${body}\n\n${lines[0]}\n`;
const stripped = text.replace(JSON.stringify(head).slice(1, -1), JSON.stringify(bare).slice(1, -1));
assert.notEqual(stripped, text);
assert.equal(JSON.parse(stripped).data.proof.witnessed, true);

const client = new Client({ baseUrl: base, apiKey });
const r = await client.receipts.verify(text, { key });
assert.equal(r.ok, true, JSON.stringify(r.checks.filter((c) => !c.ok)));
assert.ok(r.checks.some((c) => c.name === "policy.pinned" && c.ok));
assert.ok(r.checks.some((c) => c.name === "witnesses" && c.ok && /2 of/.test(c.detail)), JSON.stringify(r.checks));
assert.deepEqual(failed(await client.receipts.verify(stripped, { key })), ["witnesses"]);

// Without a Client: a policy is required, and holds the same.
await assert.rejects(receipts.verify(text, { key }), TypeError);
assert.equal((await receipts.verify(text, { key, witnessPolicy: policy })).ok, true);
assert.deepEqual(failed(await receipts.verify(stripped, { key, witnessPolicy: policy })), ["witnesses"]);
console.log("sdk ok");
