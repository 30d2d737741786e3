// The verify page: fetches the data, then every check runs here, in the
// browser, in the WebAssembly build of the service's own `core` crate
// (verifier-wasm). Nothing in this file decides whether a proof holds: it
// fetches, hands text to the verifier, and shows the verifier's report.
import init, * as verifier from "/pkg/bvs_verifier_wasm.js";
import { byId as $, message } from "./types";
import type { Check, PublicAnswer, PublicRecord, ReceiptDoc, Report } from "./types";

const ROOT_PATTERN = /^[0-9a-fA-F]{64}$/;
/** Most answer pages fetched for one root (the API pages its records). */
const PAGES_MAX = 200;
/** Keys whose numbers are amounts: shown from their exact JSON text. */
const AMOUNT_KEYS = new Set(["delta", "netAmount", "startingBalance", "finalBalance", "netDelta"]);

/** The whole answer or its `data`, as saved from the API. */
type Saved = PublicAnswer & ReceiptDoc;
/** A tree head this browser remembers. */
interface SeenHead {
  size: number;
  root: string;
  note: string;
}
type Pins = Record<string, unknown>;
type Heads = Record<string, unknown>;
/** JSON.parse's reviver context (ES2025: the source text of a primitive). */
interface ReviverContext {
  source?: string;
}

// ---------------------------------------------------------------- what this browser remembers

/** localStorage: pinned log keys, by log origin. */
const PINS = "bvs.pinnedKeys";
/** localStorage: signed tree heads this browser has checked, by log origin. */
const HEADS = "bvs.seenHeads";
/** Most tree heads remembered per log (oldest dropped first). */
const HEADS_PER_LOG_MAX = 1000;
/** localStorage: pinned witness policies (k of n), by log origin. */
const WITNESS_PINS = "bvs.pinnedWitnesses";

