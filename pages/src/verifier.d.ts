// The WebAssembly verifier's JavaScript face (verifier-wasm, built by
// scripts/build-verifier.sh into public/pkg and served at /pkg/): the pages
// import it as "/pkg/bvs_verifier_wasm.js", which esbuild keeps external
// (loaded at run time) and tsconfig's `paths` maps here. Every check
// returns a JSON report `{ok, checks: [{name, ok, detail}]}` as text.
export default function init(): Promise<unknown>;
export function version(): string;
export function verifyReceipt(receiptJson: string, trustedKey?: string): string;
export function verifyPublicAnswer(pagesJson: string, expectedRoot?: string, trustedKey?: string): string;
export function verifyTreeHead(note: string, key: string): string;
export function verifyConsistency(oldNote: string, newNote: string, proofJson: string, key: string): string;
/**
 * A signed tree head's witness cosignatures (C2SP cosignature/v1) against
 * a k-of-n policy, the log list's `witnessPolicy`: `witnessesJson` is a
 * JSON array of witness vkeys, `quorum` how many must have cosigned. Give
 * `nowSeconds` only for the log's latest head just fetched (cosignatures
 * older than `maxAgeSeconds`, default 3600, then do not count); leave it
 * out for a receipt or answer, whose cosignatures count at any age. The
 * report's `witnesses` check says which witnesses did and did not cosign.
 */
export function verifyCosignatures(
  note: string, verifierKey: string, witnessesJson: string, quorum: number,
  nowSeconds?: number, maxAgeSeconds?: number,
): string;
