// A customer's liabilities proof through the TypeScript SDK against a real
// `wrangler dev` with a published statement (run by tests/tests/liabilities.rs,
// which makes the statement and passes what the customer knows): the
// vendor's route and the public one by the checkpoint's merkleRoot each give
// a proof that verifies with the pinned log key and the customer's balance;
// a changed sibling sum fails `liabilities.path`; the period receipt's own
// proof is checked and tied to it by receipts.verify. Prints "sdk ok".
import assert from "node:assert/strict";

import { Client } from "../dist/index.js";

const env = (name) => process.env[name] ?? assert.fail(`${name} is required (tests/tests/liabilities.rs)`);
const [base, apiKey, key, period] = ["BVS_BASE", "BVS_API_KEY", "BVS_LOG_KEY", "BVS_PERIOD"].map(env);
const [customer, balance, root] = ["BVS_CUSTOMER", "BVS_BALANCE", "BVS_ROOT"].map(env);
const failed = (r) => r.checks.filter((c) => !c.ok).map((c) => c.name);

const vendor = new Client({ baseUrl: base, apiKey });
const proof = await vendor.liabilities.getProof(customer, { period });
assert.equal(proof.customer.customerId, customer);
const r = await vendor.liabilities.verify(proof, { customerId: customer, key, balance });
assert.equal(r.ok, true, JSON.stringify(r.checks));
// The client pinned the log list's witness policy on first use (issue 40).
assert.ok(r.checks.some((c) => c.name === "policy.pinned" && c.ok), JSON.stringify(r.checks));
assert.ok(r.checks.some((c) => c.name === "witnesses" && c.ok), JSON.stringify(r.checks));
console.log(r.checks.at(-1).detail);

// The customer, without the vendor's key, by its checkpoint's merkleRoot.
// The public route does not name the customer (issue 40); its customer
// checks it by its own customerId.
const mine = await new Client({ baseUrl: base }).liabilities.getProofByRoot(root);
assert.equal(mine.customer.customerId, null);
const receiptCustomer = env("BVS_RECEIPT_CUSTOMER");
const m = await vendor.liabilities.verify(mine, { customerId: receiptCustomer, key });
assert.equal(m.ok, true, JSON.stringify(m.checks));
// Another customer, handed this proof, is refused.
const stranger = customer === receiptCustomer ? `${customer}-other` : customer;
assert.ok(failed(await vendor.liabilities.verify(mine, { customerId: stranger, key })).includes("customer.ledgerId"));

// A tampered sibling sum, in the answer's own text.
const text = JSON.stringify(proof);
const tampered = text.replace(/"sum":[0-9.]+/, '"sum":123456');
assert.notEqual(tampered, text);
assert.ok(failed(await vendor.liabilities.verify(tampered, { customerId: customer, key, balance })).includes("liabilities.path"));

// The period receipt carries the proof of its checkpointed customer.
const receipt = await vendor.receipts.get(receiptCustomer, { period });
const rr = await vendor.receipts.verify(receipt, { key });
assert.equal(rr.ok, true, JSON.stringify(failed(rr)));
assert.ok(rr.checks.some((c) => c.name === "liabilities.receipt" && c.ok));
console.log("sdk ok");
