// Browser test of the verify page on a log whose witness policy has nested
// groups, which the log list's k-of-n form cannot say (issue 41): the page
// loads the module with the full tlog-policy check and checks the proof's
// head and the latest head against the served policy text, never
// reporting them ok unchecked.
//
//   node tests/browser/verify_nested.mjs <baseUrl> <proofRoot>
import { join } from "node:path";
import { artifacts, assert, CHECKS_TIMEOUT_MS, checksOf, launch } from "./kit.mjs";

const [base, root] = process.argv.slice(2);
if (!base || !root) {
  console.error("usage: node tests/browser/verify_nested.mjs <baseUrl> <proofRoot>");
  process.exit(2);
}
const { test, finish } = await launch();

await test("a nested witness policy is checked from its text", async (page) => {
  const loaded = [];
  page.on("request", (r) => loaded.push(r.url()));
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const checks = await checksOf(page, "#checks");
  const bad = checks.filter((c) => !c.ok);
  assert(bad.length === 0, `failed checks: ${JSON.stringify(bad, null, 1)}`);
  for (const name of ["witnesses", "latestWitnesses"]) {
    const c = checks.find((x) => x.name === name);
    assert(c && c.text.includes("✔ Passed") && /witnessed/.test(c.text) && c.text.includes("nested policy"), `${name}: ${JSON.stringify(c)}`);
    assert(!c.text.includes("not checked"), `${name} says it was not checked: ${c.text}`);
  }
  assert(loaded.some((u) => u.includes("/pkg-liabilities/bvs_verifier_wasm")), `the policy module was not loaded: ${loaded.join(" ")}`);
  assert(await page.getAttribute("#verdict", "data-ok") === "true", "verdict is not ok");
  await page.screenshot({ path: join(artifacts, "verify-nested.png"), fullPage: true });
});

await finish();
