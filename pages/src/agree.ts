// The customer's side of two-party agreement (docs/agreement.md): open a
// vendor's invitation (token in the URL fragment), make an Ed25519 key in
// the browser (WebCrypto), register its public key with a self-signed
// `bvs-agreement/v1 key` statement, then sign a period's balance statement,
// or a dispute naming the first delta the customer disagrees with.
// The private key is a non-extractable WebCrypto key kept in this
// browser's IndexedDB (per ledger): the page can sign with it, but no
// script, the page's own included, can read its bytes out (issue 25). It
// is never sent anywhere. Keys an earlier version of the page kept in
// localStorage (PKCS#8) are moved there on load and removed.
import { byId as $, message } from "./types";
import type { Agreement, PublicAnswer, PublicRecord, StatementView } from "./types";

const KEY_NAME = "customer";
/** The localStorage prefix of keys kept by earlier versions (PKCS#8). */
const LEGACY_STORE = "bvs-agreement-key:";
/** IndexedDB: database, object store (one record per ledger id). */
const DB_NAME = "bvs-agreement";
const DB_STORE = "keys";
const enc = new TextEncoder();

const b64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const hex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

interface Invitation {
  origin: string;
  ledgerId: string;
  expiresAt: string;
}

interface KeyView {
  counterpartyKey: string;
  itemHash: string;
}

/** What the statements route answers. */
interface Recorded {
  counterpartyKey: string;
  recordedAt: string;
  itemHash: string;
  /** The inclusion co-signed in the same step, if one was sent. */
  liabilities?: { statementHash: string; itemHash: string };
}

/** A key kept in this browser. */
interface LocalKey {
  privateKey: CryptoKey;
  id: Uint8Array;
  verifierKey: string;
}

async function api<T>(path: string, body?: unknown): Promise<T> {
  const r = await fetch(path, body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(json.message || `HTTP ${r.status}`);
  return json.data as T;
}

/** `<name>+<key id hex>+<base64(0x01 || public key)>`, the signed-note form. */
async function verifierKey(publicRaw: Uint8Array): Promise<{ text: string; id: Uint8Array }> {
  const material = new Uint8Array([0x01, ...publicRaw]);
  const idInput = new Uint8Array([...enc.encode(`${KEY_NAME}\n`), ...material]);
  const id = new Uint8Array(await crypto.subtle.digest("SHA-256", idInput)).slice(0, 4);
  return { text: `${KEY_NAME}+${hex(id)}+${b64(material)}`, id };
}

/** A C2SP signed note: the text, a blank line, one signature line. */
async function signNote(text: string, privateKey: CryptoKey, id: Uint8Array): Promise<string> {
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", privateKey, enc.encode(text)));
  return `${text}\n\u2014 ${KEY_NAME} ${b64(new Uint8Array([...id, ...sig]))}\n`;
}

/** The page's IndexedDB database. */
function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(DB_STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** One request of a transaction on the keys store. */
async function keys<T>(mode: IDBTransactionMode, act: (s: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const req = act(db.transaction(DB_STORE, mode).objectStore(DB_STORE));
      req.onsuccess = () => resolve(req.result as T);
      req.onerror = () => reject(req.error);
    });
  } finally {
    db.close();
  }
}

async function saveKey(ledgerId: string, key: LocalKey): Promise<void> {
  await keys<unknown>("readwrite", (s) => s.put(key, ledgerId));
}

async function loadKey(ledgerId: string): Promise<LocalKey | null> {
  return (await keys<LocalKey | undefined>("readonly", (s) => s.get(ledgerId))) ?? null;
}

/** Moves keys an earlier version kept in localStorage (PKCS#8, readable
 * by any script of this origin) into IndexedDB as non-extractable keys. */
async function migrateLegacyKeys(): Promise<void> {
  for (const name of Object.keys(localStorage).filter((k) => k.startsWith(LEGACY_STORE))) {
    const saved = localStorage.getItem(name);
    if (!saved) continue;
    const k = JSON.parse(saved) as { pkcs8: string; id: string; verifierKey: string };
    const privateKey = await crypto.subtle.importKey("pkcs8", unb64(k.pkcs8), "Ed25519", false, ["sign"]);
    await saveKey(name.slice(LEGACY_STORE.length), { privateKey, id: unb64(k.id), verifierKey: k.verifierKey });
    localStorage.removeItem(name);
  }
}

