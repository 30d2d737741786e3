// The liabilities check's own WebAssembly module (issue 31,
// docs/liabilities.md; built by `scripts/build-verifier.sh --liabilities`
// into public/pkg-liabilities): the agreement page imports it at run time,
// only when a proof is there to check, so the page's script and the verify
// page's module stay their size. Returns a JSON report
// `{ok, checks: [{name, ok, detail}]}` as text; its `summary` check, when
// everything passed, is the sentence the page shows.
export default function init(): Promise<unknown>;
export function verifyLiabilities(proofJson: string, trustedKey?: string, expectedBalance?: string): string;
