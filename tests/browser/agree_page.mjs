// Browser test of the customer's agreement flow (issue 19), in headless
// Chromium (Debian's /usr/bin/chromium) driven by playwright-core.
//
//   node tests/browser/agree_page.mjs <invitationUrl> <merkleRoot> <out.json> \
//     [<disputeInvitationUrl> <disputeMerkleRoot>]
//
// Opens the vendor's invitation, creates and registers a key in the
// browser, loads the period's checkpoint, agrees, and writes what the page
// shows (the registered key and the signed statement's answer) to out.json.
// Then the verify page of that checkpoint shows "Agreed by the customer's
// key … at …" as a passing check of its own, beside the key binding check.
// With a second invitation (another customer's ledger), the customer there
// disputes its period from the second delta ("the amount differs"), and
// that verify page shows "Disputed by the customer's key … at …".
// Issue 25: every page answer carries the security headers (a strict
// Content-Security-Policy with frame-ancestors 'none', nosniff,
// no-referrer) and the pages run under it with no violation; the key the
// page makes is a non-extractable WebCrypto key in IndexedDB (exporting it
// fails; nothing in localStorage), and a key an earlier page kept in
// localStorage is moved there.
// Exit status 0 only if every step passed.
import { chromium } from "playwright-core";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [invitationUrl, root, outPath, disputeUrl, disputeRoot] = process.argv.slice(2);
if (!invitationUrl || !root || !outPath) {
  console.error("usage: node tests/browser/agree_page.mjs <invitationUrl> <merkleRoot> <out.json>");
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
const STEP_TIMEOUT_MS = 30_000;
const artifacts = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
mkdirSync(artifacts, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), "bvs-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1000, height: 900 },
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
  ],
});
const page = await browser.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
// A CSP violation is reported on the console ("Refused to ...").
page.on("console", (m) => {
  if (/Content Security Policy|Refused to/i.test(m.text())) errors.push(`CSP: ${m.text()}`);
});
let ok = false;

/** The security headers every page answer must carry. */
function checkHeaders(response, what) {
  const h = response?.headers() ?? {};
  const csp = h["content-security-policy"] ?? "";
  for (const part of ["script-src 'self' 'wasm-unsafe-eval'", "style-src 'self'", "frame-ancestors 'none'"]) {
    if (!csp.includes(part)) throw new Error(`${what}: Content-Security-Policy lacks ${part}: ${csp}`);
  }
  if (h["x-content-type-options"] !== "nosniff") throw new Error(`${what}: X-Content-Type-Options ${h["x-content-type-options"]}`);
  if (h["referrer-policy"] !== "no-referrer") throw new Error(`${what}: Referrer-Policy ${h["referrer-policy"]}`);
}

/** The keys the page keeps in IndexedDB: ledger id, extractable, and
 * whether exporting the private key fails. */
async function storedKeys() {
  return page.evaluate(async () => {
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open("bvs-agreement", 1);
      req.onupgradeneeded = () => req.result.createObjectStore("keys");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const all = await new Promise((resolve, reject) => {
      const store = db.transaction("keys", "readonly").objectStore("keys");
      const out = [];
      const req = store.openCursor();
      req.onsuccess = () => {
        const c = req.result;
        if (!c) return resolve(out);
        out.push([c.key, c.value]);
        c.continue();
      };
      req.onerror = () => reject(req.error);
    });
    db.close();
    const keys = [];
    for (const [ledger, v] of all) {
      let exportFails = false;
      try { await crypto.subtle.exportKey("pkcs8", v.privateKey); } catch { exportFails = true; }
      keys.push({ ledger, extractable: v.privateKey.extractable, exportFails });
    }
    return {
      keys,
      localStorage: Object.keys(localStorage).filter((k) => k.startsWith("bvs-agreement-key:")),
    };
  });
}

/** A key as an earlier page kept it: PKCS#8 in localStorage. */
async function plantLegacyKey(ledger) {
  await page.evaluate(async (ledger) => {
    const pair = await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"]);
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
    const b64 = (b) => btoa(String.fromCharCode(...b));
    localStorage.setItem(`bvs-agreement-key:${ledger}`, JSON.stringify({
      ledgerId: ledger, verifierKey: "customer+00000000+AQ==", id: b64(new Uint8Array(4)), pkcs8: b64(pkcs8),
    }));
  }, ledger);
}

