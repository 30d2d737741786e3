// The liabilities check's own WebAssembly module (issue 31,
// docs/liabilities.md; built by `scripts/build-verifier.sh --liabilities`
// into public/pkg-liabilities): the agreement page imports it at run time,
// only when a proof is there to check, so the page's script and the verify
// page's module stay their size. Returns a JSON report
// `{ok, checks: [{name, ok, detail}]}` as text; its `summary` check, when
// everything passed, is the sentence the page shows.
export default function init(): Promise<unknown>;
// Both take who is checking (issue 40): a proof passes only for its own
// customer, by customerId or by ledger id (the agreement page's, the
// ledger its key is bound to).
export function verifyLiabilities(proofJson: string, customerId: string, trustedKey?: string, expectedBalance?: string): string;
export function verifyLiabilitiesOfLedger(proofJson: string, ledgerId: string, trustedKey?: string, expectedBalance?: string): string;
// A signed tree head against a witness policy's tlog-policy text (nested
// groups included): the verify page loads this module only for a policy
// the log list's k-of-n form cannot say (issue 41). `nowSeconds` only for
// the log's latest head, checked now.
export function verifyWitnessPolicyText(note: string, key: string, policyText: string, nowSeconds?: number): string;
// A public answer's agreement side (the whole answer's text), checked
// against the log the page pinned the key of: core's agreement checks.
export function verifyAnswerAgreement(answerJson: string, logOrigin: string): string;
// A balance as of a moment (derive's answer with `asOf`, issue 43): core's
// `verify::verify_as_of`, as `bvs-verify as-of` checks it.
export function verifyAsOf(answerJson: string, trustedKey?: string): string;
