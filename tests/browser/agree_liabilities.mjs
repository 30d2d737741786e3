// Browser test of the customer's proof of liabilities on the agreement
// page (issue 31, docs/liabilities.md §10), in headless Chromium:
//
//   node tests/browser/agree_liabilities.mjs <serviceBase> <merkleRoot>
//
// The period of the checkpoint <merkleRoot> is closed and its statement
// published. /agree?root=… loads the period, fetches the customer's proof
// by the root, loads /pkg-liabilities (WebAssembly) and shows "your
// balance of … is counted in a total of … owed to … customers on …";
// with the proof's leaf amount changed on the way, the page shows that
// the proof FAILED. Exit status 0 only if both passed.
import { launch } from "./kit.mjs";

const [base, root] = process.argv.slice(2);
if (!base || !root) {
  console.error("usage: node tests/browser/agree_liabilities.mjs <serviceBase> <merkleRoot>");
  process.exit(2);
}
const TIMEOUT_MS = 30_000;
const { test, finish } = await launch();

/** Opens the period on the agreement page; the liabilities line once checked. */
async function shown(page) {
  const modules = [];
  page.on("request", (r) => { if (r.url().includes("/pkg-liabilities/")) modules.push(r.url()); });
  await page.goto(`${base}/agree?root=${root}`);
  await page.click("#period-form button[type=submit]");
  const status = page.locator("#liabilities-status[data-state=verified], #liabilities-status[data-state=failed], #liabilities-status[data-state=error], #liabilities-status[data-state=none]");
  await status.waitFor({ timeout: TIMEOUT_MS });
  if (!modules.length) throw new Error("the liabilities module was not loaded");
  return { state: await status.getAttribute("data-state"), text: await status.textContent() };
}

await test("the page verifies the customer's proof of liabilities in WebAssembly", async (page) => {
  const { state, text } = await shown(page);
  if (state !== "verified") throw new Error(`state ${state}: ${text}`);
  if (!/your balance of 1250\.5 is counted in a total of [0-9.]+ owed to [0-9]+ customers on \d{4}-\d{2}-\d{2}/.test(text)) {
    throw new Error(`unexpected sentence: ${text}`);
  }
  console.log(`  ${text}`);
});

await test("a tampered proof fails on the page", async (page) => {
  await page.route("**/api/v1/agreement/liabilities-proof/**", async (route) => {
    const res = await route.fetch();
    const body = (await res.text()).replace(/"amount":1250\.5\b/, '"amount":1250.4');
    if (!body.includes('"amount":1250.4')) throw new Error("nothing to tamper with");
    await route.fulfill({ response: res, body });
  });
  const { state, text } = await shown(page);
  if (state !== "failed") throw new Error(`state ${state}: ${text}`);
  if (!text.includes("liabilities.amount")) throw new Error(`no liabilities.amount failure: ${text}`);
  console.log(`  ${text.slice(0, 160)}…`);
});

await finish();
