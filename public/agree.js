// The customer's side of two-party agreement (docs/agreement.md): open a
// vendor's invitation (token in the URL fragment), make an Ed25519 key in
// the browser (WebCrypto), register its public key with a self-signed
// `bvs-agreement/v1 key` statement, then sign a period's balance statement.
// The private key is kept in localStorage (per ledger) and offered as a
// download; it is never sent anywhere.
const KEY_NAME = "customer";
const STORE = "bvs-agreement-key:";
const $ = (id) => document.getElementById(id);
const enc = new TextEncoder();

const b64 = (bytes) => btoa(String.fromCharCode(...bytes));
const unb64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

async function api(path, body) {
  const r = await fetch(path, body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(json.message || `HTTP ${r.status}`);
  return json.data;
}

/** `<name>+<key id hex>+<base64(0x01 || public key)>`, the signed-note form. */
async function verifierKey(publicRaw) {
  const material = new Uint8Array([0x01, ...publicRaw]);
  const idInput = new Uint8Array([...enc.encode(`${KEY_NAME}\n`), ...material]);
  const id = new Uint8Array(await crypto.subtle.digest("SHA-256", idInput)).slice(0, 4);
  return { text: `${KEY_NAME}+${hex(id)}+${b64(material)}`, id };
}

/** A C2SP signed note: the text, a blank line, one signature line. */
async function signNote(text, privateKey, id) {
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", privateKey, enc.encode(text)));
  return `${text}\n\u2014 ${KEY_NAME} ${b64(new Uint8Array([...id, ...sig]))}\n`;
}

async function loadKey(ledgerId) {
  const saved = localStorage.getItem(STORE + ledgerId);
  if (!saved) return null;
  const k = JSON.parse(saved);
  const privateKey = await crypto.subtle.importKey("pkcs8", unb64(k.pkcs8), "Ed25519", false, ["sign"]);
  return { privateKey, id: unb64(k.id), verifierKey: k.verifierKey };
}

async function register(token, invitation) {
  const pair = await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"]);
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const vk = await verifierKey(publicRaw);
  const text = `bvs-agreement/v1 key\norigin ${invitation.origin}\nledger ${invitation.ledgerId}\nkey ${vk.text}\n`;
  const statement = await signNote(text, pair.privateKey, vk.id);
  const saved = { ledgerId: invitation.ledgerId, verifierKey: vk.text, id: b64(vk.id), pkcs8: b64(pkcs8) };
  localStorage.setItem(STORE + invitation.ledgerId, JSON.stringify(saved));
  const link = $("download");
  link.href = URL.createObjectURL(new Blob([JSON.stringify(saved, null, 2)], { type: "application/json" }));
  link.hidden = false;
  const done = await api("/api/v1/agreement/keys", { token, statement });
  $("key-status").textContent = `Registered: your key ${done.counterpartyKey} (log item ${done.itemHash}).`;
  $("key-status").dataset.state = "registered";
  $("register").disabled = true;
}

function showStatements(agreement) {
  const list = $("statements");
  list.replaceChildren();
  for (const s of agreement.statements) {
    const li = document.createElement("li");
    li.textContent = s.kind === "balance"
      ? `Agreed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}`
      : `Disputed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}`;
    list.append(li);
  }
}

async function loadPeriod(root) {
  const answer = await api(`/api/v1/verify/${encodeURIComponent(root)}`);
  const a = answer.agreement;
  if (!a) throw new Error("This root is not a committed checkpoint of one customer.");
  $("p-period").textContent = a.period;
  $("p-deltas").textContent = String(a.deltaCount);
  $("p-balance").textContent = String(a.balance);
  $("p-statement").textContent = a.balanceStatement;
  $("period-details").hidden = false;
  showStatements(a);
  $("agree").onclick = () => agree(a).catch(fail("period-status"));
}

async function agree(a) {
  const key = await loadKey(a.ledgerId);
  if (!key) throw new Error("No key for this ledger in this browser: open your invitation first.");
  if (a.counterpartyKey !== key.verifierKey) throw new Error("The ledger's registered key is not the one in this browser.");
  const statement = await signNote(a.balanceStatement, key.privateKey, key.id);
  const s = await api("/api/v1/agreement/statements", { statement });
  $("period-status").textContent = `Agreed by the customer's key ${s.counterpartyKey} at ${s.recordedAt}; log item ${s.itemHash}.`;
  $("period-status").dataset.state = "agreed";
  await loadPeriod(a.merkleRoot);
}

const fail = (id) => (e) => {
  $(id).textContent = `Error: ${e.message}`;
  $(id).dataset.state = "error";
};

const token = location.hash.slice(1);
if (token) {
  $("invite").hidden = false;
  api("/api/v1/agreement/invitation", { token }).then((inv) => {
    $("ledger").textContent = inv.ledgerId;
    $("origin").textContent = inv.origin;
    $("register").onclick = () => register(token, inv).catch(fail("key-status"));
  }).catch(fail("key-status"));
}
const rootParam = new URLSearchParams(location.search).get("root");
if (rootParam) $("root").value = rootParam;
$("period-form").onsubmit = (e) => {
  e.preventDefault();
  loadPeriod($("root").value.trim()).catch(fail("period-status"));
};
