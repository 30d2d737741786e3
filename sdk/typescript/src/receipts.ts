// Receipt verification with the service's own verifier: verifier-wasm, the
// Rust `core` compiled to WebAssembly, built with the receipt's agreement
// checks (scripts/build-verifier.sh --sdk into verifier/). Nothing of the
// verification is written in TypeScript here.
//
// Loading: on Node the module is read from the package's verifier/ folder;
// on Cloudflare Workers, which refuse to compile WebAssembly from bytes at
// run time, import "@bvs/sdk/workers", which imports the .wasm as a module
// (wrangler bundles it as CompiledWasm); elsewhere (browsers, Deno) call
// setVerifierModule() with a WebAssembly.Module or the bytes.

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** What the verifier found: `ok` only when every check passed. */
export interface VerificationReport {
  ok: boolean;
  checks: Check[];
}

export interface ReceiptVerifyOptions {
  /**
   * The log's verifier key you trust (pinned from GET /api/v1/logs, or
   * from a source you trust more). Checks that this key signed the tree head.
   */
  key?: string;
  /**
   * Without a key: `"receipt-key"` accepts the key the receipt names, so
   * every proof is checked but not who signed the head (say so to the user).
   */
  policy?: "receipt-key";
  /**
   * A liabilities proof saved apart (docs/liabilities.md §10) to tie to this
   * receipt, as `bvs-verify receipt --liabilities` does. A period receipt
   * that carries its own `liabilities` is checked with it anyway.
   */
  liabilities?: string | object;
  /**
   * The witness policy to hold the receipt's signed tree head to: C2SP
   * tlog-policy text (the log list's `witnessPolicyText`, saved, or one
   * you wrote), as `bvs-verify receipt --policy` reads it. The head passes
   * only when the policy's quorum of witnesses cosigned it (checks
   * `policy`, `policy.log`, `witnesses`), so a receipt whose cosignatures
   * were stripped fails. Required by the client-free `receipts.verify`;
   * a `Client` pins its log list's policy on first use when none is given.
   */
  witnessPolicy?: string;
}

/** The TypeError of a client-free verify without a witness policy. */
export const NO_WITNESS_POLICY =
  "give the witness policy you trust ({witnessPolicy}: C2SP tlog-policy text, e.g. the log list's witnessPolicyText from GET /api/v1/logs), " +
  "or verify through a Client, which pins its log list's policy on first use";

export interface Glue {
  initSync(arg: { module: WebAssembly.Module | BufferSource }): unknown;
  verifyReceiptWithAgreement(receipt: string, key?: string | null): string;
  verifyReceiptLiabilities(receipt: string, proof?: string | null, key?: string | null): string;
  verifyLiabilities(proof: string, customerId: string, key?: string | null, balance?: string | null): string;
  verifyLiabilitiesOfLedger(proof: string, ledgerId: string, key?: string | null, balance?: string | null): string;
  verifyWitnessPolicy(document: string, key: string | null, policy: string): string;
  verifyAsOf(answer: string, key?: string | null): string;
  version(): string;
}

let provided: WebAssembly.Module | BufferSource | undefined;
let providedGlue: Glue | undefined;
let glue: Promise<Glue> | undefined;

/**
 * Hands the SDK the verifier's module (Workers, browsers, Deno), and
 * optionally its glue already imported (the Workers entry does).
 */
export function setVerifierModule(module: WebAssembly.Module | BufferSource, withGlue?: unknown): void {
  provided = module;
  providedGlue = withGlue as Glue | undefined;
  glue = undefined;
}

async function nodeBytes(): Promise<Uint8Array<ArrayBuffer>> {
  // Node only; the name is a variable so bundlers for Workers and
  // browsers leave it alone (they hand the module over instead).
  const fs = "node:fs/promises";
  const { readFile } = (await import(/* @vite-ignore */ fs)) as {
    readFile(path: URL): Promise<Uint8Array<ArrayBuffer>>;
  };
  try {
    return await readFile(new URL("../verifier/bvs_verifier_wasm_bg.wasm", import.meta.url));
  } catch (e) {
    throw new Error(
      "the receipt verifier is missing from the SDK's verifier/ folder: run scripts/build-sdks.sh in the repository",
      { cause: e },
    );
  }
}

