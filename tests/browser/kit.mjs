// Shared kit of the browser tests: headless Chromium (Debian's
// /usr/bin/chromium, or $CHROMIUM_BIN) driven by playwright-core, a fresh
// browser profile per run (it persists across the cases of one run, as a
// user's browser does), named cases with a screenshot on failure, and the
// check lists the verify page renders. Screenshots go to tests/artifacts/.
import { chromium } from "playwright-core";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
/** How long the verify page may take to fetch and check everything. */
export const CHECKS_TIMEOUT_MS = 60_000;
export const artifacts = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

/** Starts Chromium on a fresh profile; `finish()` closes it and exits. */
export async function launch() {
  mkdirSync(artifacts, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "bvs-chromium-"));
  // playwright passes the profile directory as --user-data-dir.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1000, height: 900 },
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
    ],
  });
  let passed = 0;
  let failed = 0;
  /** Runs one named case in a new page; errors thrown in the page fail it. */
  async function test(name, body) {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    try {
      await body(page);
      if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
      passed += 1;
      console.log(`ok - ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`not ok - ${name}\n  ${String(e?.stack ?? e).replaceAll("\n", "\n  ")}`);
      await page.screenshot({ path: join(artifacts, `failed-${name.replace(/\W+/g, "-")}.png`), fullPage: true }).catch(() => {});
    } finally {
      await page.close();
    }
  }
  /** Closes the browser, prints the tally, exits 0 only if all passed. */
  async function finish() {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    console.log(`\n${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  }
  return { browser, test, finish };
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** The checks a verify page list (`#checks`, `#offline-checks`) shows. */
export async function checksOf(page, list) {
  return page.$$eval(`${list} li.check`, (items) => items.map((li) => ({
    name: li.dataset.name,
    ok: li.dataset.ok === "true",
    text: li.innerText,
  })));
}
