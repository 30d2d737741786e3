// A customer's liabilities proof without a service (issue 31): the proof
// saved from a liabilities.rs run (sdk/testdata) verifies with the log key
// and the customer's balance; a changed leaf amount, sibling sum or balance
// fails with the check named; a period receipt's proof is tied to it; the
// client's routes keep the answer's exact text for verify().
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Client, liabilities, receipts, verifyLiabilitiesProof } from "../dist/index.js";

const fixture = (name) => readFileSync(new URL(`../../testdata/${name}`, import.meta.url), "utf8");
const proof = fixture("liabilities-proof.json"); // liab-002, balance 6.88
const key = JSON.parse(proof).log.publicKey;
const failed = (report) => report.checks.filter((c) => !c.ok).map((c) => c.name);
// The fixtures' heads were made without witnesses: a policy that requires
// none (a policy that requires one fails them: "a witness policy ...").
const witnessPolicy = "quorum none\n";

test("a customer's proof verifies with the log key and its balance, ending with the summary", async () => {
  const r = await verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-002", key, balance: "6.88" });
  assert.equal(r.ok, true, JSON.stringify(r));
  const names = r.checks.map((c) => c.name);
  for (const n of ["statementHash", "log.inclusion", "customer.ledgerId", "balance", "liabilities.amount", "liabilities.path", "receivables"]) {
    assert.ok(names.includes(n), n);
  }
  assert.equal(names.at(-1), "summary");
  assert.match(r.checks.at(-1).detail, /your balance of 6\.88 is counted in a total of 34424 owed to 200 customers/);
  // A negative balance: its receivables leaf, and a liabilities leaf of 0.
  const negative = await liabilities.verify(fixture("liabilities-proof-negative.json"), { witnessPolicy, customerId: "liab-001", key, balance: -1.43 });
  assert.equal(negative.ok, true, JSON.stringify(negative));
});

test("a tampered proof fails with the check named", async () => {
  const amount = await verifyLiabilitiesProof(proof.replace('"amount":6.88', '"amount":0.01'), { witnessPolicy, customerId: "liab-002", key, balance: "6.88" });
  assert.equal(amount.ok, false);
  assert.ok(failed(amount).includes("liabilities.amount"), failed(amount).join());
  const sum = proof.replace(/"sum":[0-9.]+/, '"sum":123456');
  assert.notEqual(sum, proof);
  const path = await verifyLiabilitiesProof(sum, { witnessPolicy, customerId: "liab-002", key });
  assert.deepEqual(failed(path), ["liabilities.path"]);
  const balance = await verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-002", key, balance: "6.89" });
  assert.deepEqual(failed(balance), ["balance"]);
  const otherKey = "localhost/bvs/sandbox+00000000+AcBvdiPvgJDDOHwWdPC0ALTp0RwHqs4nXw1eRP795DBP";
  const wrongKey = await verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-002", key: otherKey });
  assert.ok(failed(wrongKey).includes("log.publicKey"), failed(wrongKey).join());
});