async function load(): Promise<Glue> {
  // @ts-ignore: the glue is built into verifier/ (scripts/build-sdks.sh).
  const g = providedGlue ?? ((await import("../verifier/bvs_verifier_wasm.js")) as unknown as Glue);
  g.initSync({ module: provided ?? (await nodeBytes()) });
  return g;
}

/** The verifier, loaded once (also for liabilities.ts; not exported by the package). */
export function verifier(): Promise<Glue> {
  glue ??= load();
  glue.catch(() => (glue = undefined));
  return glue;
}

/** The text a receipt was answered with, kept by the client for each one. */
export const rawText = new WeakMap<object, string>();

/** The exact text of a document: given as text, or as the client returned it. */
export function textOf(doc: string | object): string {
  return typeof doc === "string" ? doc : (rawText.get(doc) ?? JSON.stringify(doc));
}

/**
 * Verifies a receipt: the tree head's signature, every delta's itemHash and
 * inclusion proof, the roots, the count, the replayed balance, its
 * agreement side when it has one, and the liabilities proof of a period
 * receipt (its own `liabilities`, or `options.liabilities`) tied to its
 * customer, period and `finalBalance` (checks named `liabilities.*`).
 * Give the receipt as the client returned it (its exact text is kept), or
 * as text saved from the API.
 */
export async function verifyReceipt(receipt: string | object, options: ReceiptVerifyOptions): Promise<VerificationReport> {
  if (!options.key && options.policy !== "receipt-key") {
    throw new TypeError('give the log key you trust ({key}), or {policy: "receipt-key"} to accept the key the receipt names');
  }
  if (options.witnessPolicy === undefined) throw new TypeError(NO_WITNESS_POLICY);
  const text = textOf(receipt);
  const g = await verifier();
  const report = JSON.parse(g.verifyReceiptWithAgreement(text, options.key ?? null)) as VerificationReport;
  const proof = options.liabilities === undefined ? null : textOf(options.liabilities);
  const tied = JSON.parse(g.verifyReceiptLiabilities(text, proof, options.key ?? null)) as VerificationReport;
  const witnessed = await witnessChecks(text, options.key ?? null, options.witnessPolicy);
  return merged(report, tied, witnessed);
}

/**
 * Verifies a balance as of a moment (derive's answer with `asOf`, its
 * `data`, or the `asOf` object; docs/balance.md "As of"): the tree head's
 * signature, each listed delta's inclusion and raw content, that they are
 * the ledger's consecutive deltas, the boundary, the count, the last delta
 * and the balance; core's `verify::verify_as_of`, as `bvs-verify as-of`.
 */
export async function verifyAsOf(answer: string | object, options: { key: string }): Promise<VerificationReport> {
  if (!options.key) throw new TypeError("give the log key you trust ({key})");
  const g = await verifier();
  return JSON.parse(g.verifyAsOf(textOf(answer), options.key)) as VerificationReport;
}

/** Reports joined: ok only when every one is. */
export function merged(...reports: VerificationReport[]): VerificationReport {
  return { ok: reports.every((r) => r.ok), checks: reports.flatMap((r) => r.checks) };
}

/**
 * A saved document's signed tree head (a receipt, a liabilities proof) held
 * to `policy` by the service's own verifier: checks `policy`, `policy.log`
 * and `witnesses` (core's `verify::document_witness_report`).
 */
export async function witnessChecks(text: string, key: string | null, policy: string): Promise<VerificationReport> {
  const g = await verifier();
  return JSON.parse(g.verifyWitnessPolicy(text, key, policy)) as VerificationReport;
}

/**
 * The log key a document names (a receipt's `proof.publicKey`, a
 * liabilities proof's `log.publicKey`): only to pick which log's policy a
 * Client pins; the verifier checks the key itself.
 */
export function namedLogKey(text: string): string | undefined {
  try {
    const v = JSON.parse(text);
    const doc = v && typeof v === "object" && typeof v.success === "boolean" && v.data ? v.data : v;
    const key = doc?.proof?.publicKey ?? doc?.log?.publicKey;
    return typeof key === "string" ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The verifier's version (the service's crate version). */
export async function verifierVersion(): Promise<string> {
  return (await verifier()).version();
}
