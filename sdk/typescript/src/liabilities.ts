// A customer's liabilities proof (issue 31, docs/liabilities.md §4 and §8),
// checked by the service's own verifier: the same Rust `core` check as
// `bvs-verify liabilities` and the agreement page, in the SDKs' WebAssembly
// module (scripts/build-verifier.sh --sdk). Nothing of it is written in
// TypeScript here.

import { merged, NO_WITNESS_POLICY, textOf, verifier, witnessChecks, type VerificationReport } from "./receipts.js";

export interface LiabilitiesVerifyOptions {
  /**
   * Who is checking: your own customerId (the vendor's name for you, on
   * your receipts). The proof must be for your ledger, recomputed from it
   * and the statement's tenantId; another customer's proof fails
   * `customer.ledgerId`. Required unless `ledgerId` is given.
   */
  customerId?: string;
  /** Who is checking, by your ledger id (64 hex characters) instead. */
  ledgerId?: string;
  /**
   * The log's verifier key you trust (pinned from GET /api/v1/logs or
   * /api/v1/log/{environment}/key). Checks that this key signed the tree
   * head the statement is included in.
   */
  key?: string;
  /**
   * Without a key: `"proof-key"` accepts the key the proof names, so every
   * proof is checked but not who signed the head (say so to the user).
   */
  policy?: "proof-key";
  /**
   * The balance the customer knows (its period receipt's `finalBalance`, or
   * its own books): the proof must state it (check `balance`). Give it as
   * decimal text ("42.10") to keep it exact; a number is written with
   * `String(n)`.
   */
  balance?: string | number;
  /**
   * The witness policy to hold the statement's signed tree head to (C2SP
   * tlog-policy text; see ReceiptVerifyOptions.witnessPolicy). Required
   * here; a `Client` pins its log list's policy on first use.
   */
  witnessPolicy?: string;
}

/**
 * Verifies a customer's liabilities proof: the statement's hash, the
 * statement in the signed log, the ledger id, the leaf amounts and each
 * sum-tree path to the statement's root, total and leaf count, that the
 * proof is for the customer checking it (`customerId` or `ledgerId`), and (with
 * `balance`) the balance. The report's checks are named as in
 * docs/liabilities.md §4 (`statementHash`, `log.inclusion`,
 * `liabilities.amount`, `liabilities.path`, ...); the last one, `summary`,
 * is the sentence to show once all passed. Give the proof as the client
 * returned it (its exact text is kept), or as text saved from the API.
 */
export async function verifyLiabilitiesProof(proof: string | object, options: LiabilitiesVerifyOptions): Promise<VerificationReport> {
  if (!options.key && options.policy !== "proof-key") {
    throw new TypeError('give the log key you trust ({key}), or {policy: "proof-key"} to accept the key the proof names');
  }
  if (options.witnessPolicy === undefined) throw new TypeError(NO_WITNESS_POLICY);
  if ((options.customerId === undefined) === (options.ledgerId === undefined)) {
    throw new TypeError("say who is checking: give your own {customerId} (or {ledgerId}), one of them: a proof passes only for its own customer");
  }
  const balance = options.balance === undefined ? null : String(options.balance);
  const g = await verifier();
  const report = options.customerId !== undefined
    ? g.verifyLiabilities(textOf(proof), options.customerId, options.key ?? null, balance)
    : g.verifyLiabilitiesOfLedger(textOf(proof), options.ledgerId as string, options.key ?? null, balance);
  const witnessed = await witnessChecks(textOf(proof), options.key ?? null, options.witnessPolicy);
  // The witness checks first: `summary` stays the last check.
  return merged(witnessed, JSON.parse(report) as VerificationReport);
}