function loadJson(name: string): Record<string, unknown> {
  try {
    const v = JSON.parse(localStorage.getItem(name) ?? "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch { return {}; }
}
function saveJson(name: string, value: unknown): void {
  try { localStorage.setItem(name, JSON.stringify(value)); } catch { /* storage full or off: nothing remembered */ }
}
/** The log origin a signed-note verifier key names (`origin+keyid+key`). */
const originOfKey = (key: unknown): string => String(key ?? "").split("+")[0];

/** JSON.parse that keeps amounts as their exact source text (never a float). */
function parseExact(text: string): unknown {
  const reviver = (key: string, value: unknown, context?: ReviverContext): unknown => {
    if (typeof value === "number" && AMOUNT_KEYS.has(key)) {
      return context && typeof context.source === "string" ? context.source : String(value);
    }
    return value;
  };
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

const dataOf = (doc: unknown): Saved =>
  (doc && typeof doc === "object" && "data" in doc && "success" in doc ? (doc as { data: Saved }).data : doc as Saved);

function el(tag: string, attrs: Record<string, string> = {}, ...children: unknown[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, val] of Object.entries(attrs)) {
    if (k === "class") e.className = val;
    else e.setAttribute(k, val);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return e;
}

// ---------------------------------------------------------------- witnesses

/**
 * A log's witness policy as the log list publishes it (`witnessPolicy`):
 * `quorum` of the `witnesses` (cosignature/v1 vkeys) must cosign a head.
 * Kept with the vkeys sorted, so two equal policies compare equal.
 */
interface WitnessPolicy {
  quorum: number;
  witnesses: string[];
}

/** A well-formed k-of-n policy, else null (none, or not one this page reads). */
function asPolicy(v: unknown): WitnessPolicy | null {
  if (!v || typeof v !== "object") return null;
  const p = v as { quorum?: unknown; witnesses?: unknown };
  const ws = p.witnesses;
  if (!Number.isSafeInteger(p.quorum) || !Array.isArray(ws) || ws.length === 0 || !ws.every((w) => typeof w === "string")) return null;
  return { quorum: p.quorum as number, witnesses: [...ws as string[]].sort() };
}

const samePolicy = (a: WitnessPolicy, b: WitnessPolicy): boolean => JSON.stringify(a) === JSON.stringify(b);

/** "2 of w1, w2, w3" (a vkey's name is its text before the first `+`). */
const policyWords = (p: WitnessPolicy | null): string =>
  (p ? `${p.quorum} of ${p.witnesses.map(originOfKey).join(", ")}` : "no witness policy");

/**
 * Which witness policy a log's heads are held to: the one pinned in this
 * browser for the log, else the one the log list serves, which is then
 * pinned (trust on first use, like the key). A different policy served
 * later (other witnesses, another quorum, or none) fails `pinnedWitnesses`
 * loudly and the pinned one is used. "None" is never pinned: a log that
 * publishes no policy yet has nothing to downgrade from.
 */
function pinWitnesses(origin: string, served: WitnessPolicy | null): { policy: WitnessPolicy | null; check?: Check } {
  const pins = loadJson(WITNESS_PINS);
  const pinned = asPolicy(pins[origin]);
  if (!pinned && !served) return { policy: null };
  if (!pinned && served) {
    pins[origin] = served;
    saveJson(WITNESS_PINS, pins);
    return { policy: served, check: { name: "pinnedWitnesses", ok: true, detail: `Not pinned before this visit: the witness policy ${policyWords(served)} was taken from the service's log list and is now remembered in this browser (trust on first use).` } };
  }
  const p = pinned as WitnessPolicy;
  if (served && samePolicy(p, served)) {
    return { policy: p, check: { name: "pinnedWitnesses", ok: true, detail: `Pinned in this browser: ${policyWords(p)}.` } };
  }
  return { policy: p, check: { name: "pinnedWitnesses", ok: false, detail: `The log list now publishes ${policyWords(served)} for ${origin}, but this browser pinned ${policyWords(p)} (${p.witnesses.join(" ")}); the witnesses were checked against the pinned policy.` } };
}

/**
 * The `witnesses` check (named `name`) of a signed tree head under
 * `policy`, in words: which witnesses cosigned it and which did not.
 * `nowSeconds` only for the log's latest head (cosignatures must then be
 * recent); a receipt's or answer's head counts cosignatures of any age.
 */
function witnessCheck(name: string, note: string, key: string, policy: WitnessPolicy | null, nowSeconds?: number): Check {
  if (!policy) {
    return { name, ok: true, detail: "witnesses: none configured (this log publishes no witness policy, so its heads are checked against the log's own key only)." };
  }
  const r = JSON.parse(verifier.verifyCosignatures(note, key, JSON.stringify(policy.witnesses), policy.quorum, nowSeconds)) as Report;
  // The head's own signature is the treeHead/latestHead check's to report.
  const c = r.checks.find((x) => x.name === "witnesses");
  return { name, ok: c?.ok ?? false, detail: c?.detail ?? "no witness check was made" };
}

/** One log of `GET /api/v1/logs`, as far as the page reads it. */
interface LogEntry {
  name?: string;
  origin?: string;
  verifierKey?: string;
  witnessPolicy?: unknown;
  witnessPolicyText?: string;
}

/** A policy the k-of-n form cannot say (nested groups): text only. */
const nestedOnly = (e: LogEntry | undefined): boolean =>
  !asPolicy(e?.witnessPolicy) && /^quorum\s+(?!none\s*$)\S/m.test(e?.witnessPolicyText ?? "");

/**
 * The second WebAssembly module (outside this page's size budget), with
 * core's full tlog-policy check and a public answer's agreement checks:
 * loaded only for a nested policy or an answer with an agreement side.
 */
const SECOND_MODULE = "/pkg-liabilities/bvs_verifier_wasm.js";
let second: Promise<typeof import("./verifier-liabilities")> | null = null;
const secondModule = (): Promise<typeof import("./verifier-liabilities")> => {
  second ??= import(SECOND_MODULE).then(async (m: typeof import("./verifier-liabilities")) => { await m.default(); return m; });
  return second;
};

/**
 * A checkpoint's agreement side (the customer's key bindings and signed
 * statements), checked by core in the second module (issue 41: no
 * verification in TypeScript); titled in words from what each check found.
 */
async function agreementChecks(pageText: string, logOrigin: string): Promise<Check[]> {
  let wasm: typeof import("./verifier-liabilities");
  try {
    wasm = await secondModule();
  } catch (e) {
    return [{ name: "agreement.key", ok: false, detail: `the module that checks the agreement side could not be loaded (${message(e)}): not verified here; check it with bvs-verify public.` }];
  }
  const r = JSON.parse(wasm.verifyAnswerAgreement(pageText, logOrigin)) as Report;
  return r.checks.map((c) => {
    const said = c.ok ? c.detail.match(/^(agreed|disputed) by (the customer's key \S+ at \S+):/) : null;
    if (said) return { ...c, title: `${said[1] === "agreed" ? "Agreed" : "Disputed"} by ${said[2]}` };
    if (c.ok && c.detail.startsWith("WARNING: key changed")) return { ...c, title: "Key changed, not signed by the previous key" };
    return c;
  });
}

/**
 * The `witnesses` and `latestWitnesses` checks of a nested policy (issue
 * 41: checked, never reported ok unchecked), from the log list's
 * `witnessPolicyText` by the lazily loaded module's core check; the
 * policy is the one served (the page pins only the k-of-n form).
 */
async function nestedWitnessChecks(proofHead: string, latest: string, key: string, text: string): Promise<Check[]> {
  let wasm: typeof import("./verifier-liabilities");
  try {
    wasm = await secondModule();
  } catch (e) {
    return [{ name: "witnesses", ok: false, detail: `witnesses: the log's witness policy has nested groups, and the module that checks them could not be loaded (${message(e)}): not verified here; check the head with bvs-verify --policy.` }];
  }
  const one = (name: string, note: string, now?: number): Check => {
    const r = JSON.parse(wasm.verifyWitnessPolicyText(note, key, text, now)) as Report;
    const bad = r.checks.find((c) => !c.ok);
    const w = r.checks.find((c) => c.name === "witnesses");
    const said = `${(bad ?? w)?.detail ?? "no witness check was made"} (the log list's nested policy, as served: not pinned in this browser)`;
    return { name, ok: r.ok, detail: said };
  };
  return [one("witnesses", proofHead), one("latestWitnesses", latest, Date.now() / 1000)];
}

// ---------------------------------------------------------------- words for checks

/** What a check is, and what its failure means, in plain words. */
function describe(name: string): { title: string; meaning: string } {
  const m = name.match(/^(?:pages\[\d+\]\.)?(.*)$/);
  const n = m ? m[1] : name;
  const rec = n.match(/^records\[(\d+)\]\.inclusion$/);
  if (rec) {
    return {
      title: `Record ${Number(rec[1]) + 1} is in the signed log`,
      meaning: "This record's inclusion proof does not lead to the signed tree head: the record was changed, or it is not (yet) in the log.",
    };
  }
  const d = n.match(/^deltas\[(\d+)\]\.(\w+)$/);
  if (d) {
    const i = Number(d[1]) + 1;
    const what = ({
      inclusion: [`Delta ${i} is in the signed log`, "This delta's inclusion proof does not lead to the signed tree head: the delta was changed, or it is not in the log."],
      itemHash: [`Delta ${i}'s fingerprint matches its content`, "The delta's content (amount, reason, reference, time) does not hash to the fingerprint the log holds: the content was changed."],
      proofItem: [`Delta ${i} and its proof describe the same delta`, "The delta listed and the proof attached to it disagree (anchor, fingerprint or amount): one of them was changed."],
      proof: [`Delta ${i} has a proof`, "A delta comes without its proof, so it cannot be checked."],
    } as Record<string, [string, string]>)[d[2]];
    if (what) return { title: what[0], meaning: what[1] };
  }
  if (/^agreement\.statements\[\d+\]$/.test(n)) {
    return {
      title: "The customer's statement",
      meaning: "The customer's statement is not signed by the customer's registered key, or names another checkpoint than this one: it may have been forged or altered.",
    };
  }
  const known = ({
    parse: ["The document can be read", "This is not a receipt or a verification answer of this service, or it is damaged."],
    pinnedKey: ["The log's key is the one pinned in this browser", "The service now publishes a different key for this log than the one this browser pinned. Everything was checked against the pinned key; if the log really changed its key, pin the new one only after checking it with a source you trust."],
    history: ["The log shows this browser one history", "A tree head this browser saw before and the one shown now do not belong to the same append-only log: the log has shown different histories (a fork), or rewrote its past."],
    proofRoot: ["The answer is about the proof root asked for", "The service answered about another root than the one in the address."],
    pages: ["All pages belong to the same answer", "The pages fetched describe different roots: the data is inconsistent."],
    hashScheme: ["The log's hashing rule is known", "The data names a way of hashing the log's leaves that this verifier does not know (or none), so its proofs cannot be checked: use a newer verifier."],
    publicKey: ["The log's published key is the one used", "The data names a different signing key than the one the log publishes: it may come from another log."],
    treeHead: ["The tree head is signed by the log", "The log's signature on its tree head is missing or wrong: the head may be forged or altered."],
    treeSize: ["The tree size is the signed one", "The size shown differs from the size the log signed."],
    "verification.itemsRoot": ["The listed fingerprints give the stated root", "The root stated in the answer is not the root of the fingerprints it lists."],
    itemsRoot: ["The records make up the proof root exactly", "The records listed are not exactly those the proof root commits to: one was added, removed, reordered or changed."],
    receiptId: ["The receipt id is the root of its deltas", "The receipt id is not the root over the deltas listed: the list was changed."],
    "verification.proofRoot": ["The receipt's proof root is the root of its deltas", "The proof root printed on the receipt does not match its deltas."],
    "verification.itemHashes": ["The receipt's fingerprint list matches its deltas", "The list of fingerprints does not match the deltas listed."],
    itemCount: ["Every record is here", "Fewer or more records than the summary states: the root cannot be checked over a partial list."],
    deltasCount: ["The delta count matches", "The number of deltas stated does not match those listed or their proofs."],
    netAmount: ["The amounts add up to the total", "The total shown is not the sum of the records' amounts."],
    finalBalance: ["The balance replays exactly", "Starting balance plus every delta does not give the final balance stated."],
    checkpointLeaf: ["The checkpoint's root is the root asked for", "The checkpoint committed to the log is not this root, or it is not committed yet."],
    "checkpointLeaf.inclusion": ["The checkpoint's root is in the signed log", "The checkpoint's own proof does not lead to the signed tree head."],
    verified: ["The service's status agrees", "The service itself does not (yet) report this root as verified, or a check above failed."],
    latestHead: ["The log's latest tree head is signed", "The latest head the log publishes is not signed by its key."],
    consistency: ["The log only grew since your proof", "The head your proof is into is not part of the log's latest history: the log was rewritten."],
    oldTreeHead: ["The older tree head is signed", "The older tree head's signature does not verify."],
    newTreeHead: ["The newer tree head is signed", "The newer tree head's signature does not verify."],
    pinnedWitnesses: ["The log's witness policy is the one pinned in this browser", "The service now publishes another witness policy for this log (other witnesses, another quorum, or none) than the one this browser pinned. The heads were checked against the pinned policy. Dropping or swapping witnesses is how a log would hide a split view: pin a new policy only after checking it with a source you trust."],
    witnesses: ["Independent witnesses cosigned the tree head", "Fewer of the log's witnesses than its quorum cosigned the tree head this proof is into: no independent party has yet confirmed that everyone sees this same history. A new head may not be cosigned yet: try again in a minute. If it stays so, the log may be showing you a history the witnesses did not see."],
    latestWitnesses: ["Witnesses recently cosigned the log's latest tree head", "Fewer of the log's witnesses than its quorum cosigned the latest tree head within the last hour: the log may be keeping this browser on a view of its own, or its witnesses are not reachable."],
    "agreement.key": ["The customer's key is bound to this ledger", "The customer's key binding is not signed by the key it names, or names another ledger or log: the key shown may have been swapped."],
    network: ["The data could be fetched", "The page could not fetch what it needs to check, so nothing was verified."],
  } as Record<string, [string, string]>)[n];
  return known ? { title: known[0], meaning: known[1] } : { title: n, meaning: "This check failed." };
}

function renderChecks(list: HTMLElement, checks: Check[]): void {
  list.replaceChildren();
  for (const c of checks) {
    const { title: named, meaning } = describe(c.name);
    const title = c.title ?? named;
    const li = el("li", { class: `check ${c.ok ? "pass" : "fail"}`, "data-name": c.name, "data-ok": String(c.ok) },
      el("div", { class: "head" },
        el("span", { class: "state" }, c.ok ? "✔ Passed" : "✘ Failed"),
        el("span", { class: "title" }, title),
        el("span", { class: "name mono" }, c.name)),
      el("p", { class: "detail" }, c.detail));
    if (!c.ok) li.append(el("p", { class: "meaning" }, el("strong", {}, "What this means: "), meaning));
    list.append(li);
  }
}

function renderVerdict(box: HTMLElement, checks: Check[], what: string): void {
  const failed = checks.filter((c) => !c.ok);
  const ok = checks.length > 0 && failed.length === 0;
  box.className = `verdict ${ok ? "pass" : "fail"}`;
  box.dataset.ok = String(ok);
  box.replaceChildren(
    el("span", { class: "icon", "aria-hidden": "true" }, ok ? "✔" : "✘"),
    el("span", { class: "words" },
      ok ? `Verified: all ${checks.length} checks passed` : `Not verified: ${failed.length} of ${checks.length} checks failed`,
      el("span", { class: "sub" }, ok
        ? `${what} is exactly what the log signed, checked here in your browser.`
        : `First failure: ${describe(failed[0]?.name ?? "").title}. See the details below.`)));
}

function renderSummary(dl: HTMLElement, rows: [string, unknown][]): void {
  dl.replaceChildren();
  for (const [k, val] of rows) {
    if (val === undefined || val === null || val === "") continue;
    dl.append(el("dt", {}, k), el("dd", {}, val));
  }
  dl.hidden = dl.children.length === 0;
}

/** What a signed note says (for display only; the verifier checks it). */
function noteBody(note: unknown): { origin: string; size: number; root: string } {
  const lines = String(note ?? "").split("\n");
  let root = "";
  try {
    root = Array.from(atob(lines[2] ?? ""), (ch) => ch.charCodeAt(0).toString(16).padStart(2, "0")).join("");
  } catch { root = lines[2] ?? ""; }
  return { origin: lines[0] ?? "", size: Number(lines[1]), root };
}

/** An ISO time as "2026-11-22 05:43:47 UTC" (short enough for a phone). */
const when = (iso: unknown): string => (iso ? String(iso).replace("T", " ").replace(/(\.\d+)?Z$/, " UTC") : "");

// ---------------------------------------------------------------- online: /verify/<root>

async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { headers: { accept: "application/json, text/plain" } });
  const text = await r.text();
  return { status: r.status, text };
}

interface Fetched {
  status: number;
  text?: string;
  pages?: string[];
  answer?: Saved;
  records?: PublicRecord[];
}

async function fetchPages(root: string): Promise<Fetched> {
  const first = await fetchText(`/api/v1/verify/${root}`);
  if (first.status !== 200) return { status: first.status, text: first.text };
  const pages = [first.text];
  const answer = dataOf(parseExact(first.text));
  const records = [...(answer.records ?? [])];
  const total = Number(answer.summary?.itemCount ?? records.length);
  while (records.length < total && pages.length < PAGES_MAX) {
    const next = await fetchText(`/api/v1/verify/${root}?offset=${records.length}`);
    if (next.status !== 200) break;
    const more = dataOf(parseExact(next.text)).records ?? [];
    if (more.length === 0) break;
    pages.push(next.text);
    records.push(...more);
  }
  return { status: 200, pages, answer, records };
}

async function runOnline(root: string): Promise<void> {
  $("online").hidden = false;
  $("root-text").textContent = root;
  const verdict = $("verdict");
  const done = (checks: Check[], what: string): void => {
    renderChecks($("checks"), checks);
    renderVerdict(verdict, checks, what);
    document.body.dataset.state = "done";
  };
  if (!ROOT_PATTERN.test(root)) {
    done([{ name: "parse", ok: false, detail: `"${root}" is not a proof root: a proof root is 64 hexadecimal characters.` }], "");
    return;
  }
  let got: Fetched, key: string, latest: string, served: string | undefined, env: string, logs: LogEntry[];
  try {
    got = await fetchPages(root);
    if (got.status !== 200) {
      const why = got.status === 404 ? "the service has issued no such proof root" : `the service answered HTTP ${got.status}`;
      done([{ name: "network", ok: false, detail: `Fetching /api/v1/verify/${root}: ${why}.` }], "");
      return;
    }
    // The log (shard) the answer names; an answer from before sharding
    // names only its environment, whose log is shard 0's.
    env = logName(got.answer ?? {});
    const [k, h, l] = await Promise.all([fetchText(`/api/v1/log/${env}/key`), fetchText(`/api/v1/log/${env}/checkpoint`), fetchText("/api/v1/logs")]);
    served = (dataOf(JSON.parse(k.text)) as { verifierKey?: string })?.verifierKey;
    latest = h.text;
    if (!served || h.status !== 200 || l.status !== 200) throw new Error(`the log's key, latest head or the log list could not be fetched (HTTP ${k.status}, ${h.status}, ${l.status})`);
    logs = (dataOf(JSON.parse(l.text)) as { logs?: LogEntry[] })?.logs ?? [];
  } catch (e) {
    done([{ name: "network", ok: false, detail: message(e) }], "");
    return;
  }

  // Which key: the one pinned in this browser, else the served one, which
  // is then remembered (trust on first use) and said to be so.
  const origin = originOfKey(served);
  const pins: Pins = loadJson(PINS);
  const pinned = typeof pins[origin] === "string" ? pins[origin] as string : null;
  key = pinned ?? served;
  let pinCheck: Check;
  if (!pinned) {
    pins[origin] = served;
    saveJson(PINS, pins);
    pinCheck = { name: "pinnedKey", ok: true, detail: `Not pinned before this visit: the key ${served} was taken from the service itself and is now remembered in this browser (trust on first use). Compare it with a copy you trust, or pin another below.` };
  } else if (pinned === served) {
    pinCheck = { name: "pinnedKey", ok: true, detail: `Pinned in this browser: ${pinned}` };
  } else {
    pinCheck = { name: "pinnedKey", ok: false, detail: `The service publishes ${served} for ${origin}, but this browser pinned ${pinned}; every check below used the pinned key.` };
  }
  showPin(pinned ? (pinned === served ? "pinned" : "differs") : "first-use", key);
  // The witness policy: pinned like the key, from the log list's entry
  // for this log (found by its origin).
  const entry = logs.find((x) => x.origin === origin);
  const witnesses = pinWitnesses(origin, asPolicy(entry?.witnessPolicy));
  if (witnesses.check && !witnesses.check.ok) offerWitnessPin(origin, asPolicy(entry?.witnessPolicy));

  // Every check, locally.
  const answer: Saved = got.answer ?? {};
  const report = JSON.parse(verifier.verifyPublicAnswer(JSON.stringify(got.pages), root, key)) as Report;
  const checks: Check[] = [pinCheck, ...(witnesses.check ? [witnesses.check] : []), ...report.checks];
  const latestReport = JSON.parse(verifier.verifyTreeHead(latest, key)) as Report;
  checks.push(...latestReport.checks.map((c) => ({ ...c, name: "latestHead" })));
  const proofHead = answer.verification?.treeHead ?? "";
  const a = noteBody(proofHead), b = noteBody(latest);
  if (latestReport.ok && Number.isSafeInteger(a.size) && Number.isSafeInteger(b.size)) {
    const [older, newer] = a.size <= b.size ? [proofHead, latest] : [latest, proofHead];
    const [from, to] = [Math.min(a.size, b.size), Math.max(a.size, b.size)];
    let proof: string[] = [];
    if (from !== to && from > 0) {
      const c = await fetchText(`/api/v1/log/${env}/proof/consistency?from=${from}&to=${to}`).catch(() => null);
      proof = c && c.status === 200 ? (dataOf(JSON.parse(c.text)) as { consistencyProof?: string[] })?.consistencyProof ?? [] : [];
    }
    const cons = JSON.parse(verifier.verifyConsistency(older, newer, JSON.stringify(proof), key)) as Report;
    checks.push(...cons.checks.filter((c) => c.name === "consistency" || !c.ok));
    if (checks.every((c) => c.ok)) checks.push(await checkHistory(origin, key, env, [proofHead, latest]));
  }
  // Cosignatures (after the history, which a head not yet witnessed must
  // not keep from being checked and remembered): the proof's head at any
  // age, the latest head only if cosigned within the last hour.
  if (!witnesses.policy && nestedOnly(entry)) {
    checks.push(...await nestedWitnessChecks(proofHead, latest, key, entry?.witnessPolicyText ?? ""));
  } else {
    checks.push(witnessCheck("witnesses", proofHead, key, witnesses.policy));
    if (witnesses.policy) checks.push(witnessCheck("latestWitnesses", latest, key, witnesses.policy, Date.now() / 1000));
  }

  if (answer.agreement) {
    checks.push(...await agreementChecks(got.pages?.[0] ?? "", origin));
  }

  const s = answer.summary ?? {};
  renderSummary($("summary"), [
    ["What", `${s.kind ?? "?"} in the ${logName(answer)} log`],
    ["Status", s.status],
    ["Items", s.itemCount],
    ["Net amount", s.amountsWithheld ? "withheld (the root spans several customers)" : s.netAmount],
    ["Also issued as", (s.issuedAs ?? []).slice(1).join(", ") || undefined],
    ["Records check", s.recordsCheck],
    ["Period", s.period],
    ["First verified", when(s.firstVerifiedAt)],
    ["Last verified", when(s.lastVerifiedAt)],
    ["Tree size", a.size],
    ["Tree head root", a.root],
    ["Signed by", a.origin],
    ["Log key", key],
    ["Witnesses", policyWords(witnesses.policy)],
    ["Hash scheme", answer.verification?.hashScheme],
    ["Latest tree size", b.size],
  ]);
  renderRecords(got.records ?? [], checks);
  done(checks, `The ${s.kind ?? "proof"} of ${s.itemCount ?? 0} item(s)`);
}

/** The name of the log an answer is proven in (`sandbox`, `production-1`). */
function logName(answer: Saved): string {
  const name = answer?.verification?.log?.name;
  if (typeof name === "string" && /^(sandbox|production)(-[1-9][0-9]*)?$/.test(name)) return name;
  return answer?.summary?.environment === "production" ? "production" : "sandbox";
}

/** The consistency proof between two recorded sizes, from the log. */
async function consistencyProof(env: string, from: number, to: number): Promise<string[]> {
  if (from === 0 || from === to) return [];
  const c = await fetchText(`/api/v1/log/${env}/proof/consistency?from=${from}&to=${to}`);
  if (c.status !== 200) throw new Error(`no consistency proof from ${from} to ${to} (HTTP ${c.status})`);
  return (dataOf(JSON.parse(c.text)) as { consistencyProof?: string[] })?.consistencyProof ?? [];
}

/**
 * Each new head against every head this browser saw of the log before (as
 * the Go checksum database client does): a size seen before must have the
 * same root; any other head must be a prefix of the nearest seen head above
 * it, or extend the largest one, by a consistency proof checked here. Heads
 * that pass are remembered; nothing is remembered from a failed check.
 */
async function checkHistory(origin: string, key: string, env: string, notes: string[]): Promise<Check> {
  const all: Heads = loadJson(HEADS);
  const kept = all[origin];
  const seen: SeenHead[] = Array.isArray(kept) ? (kept as SeenHead[]).filter((h) => Number.isSafeInteger(h?.size)) : [];
  const before = seen.length;
  try {
    for (const note of notes) {
      const h = noteBody(note);
      const same = seen.find((s) => s.size === h.size);
      if (same) {
        if (same.root !== h.root) {
          return { name: "history", ok: false, detail: `FORK: this browser saw a tree of size ${h.size} with root ${same.root}; the log now signs root ${h.root} for that size.` };
        }
        continue;
      }
      const above = seen.filter((s) => s.size > h.size).sort((x, y) => x.size - y.size)[0];
      const below = seen.filter((s) => s.size < h.size).sort((x, y) => y.size - x.size)[0];
      const pair = above ? [note, above] : below ? [below, note] : null;
      if (pair) {
        const remembered = above ?? below;
        // The root this browser remembers is the authority for that size.
        if (noteBody(remembered.note).root !== remembered.root) {
          return { name: "history", ok: false, detail: `FORK: this browser saw a tree of size ${remembered.size} with root ${remembered.root}, which is not the head it kept for that size.` };
        }
        const [older, newer] = pair.map((x) => (typeof x === "string" ? x : x.note));
        const [m, n] = [noteBody(older).size, noteBody(newer).size];
        const r = JSON.parse(verifier.verifyConsistency(older, newer, JSON.stringify(await consistencyProof(env, m, n)), key)) as Report;
        if (!r.ok) {
          const why = r.checks.find((c) => !c.ok);
          return { name: "history", ok: false, detail: `FORK: the tree head of size ${h.size} is not consistent with the head of size ${above ? above.size : below.size} this browser saw before (${why?.name}: ${why?.detail}).` };
        }
      }
      seen.push({ size: h.size, root: h.root, note });
      seen.sort((x, y) => x.size - y.size);
    }
  } catch (e) {
    return { name: "history", ok: false, detail: `The history this browser keeps could not be checked: ${message(e)}` };
  }
  all[origin] = seen.slice(-HEADS_PER_LOG_MAX);
  saveJson(HEADS, all);
  return { name: "history", ok: true, detail: before === 0
    ? `First visit for this log: its tree heads are now remembered in this browser, and every later head is checked against them.`
    : `Consistent with the ${before} tree head(s) of this log that this browser saw before.` };
}

/** Says plainly whether the log's key is pinned, and offers to pin one. */
function showPin(state: "first-use" | "pinned" | "differs", key: string): void {
  const box = document.getElementById("pin");
  if (!box) return;
  box.hidden = false;
  box.dataset.state = state;
  $("pin-status").textContent = {
    "first-use": `This log's key was not pinned in this browser: it was taken from the service on this visit and is remembered from now on (trust on first use). To be sure, compare it with a copy from a source you trust, or paste that key below.`,
    pinned: `This log's key is pinned in this browser.`,
    differs: `The service now publishes a different key for this log than the one pinned in this browser. The proof was checked against the pinned key.`,
  }[state];
  $<HTMLInputElement>("pin-key").value = key;
}

/**
 * When the served witness policy differs from the pinned one: says so
 * by the pin box, and offers to pin the served one (or to forget the pin
 * when the log now publishes none), for a user who checked the change
 * with a source they trust. Nothing is pinned without that click.
 */
function offerWitnessPin(origin: string, served: WitnessPolicy | null): void {
  const box = document.getElementById("pin-witnesses-box");
  if (!box) return;
  box.hidden = false;
  $("pin-witnesses-status").textContent = `The log list now publishes ${policyWords(served)} for this log, not the witness policy pinned in this browser. Pin it only after checking the change with a source you trust. `;
  $("pin-witnesses").addEventListener("click", () => {
    const pins = loadJson(WITNESS_PINS);
    if (served) pins[origin] = served;
    else delete pins[origin];
    saveJson(WITNESS_PINS, pins);
    location.reload();
  });
}

function wirePin(): void {
  const form = document.getElementById("pin-form");
  if (!form) return;
  // Not a submit button: the page's one submit button is the offline form's.
  form.addEventListener("submit", (e) => e.preventDefault());
  $("pin-save").addEventListener("click", () => {
    const key = $<HTMLInputElement>("pin-key").value.trim();
    if (!/^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/.test(key)) {
      $("pin-status").textContent = "That is not a signed-note verifier key (origin+keyid+key).";
      return;
    }
    const pins = loadJson(PINS);
    pins[originOfKey(key)] = key;
    saveJson(PINS, pins);
    location.reload();
  });
}

function renderRecords(records: PublicRecord[], checks: Check[]): void {
  const body = $<HTMLTableElement>("records").tBodies[0];
  body.replaceChildren();
  const byName = new Map(checks.map((c) => [c.name, c]));
  records.forEach((r, i) => {
    const c = byName.get(`records[${i}].inclusion`);
    const ok = c?.ok === true;
    body.append(el("tr", {},
      el("td", {}, i + 1),
      el("td", { class: "mono" }, r.anchorId),
      el("td", { class: "amount mono" }, r.delta ?? "withheld"),
      el("td", {}, when(r.declaredTimestamp)),
      el("td", {}, when(r.blockTimestamp) || "not yet"),
      el("td", { class: "mono" }, r.leafIndex ?? "—"),
      el("td", { class: ok ? "ok" : "bad" }, ok ? "✔ Yes" : "✘ No")));
  });
  $("records-block").hidden = records.length === 0;
}

// ---------------------------------------------------------------- offline: a pasted receipt

/** The `asOf` answer a pasted derive answer carries (issue 43), if any. */
interface AsOfDoc {
  at?: string;
  basis?: string;
  balance?: unknown;
  deltasCount?: number;
  lastDelta?: string | null;
  proof?: { publicKey?: string; treeHead?: string };
}

/**
 * A pasted balance as of a moment (derive's answer with `asOf`): checked
 * by core's `verify_as_of` in the second module (outside this page's size
 * budget), as `bvs-verify as-of` checks it.
 */
async function runAsOf(text: string, doc: { customerId?: string; asset?: string; asOf: AsOfDoc }): Promise<void> {
  const a = doc.asOf;
  const named = a.proof?.publicKey;
  const remembered = named ? loadJson(PINS)[originOfKey(named)] : undefined;
  const pasted = $<HTMLInputElement>("receipt-key").value.trim();
  const key = pasted || (typeof remembered === "string" ? remembered : undefined);
  let checks: Check[];
  try {
    const wasm = await secondModule();
    checks = (JSON.parse(wasm.verifyAsOf(text, key)) as Report).checks;
  } catch (e) {
    checks = [{ name: "asOf", ok: false, detail: `the module that checks an as-of answer could not be loaded (${message(e)}): not verified here; check it with bvs-verify as-of.` }];
  }
  $("offline-result").hidden = false;
  const head = noteBody(a.proof?.treeHead);
  renderSummary($("offline-summary"), [
    ["Customer", doc.customerId],
    ["Asset", doc.asset ?? "the default asset"],
    ["Balance", `${a.balance} as of ${when(a.at)} (by ${a.basis === "declared" ? "declared" : "verification"} time)`],
    ["Deltas", a.deltasCount],
    ["Last delta", a.lastDelta ?? "none"],
    ["Tree size", Number.isFinite(head.size) ? head.size : ""],
    ["Signed by", head.origin],
    ["Key", key ? `${key} (${pasted ? "pinned here" : "pinned in this browser"})` : named ? `${named} (named by the answer, NOT pinned: paste the log's key to be sure)` : ""],
  ]);
  renderChecks($("offline-checks"), checks);
  renderVerdict($("offline-verdict"), checks, "This balance");
  document.body.dataset.offline = "done";
}

function runOffline(text: string): void {
  let doc: Saved | null = null;
  try { doc = dataOf(parseExact(text)); } catch { /* the verifier reports it */ }
  const asOf = (doc as unknown as { asOf?: AsOfDoc } | null)?.asOf;
  if (doc && asOf && typeof asOf === "object" && asOf.proof) {
    void runAsOf(text, doc as unknown as { customerId?: string; asset?: string; asOf: AsOfDoc });
    return;
  }
  // A pasted key wins; else the key this browser pinned for the log the
  // document names; else none (the verifier says it is not pinned).
  const named = doc?.proof?.publicKey ?? doc?.verification?.publicKey;
  const remembered = named ? loadJson(PINS)[originOfKey(named)] : undefined;
  const pasted = $<HTMLInputElement>("receipt-key").value.trim();
  const key = pasted || (typeof remembered === "string" ? remembered : undefined);
  const isAnswer = !!doc && typeof doc === "object" && "summary" in doc && "records" in doc;
  const report = JSON.parse(isAnswer
    ? verifier.verifyPublicAnswer(JSON.stringify([text]), undefined, key)
    : verifier.verifyReceipt(text, key)) as Report;
  // Witnesses: the policy pinned in this browser for the document's log
  // (a saved document's cosignatures count at any age).
  const signedHead = (isAnswer ? doc?.verification?.treeHead : doc?.proof?.treeHead) ?? "";
  const policy = named ? asPolicy(loadJson(WITNESS_PINS)[originOfKey(named)]) : null;
  if (policy && named) {
    report.checks.push(witnessCheck("witnesses", signedHead, key ?? named, policy));
  } else {
    report.checks.push({ name: "witnesses", ok: true, detail: `witnesses: not checked (no witness policy is pinned in this browser for ${named ? originOfKey(named) : "this log"}: open the proof's /verify page once to pin the log's policy, or use bvs-verify --policy).` });
  }
  $("offline-result").hidden = false;
  if (doc && !isAnswer && typeof doc === "object") {
    const head = noteBody(doc.proof?.treeHead);
    renderSummary($("offline-summary"), [
      ["Customer", doc.customerId],
      ["Period", doc.period],
      ["Deltas", doc.deltasCount ?? doc.deltaCount],
      ["Starting balance", doc.startingBalance],
      ["Final balance", doc.finalBalance],
      ["Generated", when(doc.generatedAt)],
      ["Receipt id", doc.receiptId],
      ["Tree size", Number.isFinite(head.size) ? head.size : ""],
      ["Signed by", head.origin],
      ["Hash scheme", doc.proof?.hashScheme],
      ["Key", key ? `${key} (${pasted ? "pinned here" : "pinned in this browser"})` : doc.proof?.publicKey ? `${doc.proof.publicKey} (named by the receipt, NOT pinned: paste the log's key to be sure)` : ""],
    ]);
  } else if (isAnswer && doc) {
    renderSummary($("offline-summary"), [
      ["What", `${doc.summary?.kind} in the ${doc.summary?.environment} log`],
      ["Items", doc.summary?.itemCount],
      ["Net amount", doc.summary?.netAmount],
      ["Proof root", doc.summary?.proofRoot],
      ["Hash scheme", doc.verification?.hashScheme],
    ]);
  } else {
    renderSummary($("offline-summary"), []);
  }
  renderChecks($("offline-checks"), report.checks);
  renderVerdict($("offline-verdict"), report.checks, isAnswer ? "This answer" : "This receipt");
  document.body.dataset.offline = "done";
}

function wireOffline(): void {
  const text = $<HTMLTextAreaElement>("receipt-text");
  $("offline-form").addEventListener("submit", (e) => {
    e.preventDefault();
    runOffline(text.value);
  });
  const load = async (file: File | undefined): Promise<void> => {
    if (!file) return;
    text.value = await file.text();
    runOffline(text.value);
  };
  $("receipt-file").addEventListener("change", (e) => load((e.target as HTMLInputElement).files?.[0]));
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e: DragEvent) => {
    e.preventDefault();
    drop.classList.remove("over");
    load(e.dataTransfer?.files?.[0]);
  });
}

// ---------------------------------------------------------------- start

async function main(): Promise<void> {
  await init();
  $("version").textContent = `bvs-verifier-wasm ${verifier.version()}`;
  wireOffline();
  wirePin();
  const m = location.pathname.match(/^\/verify\/([^/]+)\/?$/);
  if (m) await runOnline(decodeURIComponent(m[1]));
  else document.body.dataset.state = "done";
}

main().catch((e) => {
  const v = $("verdict");
  $("online").hidden = false;
  v.className = "verdict fail";
  v.dataset.ok = "false";
  v.textContent = `✘ The verifier could not start: ${message(e)}`;
  document.body.dataset.state = "done";
});
