// The customer's agreement with a checkpoint, checked in the browser
// (docs/agreement.md). The verifier in WebAssembly does not carry the
// statement reader (it would push it over its 64 KB budget), so these
// checks use the browser's own Ed25519 (WebCrypto) and plain string
// comparisons: the key binding is signed by the key it names and names
// this log and ledger; each statement is signed by that key and names this
// log, ledger, period, merkleRoot and delta count.
import type { Agreement, Check, Summary } from "./types";

const enc = new TextEncoder();
const unb64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const hex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A signed note's text (through its last newline) and signature lines. */
function splitNote(note: string): { text: string; sigs: string[] } | null {
  const at = note.indexOf("\n\n");
  if (at < 0) return null;
  const text = note.slice(0, at + 1);
  const sigs = note.slice(at + 2).split("\n").filter((l) => l.length > 0);
  return { text, sigs };
}

/** The text's `name value` lines after the first, as a map. */
function fields(text: string): { first: string; map: Map<string, string> } {
  const lines = text.split("\n").filter((l) => l.length > 0);
  const map = new Map<string, string>();
  for (const l of lines.slice(1)) {
    const sp = l.indexOf(" ");
    if (sp > 0) map.set(l.slice(0, sp), l.slice(sp + 1));
  }
  return { first: lines[0] ?? "", map };
}

/** `true` when `note` carries a valid Ed25519 signature by verifier key `key`, else why not. */
async function signedBy(note: string, key: string): Promise<true | string> {
  // <name>+<key id>+<base64>: the base64 part may itself contain '+'.
  const text = String(key ?? "");
  const a = text.indexOf("+");
  const b = a < 0 ? -1 : text.indexOf("+", a + 1);
  if (a <= 0 || b < 0) return "the counterparty key is malformed";
  const [name, idHex, material64] = [text.slice(0, a), text.slice(a + 1, b), text.slice(b + 1)];
  const material = unb64(material64);
  if (material.length !== 33 || material[0] !== 0x01) return "the counterparty key is not an Ed25519 key";
  const split = splitNote(note);
  if (!split) return "not a signed note";
  // Several keys may share a name (a customer's key and its successor):
  // the line is the one whose key id is this key's.
  const sig = split.sigs
    .filter((l) => l.startsWith(`\u2014 ${name} `))
    .map((l) => unb64(l.slice(`\u2014 ${name} `.length)))
    .find((b) => b.length === 68 && hex(b.slice(0, 4)) === idHex);
  if (!sig) return `no signature by ${name}+${idHex}`;
  const pub = await crypto.subtle.importKey("raw", material.slice(1), "Ed25519", false, ["verify"]);
  const ok = await crypto.subtle.verify("Ed25519", pub, sig.slice(4), enc.encode(split.text));
  return ok ? true : "the signature does not match the statement text";
}

/**
 * Checks of `agreement` (the public answer's field) for proof root `root`
 * of the log `logOrigin`, whose summary says `period` and `itemCount`:
 * every key binding of the ledger (the current one is `agreement.key`, an
 * earlier one `agreement.keys[i]`; a change the previous key did not sign
 * passes with a warning, as the service must show it), then each
 * statement against the key that signed it.
 */
export async function agreementChecks(agreement: Agreement, root: string, logOrigin: string, summary: Summary): Promise<Check[]> {
  const checks: Check[] = [];
  const current = agreement.counterpartyKey;
  if (!current) return checks;
  const keys = agreement.keys?.length
    ? agreement.keys
    : [{ counterpartyKey: current, keyStatement: agreement.keyStatement ?? "", registeredAt: "", signedByPrevious: null }];
  const good = new Set<string>();
  for (const [i, k] of keys.entries()) {
    const last = i === keys.length - 1;
    const binding = fields(splitNote(k.keyStatement ?? "")?.text ?? "");
    const bindingWrong =
      binding.first !== "bvs-agreement/v1 key" ? "the key binding is not a bvs-agreement/v1 key statement"
      : binding.map.get("key") !== k.counterpartyKey ? "the key binding names another key"
      : last && k.counterpartyKey !== current ? "the last key listed is not the ledger's counterpartyKey"
      : binding.map.get("ledger") !== agreement.ledgerId ? "the key binding names another ledger"
      : binding.map.get("origin") !== logOrigin ? `the key binding names log ${binding.map.get("origin")}, not ${logOrigin}`
      : null;
    const bindingSig = bindingWrong ? null : await signedBy(k.keyStatement ?? "", k.counterpartyKey);
    let ok = !bindingWrong && bindingSig === true;
    let detail = bindingWrong ?? (bindingSig === true
      ? `Ledger ${agreement.ledgerId} has the customer's key ${k.counterpartyKey} (self-signed; checked in this browser with WebCrypto Ed25519).`
      : String(bindingSig));
    let title: string | undefined;
    if (ok && i > 0) {
      const previous = keys[i - 1].counterpartyKey;
      const byPrevious = await signedBy(k.keyStatement, previous);
      if (byPrevious === true) {
        detail += ` It replaced ${previous}, which signed the change.`;
      } else if (byPrevious.startsWith("no signature")) {
        title = "Key changed, not signed by the previous key";
        detail = `Warning: key changed on ${k.registeredAt}, not signed by the previous key ${previous}: `
          + `it came through a new invitation from the vendor, and is trusted only as much as the vendor. ${detail}`;
      } else {
        ok = false;
        detail = `the previous key's signature on this binding does not verify: ${byPrevious}`;
      }
    }
    if (ok) good.add(k.counterpartyKey);
    checks.push({ name: last ? "agreement.key" : `agreement.keys[${i}]`, ok, detail, ...(title ? { title } : {}) });
  }
  for (const [i, s] of (agreement.statements ?? []).entries()) {
    const key = s.counterpartyKey ?? current;
    const f = fields(splitNote(s.statement ?? "")?.text ?? "");
    const kind = f.first.replace("bvs-agreement/v1 ", "");
    const expect: [string, string][] = [
      ["origin", logOrigin], ["ledger", agreement.ledgerId], ["root", root],
      ["period", String(summary.period)], ["deltas", String(summary.itemCount)],
    ];
    const wrong = !good.has(key) ? `the statement's key ${key} is not a checked key of this ledger`
      : !["balance", "dispute"].includes(kind) ? "not a balance or dispute statement"
      : expect.map(([n, v]) => (f.map.get(n) !== v ? `the statement names ${n} ${f.map.get(n)}, not ${v}` : null)).find(Boolean);
    const sig = wrong ? null : await signedBy(s.statement, key);
    const who = `the customer's key ${key} at ${s.recordedAt}`;
    const title = kind === "dispute" ? `Disputed by ${who}` : `Agreed by ${who}`;
    const says = kind === "dispute"
      ? `The customer disputes this checkpoint from its delta ${f.map.get("delta")} (${f.map.get("divergence")}, after ${f.map.get("after")} agreed deltas at balance ${f.map.get("agreed")}).`
      : `The customer agrees: period ${f.map.get("period")} ends at balance ${f.map.get("balance")} after ${f.map.get("deltas")} deltas.`;
    checks.push({
      name: `agreement.statements[${i}]`,
      title,
      ok: !wrong && sig === true,
      detail: wrong ?? (sig === true ? `${says} Signature checked in this browser (WebCrypto Ed25519); log item ${s.itemHash}.` : String(sig)),
    });
  }
  return checks;
}