async function register(token: string, invitation: Invitation): Promise<void> {
  // Not extractable: the private key can sign here, and never be read out.
  const pair = await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"]) as CryptoKeyPair;
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const vk = await verifierKey(publicRaw);
  const text = `bvs-agreement/v1 key\norigin ${invitation.origin}\nledger ${invitation.ledgerId}\nkey ${vk.text}\n`;
  const statement = await signNote(text, pair.privateKey, vk.id);
  await saveKey(invitation.ledgerId, { privateKey: pair.privateKey, id: vk.id, verifierKey: vk.text });
  const done = await api<KeyView>("/api/v1/agreement/keys", { token, statement });
  $("key-status").textContent = `Registered: your key ${done.counterpartyKey} (log item ${done.itemHash}).`;
  $("key-status").dataset.state = "registered";
  $<HTMLButtonElement>("register").disabled = true;
}

function showStatements(agreement: Agreement): void {
  const list = $("statements");
  list.replaceChildren();
  for (const w of agreement.keyWarnings ?? []) {
    const li = document.createElement("li");
    li.className = "warning";
    li.textContent = `Warning: ${w}`;
    list.append(li);
  }
  for (const s of agreement.statements as StatementView[]) {
    const li = document.createElement("li");
    li.textContent = s.kind === "balance"
      ? `Agreed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}`
      : `Disputed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}`;
    list.append(li);
  }
}

// ------------------------------------------------------------------ exact amounts

/** Amounts as BigInt units of 10^-18 (the API's 18 decimal places). */
const SCALE = 18;
function toUnits(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,18}))?$/.exec(String(text));
  if (!m) throw new Error(`not a plain decimal amount: ${text}`);
  const units = BigInt(m[2] + (m[3] || "").padEnd(SCALE, "0"));
  return m[1] ? -units : units;
}

/** The API's canonical form: plain, no exponent, no trailing zeros. */
function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(SCALE + 1, "0");
  const whole = digits.slice(0, -SCALE);
  const fraction = digits.slice(-SCALE).replace(/0+$/, "");
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative && text !== "0" ? `-${text}` : text;
}

/** JSON.parse's reviver context (ES2025: the source text of a primitive). */
interface ReviverContext {
  source?: string;
}

