// Browser test of the public verify page, in headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core.
//
//   node tests/browser/verify_page.mjs <baseUrl> <proofRoot> [receipt.json] [batchRoot] [as-of.json]
//
// 1. /verify/<root> as served: every check passes, and says so in words.
// 2. The same page with the verify answer tampered in flight (a record's
//    itemHash changed): the page says "Not verified" and names the record.
// 3. An answer naming an unknown hash scheme is refused by name.
// 4. A key pinned in this browser that differs from the served one fails;
//    a tree head this browser remembers that the log contradicts (a fork)
//    fails the history check.
// 5. The log's witness policy (the log list's witnessPolicy, pinned on the
//    first visit like the key): the head is "witnessed: cosigned by" the
//    witnesses; a log list that later serves another policy (a witness
//    dropped, a smaller quorum) fails pinnedWitnesses loudly and the pinned
//    policy is still the one applied, until the user pins the served one
//    with a click; a pinned policy naming a witness that
//    never cosigned fails the witnesses check, naming it.
// 6. The receipt (if given) pasted into the offline form verifies (its
//    head witnessed under the pinned policy); the same
//    receipt with its final balance changed fails, naming finalBalance.
// 7. A batch root over several customers (if given): its withheld answer
//    (issue 40) verifies in the page, and shows no amount and no item hash.
// 8. A derive answer with a balance as of a moment (if given; issue 43)
//    pasted into the offline form verifies with core's as-of check (the
//    second module), and the same answer with its balance changed fails,
//    naming balance.
// The browser profile persists across cases, as a user's browser does: the
// first visit pins the log's key (trust on first use) and starts the
// history of tree heads that later visits are checked against.
// Screenshots go to tests/artifacts/. Exit status 0 only if all passed.
import { createHash, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { artifacts, assert, CHECKS_TIMEOUT_MS, checksOf, launch } from "./kit.mjs";

const [base, root, receiptPath, batchRoot, asOfPath] = process.argv.slice(2);
if (!base || !root) {
  console.error("usage: node tests/browser/verify_page.mjs <baseUrl> <proofRoot> [receipt.json] [batchRoot] [as-of.json]");
  process.exit(2);
}
const { test, finish } = await launch();

await test("every check of a real proof root passes and says so", async (page) => {
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const checks = await checksOf(page, "#checks");
  const bad = checks.filter((c) => !c.ok);
  assert(bad.length === 0, `failed checks: ${JSON.stringify(bad, null, 1)}`);
  assert(checks.length >= 8, `only ${checks.length} checks shown`);
  for (const name of ["pinnedKey", "pinnedWitnesses", "witnesses", "latestWitnesses", "treeHead", "records[0].inclusion", "itemsRoot", "latestHead", "consistency", "history"]) {
    assert(checks.some((c) => c.name === name), `no ${name} check among ${checks.map((c) => c.name)}`);
  }
  assert(checks.every((c) => c.text.includes("✔ Passed")), "each check says Passed in words");
  // First visit: the key was not pinned, and the page says so plainly.
  const pin = checks.find((c) => c.name === "pinnedKey");
  assert(pin.text.includes("Not pinned before this visit") && pin.text.includes("trust on first use"), pin.text);
  assert((await page.innerText("#pin-status")).includes("was not pinned"), await page.innerText("#pin-status"));
  // The witnesses: the policy pinned on first use too, and the head said
  // in words to be cosigned by a quorum of them.
  const pinW = checks.find((c) => c.name === "pinnedWitnesses");
  assert(pinW.text.includes("Not pinned before this visit") && pinW.text.includes("2 of "), pinW.text);
  for (const name of ["witnesses", "latestWitnesses"]) {
    const w = checks.find((c) => c.name === name);
    assert(/witnessed: cosigned by \S+, \S+/.test(w.text) && w.text.includes("the quorum is 2 of the 3 witnesses"), `${name}: ${w.text}`);
  }
  assert((await page.innerText("#summary")).includes("Witnesses"), "the summary does not name the witnesses");
  const stored = await page.evaluate(() => [localStorage.getItem("bvs.pinnedKeys"), localStorage.getItem("bvs.seenHeads")]);
  assert(stored[0] && stored[1] && JSON.parse(stored[1]) && Object.values(JSON.parse(stored[1]))[0].length >= 1, `nothing remembered: ${stored}`);
  // The next visit finds the key pinned and the heads consistent.
  await page.reload();
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const again = await checksOf(page, "#checks");
  assert(again.every((c) => c.ok), `second visit: ${JSON.stringify(again.filter((c) => !c.ok))}`);
  assert(again.find((c) => c.name === "pinnedKey").text.includes("Pinned in this browser"), "second visit: not pinned");
  assert(again.find((c) => c.name === "history").text.includes("saw before"), "second visit: history not checked");
  assert(await page.getAttribute("#verdict", "data-ok") === "true", "verdict is not ok");
  const verdict = await page.innerText("#verdict");
  assert(/Verified: all \d+ checks passed/.test(verdict), `verdict reads: ${verdict}`);
  const summary = await page.innerText("#summary");
  for (const k of ["Net amount", "Tree size", "Tree head root", "Last verified"]) {
    assert(summary.includes(k), `summary lacks ${k}: ${summary}`);
  }
  assert(await page.$$eval("#records tbody tr", (r) => r.length) >= 1, "no record rows");
  await page.screenshot({ path: join(artifacts, "verify-page.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `the page scrolls sideways on a phone by ${overflow}px`);
  await page.screenshot({ path: join(artifacts, "verify-page-phone.png"), fullPage: true });
});

await test("a record tampered in flight fails and the page says what it means", async (page) => {
  let tampered = false;
  await page.route("**/api/v1/verify/**", async (route) => {
    const response = await route.fetch();
    const text = await response.text();
    // Change the first record's itemHash: its inclusion proof must fail.
    const forged = text.replace(/("itemHash":")([0-9a-f])/, (_, head, c) => head + (c === "0" ? "1" : "0"));
    tampered = forged !== text;
    await route.fulfill({ response, body: forged });
  });
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  assert(tampered, "nothing was tampered");
  assert(await page.getAttribute("#verdict", "data-ok") === "false", "a tampered answer was shown as verified");
  const verdict = await page.innerText("#verdict");
  assert(verdict.includes("Not verified"), `verdict reads: ${verdict}`);
  const checks = await checksOf(page, "#checks");
  const record = checks.find((c) => c.name === "records[0].inclusion");
  assert(record && !record.ok, `records[0].inclusion did not fail: ${JSON.stringify(record)}`);
  assert(record.text.includes("✘ Failed") && record.text.includes("What this means"), record.text);
  assert((await page.innerText("#records tbody tr:first-child")).includes("No"), "the record row does not say No");
  await page.screenshot({ path: join(artifacts, "verify-page-tampered.png"), fullPage: true });
});

await test("an answer naming an unknown hash scheme is refused by name, never checked under a guess", async (page) => {
  await page.route("**/api/v1/verify/**", async (route) => {
    const response = await route.fetch();
    const text = await response.text();
    await route.fulfill({ response, body: text.replace('"hashScheme":"bvs-log-v1"', '"hashScheme":"bvs-log-v9"') });
  });
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  assert(await page.getAttribute("#verdict", "data-ok") === "false", "an unknown scheme was shown as verified");
  const checks = await checksOf(page, "#checks");
  const scheme = checks.find((c) => c.name === "hashScheme");
  assert(scheme && !scheme.ok && scheme.text.includes("bvs-log-v9"), `hashScheme: ${JSON.stringify(scheme)}`);
  const record = checks.find((c) => c.name === "records[0].inclusion");
  assert(record && !record.ok, `records[0].inclusion was checked anyway: ${JSON.stringify(record)}`);
});

await test("a pinned key that differs from the served one fails, and says which was used", async (page) => {
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const saved = await page.evaluate(() => localStorage.getItem("bvs.pinnedKeys"));
  const pins = JSON.parse(saved);
  const [origin, served] = Object.entries(pins)[0];
  // Another key for the same log: same origin, other key bytes.
  const [name, id, b64] = served.split("+");
  const other = `${name}+${id}+${b64.slice(0, 8)}${b64[8] === "A" ? "B" : "A"}${b64.slice(9)}`;
  await page.evaluate(([o, k]) => localStorage.setItem("bvs.pinnedKeys", JSON.stringify({ [o]: k })), [origin, other]);
  try {
    await page.reload();
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    assert(await page.getAttribute("#verdict", "data-ok") === "false", "verified against a key other than the pinned one");
    const checks = await checksOf(page, "#checks");
    const pin = checks.find((c) => c.name === "pinnedKey");
    assert(pin && !pin.ok && pin.text.includes(other), `pinnedKey: ${JSON.stringify(pin)}`);
    assert(checks.some((c) => c.name === "treeHead" && !c.ok), "the head verified under the other key");
    assert(await page.getAttribute("#pin", "data-state") === "differs", "the pin box does not say the keys differ");
    // Pasting the served key back pins it again, from the page itself.
    await page.fill("#pin-key", served);
    await Promise.all([page.waitForNavigation(), page.click("#pin-save")]);
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    assert(await page.getAttribute("#pin", "data-state") === "pinned", "the pasted key was not pinned");
    assert(JSON.parse(await page.evaluate(() => localStorage.getItem("bvs.pinnedKeys")))[origin] === served, "pin not stored");
  } finally {
    await page.evaluate((v) => localStorage.setItem("bvs.pinnedKeys", v), saved);
  }
});

/** A witness vkey (C2SP cosignature/v1, type 0x04) of a fresh key: a witness that never cosigned. */
function strangerVkey(name) {
  const { publicKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url");
  const typed = Buffer.concat([Buffer.from([0x04]), raw]);
  const id = createHash("sha256").update(Buffer.concat([Buffer.from(`${name}\n`), typed])).digest().subarray(0, 4);
  return `${name}+${id.toString("hex")}+${typed.toString("base64")}`;
}

await test("a witness policy other than the pinned one fails loudly, and the pinned one is applied", async (page) => {
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const saved = await page.evaluate(() => localStorage.getItem("bvs.pinnedWitnesses"));
  const pins = JSON.parse(saved);
  const [origin, pinned] = Object.entries(pins)[0];
  assert(pinned.quorum === 2 && pinned.witnesses.length === 3, `pinned: ${saved}`);
  try {
    // 1. The log list now serves a weaker policy: one witness dropped,
    // quorum 1 (how a log would hide a split view).
    let served = false;
    await page.route("**/api/v1/logs", async (route) => {
      const response = await route.fetch();
      const doc = await response.json();
      for (const log of doc.data.logs) {
        if (log.witnessPolicy) log.witnessPolicy = { quorum: 1, witnesses: log.witnessPolicy.witnesses.slice(1) };
      }
      served = true;
      await route.fulfill({ response, json: doc });
    });
    await page.reload();
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    assert(served, "the log list was not fetched");
    assert(await page.getAttribute("#verdict", "data-ok") === "false", "a changed witness policy was shown as verified");
    let checks = await checksOf(page, "#checks");
    const pin = checks.find((c) => c.name === "pinnedWitnesses");
    assert(pin && !pin.ok && pin.text.includes("now publishes 1 of") && pin.text.includes("pinned 2 of") && pin.text.includes("What this means"), `pinnedWitnesses: ${JSON.stringify(pin)}`);
    const w = checks.find((c) => c.name === "witnesses");
    assert(w && w.ok && w.text.includes("the quorum is 2 of the 3 witnesses"), `not checked against the pinned policy: ${JSON.stringify(w)}`);
    assert(JSON.parse(await page.evaluate(() => localStorage.getItem("bvs.pinnedWitnesses")))[origin].quorum === 2, "the served policy replaced the pinned one");
    assert(!(await page.isHidden("#pin-witnesses")), "no offer to pin the served policy");
    await page.screenshot({ path: join(artifacts, "verify-page-witness-policy-changed.png"), fullPage: true });
    // Pinning the served policy takes a click, and then it is the one applied.
    await Promise.all([page.waitForNavigation(), page.click("#pin-witnesses")]);
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    checks = await checksOf(page, "#checks");
    const repinned = checks.find((c) => c.name === "pinnedWitnesses");
    assert(repinned && repinned.ok && repinned.text.includes("Pinned in this browser: 1 of"), `after pinning: ${JSON.stringify(repinned)}`);
    assert(JSON.parse(await page.evaluate(() => localStorage.getItem("bvs.pinnedWitnesses")))[origin].quorum === 1, "the served policy was not pinned");
    assert(await page.isHidden("#pin-witnesses-box"), "the offer stays after pinning");
    await page.unroute("**/api/v1/logs");

    // 2. A pinned policy whose quorum needs a witness that never cosigned.
    const stranger = strangerVkey("stranger");
    const strict = { quorum: 3, witnesses: [...pinned.witnesses.slice(0, 2), stranger].sort() };
    await page.evaluate(([o, p]) => localStorage.setItem("bvs.pinnedWitnesses", JSON.stringify({ [o]: p })), [origin, strict]);
    await page.reload();
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    assert(await page.getAttribute("#verdict", "data-ok") === "false", "a head without the pinned quorum was shown as verified");
    checks = await checksOf(page, "#checks");
    const not = checks.find((c) => c.name === "witnesses");
    assert(not && !not.ok && not.text.includes("NOT witnessed") && /not cosigned by [^;]*stranger/.test(not.text), `witnesses: ${JSON.stringify(not)}`);
  } finally {
    await page.evaluate((v) => localStorage.setItem("bvs.pinnedWitnesses", v), saved);
  }
});

await test("a tree head this browser saw that the log now contradicts is a fork", async (page) => {
  await page.goto(`${base}/verify/${root}`);
  await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
  const saved = await page.evaluate(() => localStorage.getItem("bvs.seenHeads"));
  const heads = JSON.parse(saved);
  const origin = Object.keys(heads)[0];
  // The browser remembers another root for the latest size.
  const latest = heads[origin][heads[origin].length - 1];
  heads[origin][heads[origin].length - 1] = { ...latest, root: "00".repeat(32) };
  await page.evaluate((v) => localStorage.setItem("bvs.seenHeads", v), JSON.stringify(heads));
  try {
    await page.reload();
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    assert(await page.getAttribute("#verdict", "data-ok") === "false", "a fork was shown as verified");
    const history = (await checksOf(page, "#checks")).find((c) => c.name === "history");
    assert(history && !history.ok && history.text.includes("FORK") && history.text.includes("What this means"), `history: ${JSON.stringify(history)}`);
    const kept = JSON.parse(await page.evaluate(() => localStorage.getItem("bvs.seenHeads")));
    assert(kept[origin].some((h) => h.root === "00".repeat(32)), "the history was overwritten after a failed check");
  } finally {
    await page.evaluate((v) => localStorage.setItem("bvs.seenHeads", v), saved);
  }
});

if (receiptPath) {
  const receipt = readFileSync(receiptPath, "utf8");
  await test("a pasted receipt verifies offline, and a changed balance fails", async (page) => {
    await page.goto(`${base}/verify`);
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    // Offline: no request may leave the page while it checks.
    const requests = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.fill("#receipt-text", receipt);
    await page.click("button[type=submit]");
    await page.waitForSelector("body[data-offline=done]");
    assert(await page.getAttribute("#offline-verdict", "data-ok") === "true",
      `receipt did not verify: ${await page.innerText("#offline-result")}`);
    assert(requests.length === 0, `requests during offline verification: ${requests}`);
    const offline = await checksOf(page, "#offline-checks");
    const w = offline.find((c) => c.name === "witnesses");
    assert(w && w.ok && w.text.includes("witnessed: cosigned by"), `offline witnesses: ${JSON.stringify(w)}`);
    await page.screenshot({ path: join(artifacts, "verify-offline.png"), fullPage: true });

    const changed = receipt.replace(/"finalBalance":(-?[0-9.]+)/, (_, n) => `"finalBalance":${n}1`);
    assert(changed !== receipt, "no finalBalance to change");
    await page.fill("#receipt-text", changed);
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#offline-verdict")?.dataset.ok === "false");
    const checks = await checksOf(page, "#offline-checks");
    const bad = checks.filter((c) => !c.ok).map((c) => c.name);
    assert(bad.includes("finalBalance"), `failed: ${bad}`);
  });
}

if (asOfPath) {
  const answer = readFileSync(asOfPath, "utf8");
  await test("a pasted balance as of a moment verifies, and a changed balance fails", async (page) => {
    await page.goto(`${base}/verify`);
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    await page.fill("#receipt-text", answer);
    await page.click("button[type=submit]");
    await page.waitForSelector("body[data-offline=done]");
    assert(await page.getAttribute("#offline-verdict", "data-ok") === "true",
      `the as-of answer did not verify: ${await page.innerText("#offline-result")}`);
    const checks = await checksOf(page, "#offline-checks");
    for (const name of ["treeHead", "order", "boundary", "balance", "deltasCount", "lastDelta"]) {
      assert(checks.some((c) => c.name === name && c.ok), `no passing ${name} among ${checks.map((c) => c.name)}`);
    }
    assert((await page.innerText("#offline-summary")).includes("as of"), await page.innerText("#offline-summary"));
    await page.screenshot({ path: join(artifacts, "verify-as-of.png"), fullPage: true });
    const doc = JSON.parse(answer);
    doc.data.asOf.balance = 99999;
    await page.evaluate(() => { delete document.body.dataset.offline; });
    await page.fill("#receipt-text", JSON.stringify(doc));
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#offline-verdict")?.dataset.ok === "false");
    const bad = (await checksOf(page, "#offline-checks")).filter((c) => !c.ok).map((c) => c.name);
    assert(bad.includes("balance"), `failed: ${bad}`);
  });
}

if (batchRoot) {
  await test("a withheld batch answer verifies and shows no amount or item hash", async (page) => {
    const answers = [];
    page.on("response", async (r) => {
      if (r.url().includes(`/api/v1/verify/${batchRoot}`)) answers.push(await r.text());
    });
    await page.goto(`${base}/verify/${batchRoot}`);
    await page.waitForSelector("body[data-state=done]", { timeout: CHECKS_TIMEOUT_MS });
    const checks = await checksOf(page, "#checks");
    const bad = checks.filter((c) => !c.ok);
    assert(bad.length === 0, `failed checks: ${JSON.stringify(bad, null, 1)}`);
    for (const name of ["records[0].inclusion", "records[1].inclusion", "itemsRoot", "verification.itemsRoot"]) {
      assert(checks.some((c) => c.name === name), `no ${name} check among ${checks.map((c) => c.name)}`);
    }
    assert(await page.getAttribute("#verdict", "data-ok") === "true", "verdict is not ok");
    assert((await page.innerText("#summary")).includes("withheld"), "the summary does not say amounts are withheld");
    const amounts = await page.$$eval("#records tbody tr td.amount", (tds) => tds.map((td) => td.textContent));
    assert(amounts.length >= 2 && amounts.every((a) => a === "withheld"), `amounts shown: ${amounts}`);
    assert(answers.length >= 1, "the page fetched no answer");
    for (const a of answers) {
      const data = JSON.parse(a).data;
      assert(data.summary.amountsWithheld === true, `not withheld: ${a.slice(0, 200)}`);
      assert(data.records.every((r) => !("itemHash" in r) && !("delta" in r) && /^[0-9a-f]{64}$/.test(r.logLeafHash)), `a record shows too much: ${a.slice(0, 400)}`);
    }
    await page.screenshot({ path: join(artifacts, "verify-withheld.png"), fullPage: true });
  });
}

await finish();