/** The second ledger: register its key, dispute from the second delta. */
async function dispute() {
  await page.goto(disputeUrl);
  await page.waitForSelector("#register:not([disabled])", { timeout: STEP_TIMEOUT_MS });
  await page.click("#register");
  await page.waitForSelector("#key-status[data-state]", { timeout: STEP_TIMEOUT_MS });
  const keyStatus = await page.textContent("#key-status");
  if (!keyStatus.startsWith("Registered")) throw new Error(`second key: ${keyStatus}`);
  await page.fill("#root", disputeRoot);
  await page.click("#period-form button[type=submit]");
  await page.waitForSelector("#period-details:not([hidden])", { timeout: STEP_TIMEOUT_MS });
  await page.click("#dispute-details summary");
  await page.waitForSelector("input[name=d-delta][value='1']", { timeout: STEP_TIMEOUT_MS });
  await page.selectOption("#d-kind", "changed");
  await page.check("input[name=d-delta][value='1']");
  const statement = await page.textContent("#d-statement");
  if (!statement.includes("divergence changed\nafter 1\ndelta itemHash ")) throw new Error(`dispute text: ${statement}`);
  await page.click("#dispute");
  await page.waitForSelector("#period-status[data-state]", { timeout: STEP_TIMEOUT_MS });
  const status = await page.textContent("#period-status");
  if (!status.startsWith("Disputed by the customer's key")) throw new Error(`dispute: ${status}`);
  await page.waitForFunction(() => document.querySelectorAll("#statements li").length === 1, null, { timeout: STEP_TIMEOUT_MS });
  const shown = await page.textContent("#statements li");
  if (!shown.startsWith("Disputed by the customer's key")) throw new Error(`shown: ${shown}`);
  await page.screenshot({ path: join(artifacts, "agree-dispute-page.png"), fullPage: true });
  await page.goto(`${new URL(disputeUrl).origin}/verify/${disputeRoot}`);
  await page.waitForSelector("body[data-state=done]", { timeout: 60_000 });
  const checks = await page.$$eval("#checks li.check", (items) => items.map((li) => ({
    name: li.dataset.name, ok: li.dataset.ok === "true", text: li.innerText,
  })));
  const check = checks.find((c) => c.name === "agreement.statements[0]");
  if (!check?.ok || !check.text.includes("Disputed by the customer's key")) {
    throw new Error(`dispute agreement.statements[0]: ${JSON.stringify(check)}`);
  }
  const bad = checks.filter((c) => !c.ok);
  if (bad.length) throw new Error(`failed checks on the dispute's verify page: ${JSON.stringify(bad)}`);
  await page.screenshot({ path: join(artifacts, "agree-dispute-verify-page.png"), fullPage: true });
  return { keyStatus, statement, status, shown, verifyCheck: check.text };
}

try {
  // A key an earlier page kept in localStorage moves to IndexedDB, not
  // extractable, on the next visit.
  checkHeaders(await page.goto(`${new URL(invitationUrl).origin}/agree`), "/agree");
  await plantLegacyKey("legacy-ledger");
  // A new document (not a fragment change of the one open).
  await page.goto("about:blank");
  checkHeaders(await page.goto(invitationUrl), "/agree#<token>");
  await page.waitForSelector("#register:not([disabled])", { timeout: STEP_TIMEOUT_MS });
  const migrated = await storedKeys();
  const legacy = migrated.keys.find((k) => k.ledger === "legacy-ledger");
  if (migrated.localStorage.length || !legacy || legacy.extractable || !legacy.exportFails) {
    throw new Error(`legacy key not migrated: ${JSON.stringify(migrated)}`);
  }
  await page.click("#register");
  await page.waitForSelector("#key-status[data-state]", { timeout: STEP_TIMEOUT_MS });
  const keyStatus = await page.textContent("#key-status");
  if (!keyStatus.startsWith("Registered")) throw new Error(`key: ${keyStatus}`);
  const stored = await storedKeys();
  const own = stored.keys.filter((k) => k.ledger !== "legacy-ledger");
  if (own.length !== 1 || own[0].extractable || !own[0].exportFails || stored.localStorage.length) {
    throw new Error(`the private key is not a non-extractable key in IndexedDB: ${JSON.stringify(stored)}`);
  }

  await page.fill("#root", root);
  await page.click("#period-form button[type=submit]");
  await page.waitForSelector("#period-details:not([hidden])", { timeout: STEP_TIMEOUT_MS });
  await page.click("#agree");
  await page.waitForSelector("#period-status[data-state]", { timeout: STEP_TIMEOUT_MS });
  const agreed = await page.textContent("#period-status");
  if (!agreed.startsWith("Agreed by the customer's key")) throw new Error(`agree: ${agreed}`);
  await page.waitForFunction(() => document.querySelectorAll("#statements li").length === 1, null, { timeout: STEP_TIMEOUT_MS });
  const shown = await page.textContent("#statements li");
  await page.screenshot({ path: join(artifacts, "agree-page.png"), fullPage: true });

  // The verify page shows the agreement as checks of its own.
  checkHeaders(await page.goto(`${new URL(invitationUrl).origin}/verify/${root}`), "/verify/<root>");
  await page.waitForSelector("body[data-state=done]", { timeout: 60_000 });
  const checks = await page.$$eval("#checks li.check", (items) => items.map((li) => ({
    name: li.dataset.name, ok: li.dataset.ok === "true", text: li.innerText,
  })));
  const key = checks.find((c) => c.name === "agreement.key");
  const agreedCheck = checks.find((c) => c.name === "agreement.statements[0]");
  if (!key?.ok) throw new Error(`agreement.key: ${JSON.stringify(key)}`);
  if (!agreedCheck?.ok || !agreedCheck.text.includes("Agreed by the customer's key")) {
    throw new Error(`agreement.statements[0]: ${JSON.stringify(agreedCheck)}`);
  }
  const bad = checks.filter((c) => !c.ok);
  if (bad.length) throw new Error(`failed checks on the verify page: ${JSON.stringify(bad)}`);
  await page.screenshot({ path: join(artifacts, "agree-verify-page.png"), fullPage: true });
  let disputed = null;
  if (disputeUrl && disputeRoot) disputed = await dispute();
  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  writeFileSync(outPath, JSON.stringify({ keyStatus, agreed, shown, verifyCheck: agreedCheck.text, disputed, keys: stored }, null, 2));
  ok = true;
  console.log("ok - the customer registered a key and agreed in the browser");
  if (disputed) console.log("ok - the customer of a second ledger disputed its period from a delta");
} catch (e) {
  console.log(`not ok - agreement flow\n  ${String(e?.stack ?? e).replaceAll("\n", "\n  ")}`);
  await page.screenshot({ path: join(artifacts, "failed-agree-page.png"), fullPage: true }).catch(() => {});
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