/** JSON.parse, `delta` and `balance` numbers kept as their exact text. */
function parseExact(text: string): any {
  // JSON.parse hands the reviver each number's source text (ES2025).
  const reviver = (key: string, value: unknown, context?: ReviverContext): unknown =>
    typeof value === "number" && (key === "delta" || key === "balance")
      ? (context && typeof context.source === "string" ? context.source : String(value))
      : value;
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

/** GET a public JSON answer, amounts kept as their exact text. */
async function exact<T>(path: string): Promise<T> {
  const r = await fetch(path);
  const text = await r.text();
  const json = parseExact(text);
  if (!r.ok) throw new Error(json.message || `HTTP ${r.status}`);
  return json.data as T;
}

/** Every record of a checkpoint's public answer, in ledger order. */
async function records(root: string, count: number): Promise<PublicRecord[]> {
  const all: PublicRecord[] = [];
  while (all.length < count) {
    const page = await exact<PublicAnswer>(`/api/v1/verify/${encodeURIComponent(root)}?offset=${all.length}&limit=1000`);
    const more = page.records ?? [];
    if (!more.length) break;
    all.push(...more);
  }
  return all;
}

// ------------------------------------------------------------------ dispute

/** The dispute statement text for the choice made on the page. */
function disputeText(a: Agreement, deltas: PublicRecord[]): string | null {
  const choice = document.querySelector<HTMLInputElement>("input[name=d-delta]:checked");
  if (!choice) return null;
  const at = Number(choice.value);
  const kind = $<HTMLSelectElement>("d-kind").value;
  if (kind !== "extra" && at >= deltas.length) return null;
  let id: string;
  if (kind === "extra") {
    const own = $<HTMLInputElement>("d-own").value.trim().replace(/\s+/g, " ");
    if (!own) return null;
    id = `referenceId ${own}`;
  } else {
    // A checkpoint's records show item hashes (only a batch root's
    // withheld answer hides them, issue 40, and no agreement is on one).
    const hash = deltas[at].itemHash;
    if (!hash) return null;
    id = `itemHash ${hash}`;
  }
  // The balance both agree on before the chosen delta: the closing
  // balance less the service's deltas from it on.
  let agreed = toUnits(a.balance);
  for (const d of deltas.slice(at)) agreed -= toUnits(d.delta ?? "0");
  return `bvs-agreement/v1 dispute\norigin ${a.origin}\nledger ${a.ledgerId}\nperiod ${a.period}\n`
    + `root ${a.merkleRoot}\ndeltas ${a.deltaCount}\ndivergence ${kind}\nafter ${at}\n`
    + `delta ${id}\nagreed ${fromUnits(agreed)}\n`;
}

function showDispute(a: Agreement, deltas: PublicRecord[]): void {
  const list = $("d-deltas");
  list.replaceChildren();
  const option = (value: number, label: string): void => {
    const li = document.createElement("li");
    const input = document.createElement("input");
    Object.assign(input, { type: "radio", name: "d-delta", value: String(value) });
    const text = document.createElement("label");
    text.append(input, ` ${label}`);
    li.append(text);
    list.append(li);
  };
  deltas.forEach((d, i) => option(i, `${d.delta ?? "withheld"} (anchorId ${d.anchorId}, itemHash ${(d.itemHash ?? "withheld").slice(0, 16)}…)`));
  option(deltas.length, "after the last delta (only for a delta I have and the service does not)");
  const update = (): void => {
    $("d-own-label").hidden = $<HTMLSelectElement>("d-kind").value !== "extra";
    const text = disputeText(a, deltas);
    $("d-statement").textContent = text || "";
    $<HTMLButtonElement>("dispute").disabled = !text;
  };
  list.onchange = update;
  $("d-kind").onchange = update;
  $("d-own").oninput = update;
  update();
  $("dispute").onclick = () => dispute(a, deltas).catch(fail("period-status"));
}

/** The key kept in this browser for the ledger, checked against the one registered. */
async function ownKey(a: Agreement): Promise<LocalKey> {
  const key = await loadKey(a.ledgerId);
  if (!key) throw new Error("No key for this ledger in this browser: open your invitation first.");
  if (a.counterpartyKey !== key.verifierKey) throw new Error("The ledger's registered key is not the one in this browser.");
  return key;
}

async function dispute(a: Agreement, deltas: PublicRecord[]): Promise<void> {
  const key = await ownKey(a);
  const text = disputeText(a, deltas);
  if (!text) throw new Error("Choose the first delta you disagree with.");
  const statement = await signNote(text, key.privateKey, key.id);
  const s = await api<Recorded>("/api/v1/agreement/statements", { statement });
  $("period-status").textContent = `Disputed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}; log item ${s.itemHash}.`;
  $("period-status").dataset.state = "disputed";
  await loadPeriod(a.merkleRoot);
}

async function loadPeriod(root: string): Promise<void> {
  const answer = await exact<PublicAnswer>(`/api/v1/verify/${encodeURIComponent(root)}`);
  const a = answer.agreement;
  if (!a) throw new Error("This root is not a committed checkpoint of one customer.");
  $("p-period").textContent = a.period;
  $("p-deltas").textContent = String(a.deltaCount);
  $("p-balance").textContent = String(a.balance);
  // A named asset's checkpoint (issue 43): its root covers that asset's
  // deltas only, each record names it.
  const asset = (answer.records?.[0] as { asset?: string } | undefined)?.asset;
  $("p-asset").textContent = asset ? ` ${asset}` : "";
  $("p-statement").textContent = a.balanceStatement;
  $("period-details").hidden = false;
  showStatements(a);
  $("agree").onclick = () => agree(a).catch(fail("period-status"));
  showLiabilities(a).catch(fail("liabilities-status"));
  showDispute(a, await records(root, a.deltaCount));
}

/** The liabilities check's module, loaded the first time a proof is checked. */
const LIABILITIES_MODULE = "/pkg-liabilities/bvs_verifier_wasm.js";

/** The log key the verify page pinned in this browser for `origin`, if any. */
function pinnedKey(origin: string): string | undefined {
  try {
    const pins = JSON.parse(localStorage.getItem("bvs.pinnedKeys") ?? "{}") as Record<string, unknown>;
    const key = pins?.[origin];
    return typeof key === "string" ? key : undefined;
  } catch { return undefined; }
}

/**
 * The customer's proof of liabilities for the checkpoint's period
 * (docs/liabilities.md §10): fetched by the checkpoint's root, checked in
 * WebAssembly (the module loads only now), and shown as the sentence
 * "your balance of … is counted in a total of … owed to … customers on …"
 * or the checks that failed.
 */
async function showLiabilities(a: Agreement): Promise<void> {
  const out = $("liabilities-status");
  out.dataset.state = "checking";
  out.textContent = "Checking this period's proof of liabilities…";
  const res = await fetch(`/api/v1/agreement/liabilities-proof/${encodeURIComponent(a.merkleRoot)}`);
  const text = await res.text();
  if (res.status === 404) {
    out.textContent = "No liabilities statement of this period includes you yet (one is published after the month ends).";
    out.dataset.state = "none";
    return;
  }
  if (!res.ok) throw new Error(`liabilities proof: HTTP ${res.status}: ${text.slice(0, 200)}`);
  const wasm = await import(LIABILITIES_MODULE);
  await wasm.default();
  const key = pinnedKey(a.origin);
  // The proof must be for this customer's own ledger, the one its key is
  // bound to (issue 40): another customer's leaf fails customer.ledgerId.
  const report = JSON.parse(wasm.verifyLiabilitiesOfLedger(text, a.ledgerId, key)) as {
    ok: boolean; checks: { name: string; ok: boolean; detail: string }[];
  };
  const summary = report.checks.find((c) => c.name === "summary");
  if (report.ok && summary) {
    const pin = key ? "checked against the log key pinned in this browser" : "checked against the log key the proof names (pin it on the verify page)";
    out.textContent = `Verified: ${summary.detail} (${pin}). "I agree" also co-signs that you are counted in it.`;
    out.dataset.state = "verified";
    inclusion = inclusionText(a, text);
  } else {
    const failed = report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    out.textContent = `The proof of liabilities FAILED: ${failed.join("; ")}`;
    out.dataset.state = "failed";
  }
}

/**
 * The inclusion the customer co-signs with its agreement once its proof
 * verified (docs/liabilities.md §11): this log and ledger, the statement's
 * period and hash, and its balance at the period's end, as exact text.
 */
let inclusion: { root: string; text: string } | null = null;

function inclusionText(a: Agreement, proofText: string): { root: string; text: string } {
  const parsed = parseExact(proofText);
  const doc = parsed?.data ?? parsed;
  const text = "bvs-agreement/v1 liabilities\n" +
    `origin ${a.origin}\nledger ${a.ledgerId}\nperiod ${doc.statement.period}\n` +
    `statement ${doc.statementHash}\nbalance ${doc.customer.balance}\n`;
  return { root: a.merkleRoot, text };
}

async function agree(a: Agreement): Promise<void> {
  const key = await ownKey(a);
  const statement = await signNote(a.balanceStatement, key.privateKey, key.id);
  const body: { statement: string; liabilities?: string } = { statement };
  // The same step co-signs the inclusion, when this period's proof verified.
  if (inclusion && inclusion.root === a.merkleRoot) {
    body.liabilities = await signNote(inclusion.text, key.privateKey, key.id);
  }
  const s = await api<Recorded>("/api/v1/agreement/statements", body);
  const cosigned = s.liabilities
    ? ` Your inclusion in the liabilities statement ${s.liabilities.statementHash} is co-signed; log item ${s.liabilities.itemHash}.`
    : "";
  $("period-status").textContent = `Agreed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}; log item ${s.itemHash}.${cosigned}`;
  $("period-status").dataset.state = "agreed";
  await loadPeriod(a.merkleRoot);
}

const fail = (id: string) => (e: unknown): void => {
  $(id).textContent = `Error: ${message(e)}`;
  $(id).dataset.state = "error";
};

await migrateLegacyKeys().catch(fail("key-status"));
const token = location.hash.slice(1);
if (token) {
  $("invite").hidden = false;
  api<Invitation>("/api/v1/agreement/invitation", { token }).then((inv) => {
    $("ledger").textContent = inv.ledgerId;
    $("origin").textContent = inv.origin;
    $("register").onclick = () => register(token, inv).catch(fail("key-status"));
    // Enabled only now: a click before the invitation is read would do nothing.
    $<HTMLButtonElement>("register").disabled = false;
  }).catch(fail("key-status"));
}
const rootParam = new URLSearchParams(location.search).get("root");
if (rootParam) $<HTMLInputElement>("root").value = rootParam;
$<HTMLFormElement>("period-form").onsubmit = (e) => {
  e.preventDefault();
  loadPeriod($<HTMLInputElement>("root").value.trim()).catch(fail("period-status"));
};
