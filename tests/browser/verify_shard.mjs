// Browser test of a shard-1 receipt on the public verify page (issue 15),
// in headless Chromium via playwright-core (tests/browser/kit.mjs).
//
//   node tests/browser/verify_shard.mjs <case.json>
//
// case.json (written by tests/tests/shards.rs): {base, root, origin, key,
// logKeys: {origin: verifierKey} from GET /api/v1/logs, receipt, forged,
// swapped} (the last three: receipt texts).
// 1. The log list's keys are pinned in this browser, as a user who copied
//    them from a source they trust would; /verify/<root> of the shard-1
//    tenant's receipt then checks every proof against shard 1's pinned key
//    and remembers the heads it saw under shard 1's origin.
// 2. The receipt pasted into the offline form verifies against the pinned
//    shard-1 key, with no request leaving the page.
// 3. The receipt re-signed by another key for the same log (its head and
//    publicKey swapped) is refused: the pinned key is used, not the named one.
// 4. The receipt naming shard 0's key (a real key of another log) is refused.
// 5. In a browser with nothing pinned, the page says plainly that the key
//    was not pinned (and which key the receipt named).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { artifacts, assert, CHECKS_TIMEOUT_MS, checksOf, launch } from "./kit.mjs";

const [casePath] = process.argv.slice(2);
if (!casePath) {
  console.error("usage: node tests/browser/verify_shard.mjs <case.json>");
  process.exit(2);
}
const c = JSON.parse(readFileSync(casePath, "utf8"));
const { test, finish } = await launch();

async function pinListedKeys(page) {
  await page.goto(`${c.base}/verify`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  await page.evaluate((pins) => localStorage.setItem("bvs.pinnedKeys", JSON.stringify(pins)), c.logKeys);
}

/** Pastes `text` into the offline form and returns the verdict's ok and the checks. */
async function verifyOffline(page, text) {
  await page.fill("#receipt-text", text);
  await page.click("button[type=submit]");
  await page.waitForFunction(() => document.body.dataset.offline === "done");
  const ok = await page.getAttribute("#offline-verdict", "data-ok");
  const summary = await page.innerText("#offline-summary");
  const checks = await checksOf(page, "#offline-checks");
  // The next paste must wait for its own result.
  await page.evaluate(() => { delete document.body.dataset.offline; });
  return { ok: ok === "true", summary, checks };
}

await test("a shard-1 root verifies online against shard 1's pinned key from the log list", async (page) => {
  await pinListedKeys(page);
  await page.goto(`${c.base}/verify/${c.root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const checks = await checksOf(page, "#checks");
  const bad = checks.filter((x) => !x.ok);
  assert(bad.length === 0, `failed checks: ${JSON.stringify(bad, null, 1)}`);
  const pin = checks.find((x) => x.name === "pinnedKey");
  assert(pin && pin.text.includes("Pinned in this browser") && pin.text.includes(c.key), `pinnedKey: ${JSON.stringify(pin)}`);
  assert(await page.getAttribute("#pin", "data-state") === "pinned", "the pin box does not say pinned");
  const summary = await page.innerText("#summary");
  assert(summary.includes("sandbox-1 log") && summary.includes(c.origin), `summary: ${summary}`);
  const heads = JSON.parse(await page.evaluate(() => localStorage.getItem("bvs.seenHeads")));
  assert(Array.isArray(heads[c.origin]) && heads[c.origin].length >= 1, `no heads remembered for ${c.origin}: ${JSON.stringify(heads)}`);
  await page.screenshot({ path: join(artifacts, "verify-shard-1.png"), fullPage: true });
});

await test("the shard-1 receipt verifies offline against the pinned shard-1 key", async (page) => {
  await pinListedKeys(page);
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  const r = await verifyOffline(page, c.receipt);
  assert(r.ok, `receipt did not verify: ${JSON.stringify(r.checks.filter((x) => !x.ok))}`);
  assert(r.summary.includes(`${c.key} (pinned in this browser)`), `key row: ${r.summary}`);
  assert(r.summary.includes(c.origin), `signed by: ${r.summary}`);
  assert(requests.length === 0, `requests during offline verification: ${requests}`);
  await page.screenshot({ path: join(artifacts, "verify-shard-1-offline.png"), fullPage: true });
});

await test("a receipt re-signed by another key for shard 1's log is refused", async (page) => {
  await pinListedKeys(page);
  const r = await verifyOffline(page, c.forged);
  assert(!r.ok, "a receipt signed by a swapped key was shown as verified");
  const failed = r.checks.filter((x) => !x.ok).map((x) => x.name);
  assert(failed.includes("publicKey") && failed.includes("treeHead"), `failed: ${failed}`);
  assert(r.summary.includes(`${c.key} (pinned in this browser)`), `key row: ${r.summary}`);
});

await test("a receipt naming another shard's key is refused", async (page) => {
  await pinListedKeys(page);
  const r = await verifyOffline(page, c.swapped);
  assert(!r.ok, "a receipt naming shard 0's key was shown as verified");
  const failed = r.checks.filter((x) => !x.ok).map((x) => x.name);
  assert(failed.includes("treeHead"), `failed: ${failed}`);
});

await test("with nothing pinned the page says so plainly", async (page) => {
  await page.goto(`${c.base}/verify`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  await page.evaluate(() => localStorage.removeItem("bvs.pinnedKeys"));
  const r = await verifyOffline(page, c.forged);
  assert(r.summary.includes("NOT pinned"), `key row: ${r.summary}`);
  const key = r.checks.find((x) => x.name === "publicKey");
  assert(key && key.text.includes("not pinned"), `publicKey: ${JSON.stringify(key)}`);
});

await finish();