test("without a key the caller must choose the proof's own key, and is told", async () => {
  await assert.rejects(verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-002" }), TypeError);
  const r = await verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-002", policy: "proof-key" });
  assert.equal(r.ok, true);
  assert.match(r.checks.find((c) => c.name === "log.publicKey").detail, /not pinned/);
});

test("another customer's proof fails for the customer checking it, named or not (issue 40)", async () => {
  // Who checks is required.
  await assert.rejects(verifyLiabilitiesProof(proof, { witnessPolicy, key }), TypeError);
  // liab-002's proof with its customerId taken out, handed to liab-001.
  const unnamed = proof.replace('"customerId":"liab-002"', '"customerId":null');
  assert.notEqual(unnamed, proof);
  assert.deepEqual(failed(await verifyLiabilitiesProof(unnamed, { witnessPolicy, customerId: "liab-001", key })), ["customer.ledgerId"]);
  assert.deepEqual(failed(await verifyLiabilitiesProof(proof, { witnessPolicy, customerId: "liab-001", key })), ["customer.ledgerId"]);
  assert.equal((await verifyLiabilitiesProof(unnamed, { witnessPolicy, customerId: "liab-002", key })).ok, true);
  // By ledger id: its own passes, another's fails.
  const own = JSON.parse(proof).customer.ledgerId;
  const other = JSON.parse(fixture("liabilities-proof-negative.json")).customer.ledgerId;
  assert.equal((await verifyLiabilitiesProof(unnamed, { witnessPolicy, ledgerId: own, key, balance: "6.88" })).ok, true);
  assert.deepEqual(failed(await verifyLiabilitiesProof(unnamed, { witnessPolicy, ledgerId: other, key })), ["customer.ledgerId"]);
});

test("a period receipt's liabilities proof is checked and tied to the receipt", async () => {
  const receipt = fixture("liabilities-receipt.json");
  const r = await receipts.verify(receipt, { witnessPolicy, key });
  assert.equal(r.ok, true, JSON.stringify(failed(r)));
  assert.ok(r.checks.some((c) => c.name === "liabilities.receipt" && c.ok));
  // Another customer's proof handed with this receipt fails the tie.
  const other = await receipts.verify(receipt, { witnessPolicy, key, liabilities: fixture("liabilities-proof-negative.json") });
  assert.equal(other.ok, false);
  assert.ok(failed(other).includes("liabilities.receipt"), failed(other).join());
});

test("the client's proof routes: paths, query, and the exact text verified", async () => {
  const seen = [];
  const fetch = async (url) => {
    seen.push(String(url));
    // The answer as the service writes it: amounts as JSON numbers.
    return new Response(`{"success":true,"statusCode":200,"data":${proof}}`, { status: 200 });
  };
  const c = new Client({ baseUrl: "http://x.invalid", apiKey: "k", fetch });
  const byVendor = await c.liabilities.getProof("liab 002", { period: "2026-11" });
  assert.equal(byVendor.customer.customerId, "liab-002");
  const root = "ab".repeat(32);
  const byRoot = await c.liabilities.getProofByRoot(root);
  assert.deepEqual(seen, [
    "http://x.invalid/api/v1/balance/customers/liab%20002/liabilities-proof?period=2026-11",
    `http://x.invalid/api/v1/agreement/liabilities-proof/${root}`,
  ]);
  for (const p of [byVendor, byRoot]) {
    const r = await c.liabilities.verify(p, { witnessPolicy, customerId: "liab-002", key, balance: "6.88" });
    assert.equal(r.ok, true, JSON.stringify(failed(r)));
  }
});

test("a witness policy is required without a client, and a head its quorum did not cosign fails (issue 40)", async () => {
  await assert.rejects(verifyLiabilitiesProof(proof, { customerId: "liab-002", key }), TypeError);
  await assert.rejects(receipts.verify(fixture("liabilities-receipt.json"), { key }), TypeError);
  // A policy of one witness: the fixtures' heads carry no cosignature.
  const logKey = key;
  const oneWitness = `log ${logKey}\nwitness w1 w1.example/bvs+b5ca3c68+BJoOY0yqJdeQgPyUGY676znsgL3V42EGcvp2MbKPNjtS\nquorum w1\n`;
  const r = await verifyLiabilitiesProof(proof, { witnessPolicy: oneWitness, customerId: "liab-002", key });
  assert.deepEqual(failed(r), ["witnesses"]);
  assert.equal(r.checks.at(-1).name, "summary");
  const rr = await receipts.verify(fixture("liabilities-receipt.json"), { witnessPolicy: oneWitness, key });
  assert.deepEqual(failed(rr), ["witnesses"]);
  assert.ok(rr.checks.some((c) => c.name === "policy.log" && c.ok));
  // A policy that lists another log.
  const otherLog = "other.example/log+720aef5e+AZoOY0yqJdeQgPyUGY676znsgL3V42EGcvp2MbKPNjtS";
  const other = await receipts.verify(fixture("liabilities-receipt.json"), { witnessPolicy: `log ${otherLog}\nquorum none\n`, key });
  assert.deepEqual(failed(other), ["policy.log"]);
});
