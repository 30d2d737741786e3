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
