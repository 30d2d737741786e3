// Browser test of the customer's agreement flow (issue 19), in headless
// Chromium (Debian's /usr/bin/chromium) driven by playwright-core.
//
//   node tests/browser/agree_page.mjs <invitationUrl> <merkleRoot> <out.json>
//
// Opens the vendor's invitation, creates and registers a key in the
// browser, loads the period's checkpoint, agrees, and writes what the page
// shows (the registered key and the signed statement's answer) to out.json.
// Then the verify page of that checkpoint shows "Agreed by the customer's
// key … at …" as a passing check of its own, beside the key binding check.
// Exit status 0 only if every step passed.
import { chromium } from "playwright-core";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [invitationUrl, root, outPath] = process.argv.slice(2);
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
let ok = false;
try {
  await page.goto(invitationUrl);
  await page.waitForSelector("#register:not([disabled])", { timeout: STEP_TIMEOUT_MS });
  await page.click("#register");
  await page.waitForSelector("#key-status[data-state]", { timeout: STEP_TIMEOUT_MS });
  const keyStatus = await page.textContent("#key-status");
  if (!keyStatus.startsWith("Registered")) throw new Error(`key: ${keyStatus}`);
  const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("bvs-agreement-key:")));
  if (stored.length !== 1) throw new Error(`private key not kept in localStorage: ${stored}`);

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
  await page.goto(`${new URL(invitationUrl).origin}/verify/${root}`);
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
  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  writeFileSync(outPath, JSON.stringify({ keyStatus, agreed, shown, verifyCheck: agreedCheck.text }, null, 2));
  ok = true;
  console.log("ok - the customer registered a key and agreed in the browser");
} catch (e) {
  console.log(`not ok - agreement flow\n  ${String(e?.stack ?? e).replaceAll("\n", "\n  ")}`);
  await page.screenshot({ path: join(artifacts, "failed-agree-page.png"), fullPage: true }).catch(() => {});
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
