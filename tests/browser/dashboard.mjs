// Browser test of the vendor dashboard, in headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core, against a running
// `wrangler dev` (DEV_MODE, so mail is read from the dev mailbox page).
//
//   node tests/browser/dashboard.mjs <baseUrl> <webhookReceiverUrl>
//
// One journey, mouse and keyboard only: sign up (a weak password and a
// reused e-mail refused), open the verification link from the dev mailbox,
// log in (a wrong password refused), Production refused on the Free plan in
// words, a Sandbox key (secret shown once), a webhook to the receiver with a
// test delivery, two deltas recorded and verified, a checkpoint committed,
// the receipt downloaded and its verify page passing every check, the
// environment switch, the password reset by e-mail and changed. Each page
// is saved at desktop (1280 px) and phone (390 px) width into
// tests/artifacts/dashboard-*.png; no page may scroll sideways on a phone.
// Exit status 0 only if every step passed.
import { chromium } from "playwright-core";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [base, hookUrl] = process.argv.slice(2);
if (!base || !hookUrl) {
  console.error("usage: node tests/browser/dashboard.mjs <baseUrl> <webhookReceiverUrl>");
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";
/** Verification, commits and deliveries take seconds; allow a minute. */
const ASYNC_TIMEOUT_MS = 60_000;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const artifacts = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
mkdirSync(artifacts, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), "bvs-chromium-"));

const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: DESKTOP,
  acceptDownloads: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
  ],
});
context.setDefaultTimeout(15_000);
// Pages that take a single-use token from the address bar must remove it
// before they show anything: record every moment a page's heading was in
// the document while the URL still held a token (a mutation observer sees
// the DOM as each task leaves it, so a removal scheduled after the paint
// is caught every time, not only when a screenshot happens to be slow).
await context.addInitScript(() => {
  window.__tokenShownAt = [];
  new MutationObserver(() => {
    const h1 = document.querySelector("main h1");
    if (/[?&]token=/.test(location.search) && h1) window.__tokenShownAt.push({ url: location.href, heading: h1.textContent });
  }).observe(document, { childList: true, subtree: true });
});
const page = context.pages()[0] ?? (await context.newPage());
/**
 * Fails if the page titled `heading` was ever in the document while the
 * URL held a token. (A link inside the app pushes the new URL a moment
 * before the new page renders; the old page's heading may be seen then.)
 */
async function tokenNeverShown(heading) {
  const seen = (await page.evaluate(() => window.__tokenShownAt ?? [])).filter((s) => s.heading === heading);
  assert(seen.length === 0, `"${heading}" was shown with the token in the address bar: ${seen[0]?.url}`);
  assert(!page.url().includes("token="), `the token stayed in the address bar: ${page.url()}`);
}
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));

const email = `dash-${process.pid}-${Date.now()}@example.com`;
const PASSWORD = "Correct-Horse-9";
const NEW_PASSWORD = "Battery-Staple-7";
const CUSTOMER = "cus_dash";
let passed = 0;
let failed = 0;
let broken = false;

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

async function step(name, body) {
  if (broken) {
    failed += 1;
    console.log(`not ok - ${name} (skipped: an earlier step failed)`);
    return;
  }
  const started = Date.now();
  try {
    await body();
    if (pageErrors.length) throw new Error(`errors in the page: ${pageErrors.join("; ")}`);
    passed += 1;
    console.log(`ok - ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed += 1;
    broken = true;
    console.log(`not ok - ${name}\n  ${String(e?.stack ?? e).replaceAll("\n", "\n  ")}`);
    await page.screenshot({ path: join(artifacts, `failed-dashboard-${name.replace(/\W+/g, "-")}.png`), fullPage: true }).catch(() => {});
  }
}

/** Saves the page at desktop and phone width; fails if the phone layout scrolls sideways. */
async function shot(name, p = page) {
  await p.setViewportSize(DESKTOP);
  await p.screenshot({ path: join(artifacts, `dashboard-${name}.png`), fullPage: true });
  await p.setViewportSize(PHONE);
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  // What sticks out, if anything: the outermost elements wider than the screen.
  const wide = overflow > 1 ? await p.evaluate(() => [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
    .filter((e) => {
      for (let a = e.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== "visible") return false;
      }
      return true;
    })
    .slice(0, 5)
    .map((e) => `${e.tagName.toLowerCase()}.${e.className}`)) : [];
  await p.screenshot({ path: join(artifacts, `dashboard-${name}-phone.png`), fullPage: true });
  await p.setViewportSize(DESKTOP);
  assert(overflow <= 1, `${name}: the page scrolls sideways on a phone by ${overflow}px (${wide.join(", ")})`);
}

async function heading(text) {
  await page.getByRole("heading", { level: 1, name: text }).waitFor();
}

async function errorText() {
  const box = page.locator(".box.error").first();
  await box.waitFor();
  return { text: await box.innerText(), status: await box.getAttribute("data-status") };
}

async function fillSignup(password) {
  await page.getByLabel("First name", { exact: true }).fill("Grace");
  await page.getByLabel("Last name", { exact: true }).fill("Hopper");
  await page.getByLabel("Company", { exact: true }).fill("Compilers Ltd");
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Create account" }).click();
}

async function nav(name, title) {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name, exact: true }).click();
  await heading(title ?? name);
}

await step("the start page leads to sign-up", async () => {
  await page.goto(`${base}/`);
  await heading("Balance verification service");
  await shot("home");
  await page.getByRole("link", { name: "Create an account" }).click();
  await heading("Create an account");
});

await step("a weak password is refused in the API's words", async () => {
  await fillSignup("weakpass");
  const { text, status } = await errorText();
  assert(status === "400", `status ${status}: ${text}`);
  assert(/password/i.test(text), `the error does not name the password: ${text}`);
  await shot("signup-weak-password");
});

await step("sign-up sends a verification e-mail", async () => {
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await heading("Check your e-mail");
  assert((await page.innerText("main")).includes(email), "the page does not name the address");
  await shot("signup-done");
});

await step("a reused e-mail is refused", async () => {
  await page.goto(`${base}/signup`);
  await heading("Create an account");
  await fillSignup(PASSWORD);
  const { text, status } = await errorText();
  assert(status === "409", `status ${status}: ${text}`);
  assert(/already exists/.test(text), text);
  await shot("signup-reused-email");
});

await step("the verification link from the dev mailbox activates the account", async () => {
  await page.getByRole("link", { name: "Dev mailbox" }).first().click();
  await heading("Dev mailbox");
  await page.getByLabel("Address", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Show mail" }).click();
  const mail = page.locator(".mail[data-kind=verify_email]");
  await mail.waitFor();
  await shot("mailbox");
  // The mail links to the dashboard's landing (which spends the token through
  // the API route); so does the mailbox's button.
  assert((await mail.locator("a[href*='/verify-email?token=']").count()) >= 1, "no link in the mail");
  assert((await mail.locator("a[href*='/dashboard/auth/verify?token=']").count()) === 0, "the mail links to the API route");
  await mail.getByRole("link", { name: "Verify in the dashboard" }).click();
  await page.locator("[data-verified=true]").waitFor();
  await tokenNeverShown("Verify your e-mail");
  assert(/verified/i.test(await page.innerText("main")), await page.innerText("main"));
  await shot("verify-email");
});

await step("a wrong password is refused", async () => {
  await page.getByRole("link", { name: "Log in" }).first().click();
  await heading("Log in");
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill("Wrong-Password-1");
  await page.getByRole("button", { name: "Log in" }).click();
  const { text, status } = await errorText();
  assert(status === "401", `status ${status}: ${text}`);
  await shot("login-wrong-password");
});

await step("logging in opens the overview", async () => {
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(`${base}/app`);
  await heading(/Welcome, Grace/);
  const stored = await page.evaluate(() => JSON.stringify(sessionStorage));
  assert(stored.includes("token"), "the JWT is not in session storage");
  assert(!page.url().includes("ey"), "a token in the URL");
  await page.locator("[data-usage-env=sandbox] [data-used]", { hasText: /^0$/ }).waitFor();
  assert((await page.locator("[data-plan]").innerText()) === "free", "the plan is shown");
  await shot("overview");
});

await step("a deep link works on reload", async () => {
  await page.goto(`${base}/app/settings`);
  await heading("Settings");
  await page.locator("dl.facts", { hasText: email }).waitFor();
  await shot("settings");
});

await step("provisioning Production on the Free plan is explained in words", async () => {
  await nav("Environments");
  await page.getByRole("button", { name: "Provision Production" }).click();
  const { text, status } = await errorText();
  assert(status === "403", `status ${status}: ${text}`);
  assert(/Free plan/.test(text) && /Pilot/.test(text), text);
  await shot("environments");
});

let sandboxKey = "";
await step("a Sandbox key is created and its secret shown once", async () => {
  await nav("API keys");
  await page.getByLabel("Name (optional)", { exact: true }).fill("dashboard test");
  await page.getByLabel("Environment of the key", { exact: true }).selectOption("sandbox");
  await page.getByRole("button", { name: "Create key" }).click();
  sandboxKey = (await page.locator("[data-secret]").innerText()).trim();
  assert(/^pk_test_[A-Za-z0-9]+\.[A-Za-z0-9]+$/.test(sandboxKey), `key: ${sandboxKey}`);
  assert(/only this once/.test(await page.innerText(".box.secret")), "no shown-once warning");
  await page.getByRole("button", { name: "Copy" }).click();
  await shot("keys-created");
  await page.reload();
  await heading("API keys");
  await page.locator(`tr td code:text("${sandboxKey.split(".")[0]}")`).waitFor();
  assert((await page.locator("[data-secret]").count()) === 0, "the secret is shown again after a reload");
  assert(!(await page.innerText("main")).includes(sandboxKey.split(".")[1]), "the secret is on the page again");
});

await step("a key is disabled, enabled and deleted with a confirmation", async () => {
  await page.getByLabel("Name (optional)", { exact: true }).fill("temporary");
  await page.getByRole("button", { name: "Create key" }).click();
  const temp = (await page.locator("[data-secret]").innerText()).trim();
  const row = page.locator("tr", { has: page.locator(`code:text("${temp.split(".")[0]}")`) });
  await row.getByRole("button", { name: "Disable" }).click();
  await row.locator("td[data-active=false]").waitFor();
  await row.getByRole("button", { name: "Enable" }).click();
  await row.locator("td[data-active=true]").waitFor();
  await row.getByRole("button", { name: "Delete" }).click();
  await row.getByRole("button", { name: "Delete key" }).waitFor();
  await shot("keys");
  await row.getByRole("button", { name: "Delete key" }).click();
  await row.waitFor({ state: "detached" });
});

await step("a webhook to the receiver is created and its test event delivered", async () => {
  await nav("Webhooks");
  await page.getByLabel("URL", { exact: true }).fill(hookUrl);
  await page.getByLabel("Description (optional)", { exact: true }).fill("dashboard test receiver");
  await page.getByRole("button", { name: "Add webhook" }).click();
  const secret = (await page.locator("[data-secret]").innerText()).trim();
  assert(secret.startsWith("whsec_"), `secret: ${secret}`);
  console.log(`webhook secret: ${secret}`);
  await page.getByRole("button", { name: "Send a test event" }).click();
  await page.locator("[data-test-status='200']").waitFor();
  await shot("webhooks");
  // Each webhook shows its own v1a public key (issue 40).
  const row = page.locator("li[data-webhook-id]");
  const publicKey = await row.locator("[data-public-key]").getAttribute("data-public-key");
  assert(publicKey && publicKey.startsWith("whpk_"), `public key: ${publicKey}`);
  // Rotating the secret shows the new one once; the old one keeps signing.
  await row.getByRole("button", { name: "Rotate secret" }).click();
  await row.getByRole("button", { name: "Rotate secret" }).click();
  const rotated = (await row.locator("[data-secret]").innerText()).trim();
  assert(rotated.startsWith("whsec_") && rotated !== secret, `rotated secret: ${rotated}`);
  console.log(`webhook rotated secret: ${rotated}`);
  await row.locator("[data-previous-until]").waitFor();
  const newKey = await row.locator("[data-new-public-key]").getAttribute("data-new-public-key");
  assert(newKey && newKey.startsWith("whpk_") && newKey !== publicKey, `rotated public key: ${newKey}`);
  await shot("webhook-rotated");
  await page.getByRole("link", { name: "Deliveries" }).click();
  await heading("Deliveries");
  await page.locator(".delivery[data-event=test] td[data-http-status='200']").waitFor();
  await shot("webhook-deliveries");
});

await step("deltas recorded in Sandbox turn verified", async () => {
  await nav("Customers");
  await page.locator(".empty").waitFor();
  await shot("customers-empty");
  await page.getByLabel("Customer id", { exact: true }).fill(CUSTOMER);
  await page.getByLabel("Amount", { exact: true }).fill("1250.75");
  await page.getByLabel("Reason", { exact: true }).fill("invoice 17");
  await page.getByRole("button", { name: "Record delta" }).click();
  await heading(`Customer ${CUSTOMER}`);
  await page.getByLabel("Amount", { exact: true }).fill("-0.25");
  await page.getByLabel("Reason", { exact: true }).fill("rounding credit");
  await page.getByRole("button", { name: "Record delta" }).click();
  await page.locator(".box.ok", { hasText: "Recorded -0.25" }).waitFor();
  await page.waitForFunction(
    () => document.querySelectorAll("#deltas tbody tr[data-verified=true]").length === 2,
    null,
    { timeout: ASYNC_TIMEOUT_MS },
  );
  await page.locator("[data-balance='1250.5']").waitFor({ timeout: ASYNC_TIMEOUT_MS });
  const links = await page.$$eval("#deltas a[href^='/verify/']", (as) => as.map((a) => a.getAttribute("href")));
  assert(links.length === 2, `verify links: ${links}`);
  await shot("customer");
});

await step("a checkpoint is committed", async () => {
  await page.getByRole("button", { name: "Commit checkpoint" }).click();
  await page.locator("#checkpoints tr[data-status=COMMITTED]").waitFor({ timeout: ASYNC_TIMEOUT_MS });
});

await step("the witness status shows each witness's last cosigned size and time", async () => {
  // BVS_WITNESSES: how many local witnesses the server runs with (the
  // Rust side starts them); the committed checkpoint's head becomes
  // witnessed once a quorum cosigned it, so the receipt below proves into
  // a witnessed head.
  const count = Number(process.env.BVS_WITNESSES ?? 0);
  await nav("Witnesses");
  const log = page.locator("[data-log=sandbox]");
  await log.waitFor();
  if (count === 0) {
    assert((await log.innerText()).includes("witnesses: none configured"), await log.innerText());
  } else {
    const rows = log.locator("tr[data-witness]");
    const summary = log.locator("[data-witnessed-size]");
    for (let i = 0; ; i++) {
      const text = await summary.innerText();
      const size = await summary.getAttribute("data-witnessed-size");
      if (size && text.includes("witnessed.") && (await log.locator("tr[data-status=cosigned]").count()) >= 2) break;
      assert(i < 60, `not witnessed within a minute: ${await log.innerText()}`);
      await page.waitForTimeout(1000);
      await page.getByRole("button", { name: "Refresh" }).click();
    }
    assert((await rows.count()) === count, `${await rows.count()} witnesses shown`);
    const first = await log.locator("tr[data-status=cosigned]").first().innerText();
    assert(/Cosigned/.test(first) && /\d+/.test(first) && / UTC/.test(first), first);
    assert((await log.innerText()).includes("2 of"), await log.innerText());
    // Keyboard: the table's scroll region takes focus (as every table's).
    assert((await log.locator(".table-wrap[tabindex='0']").count()) === 1, "the witness table is not focusable");
  }
  await shot("witnesses");
  await page.goBack();
  await page.getByRole("button", { name: "Get receipt" }).waitFor();
});

let receiptId = "";
await step("the receipt downloads as the API's JSON", async () => {
  await page.getByRole("button", { name: "Get receipt" }).click();
  const box = page.locator("[data-receipt]");
  await box.waitFor();
  receiptId = await box.getAttribute("data-receipt");
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Download JSON" }).click(),
  ]);
  const saved = join(artifacts, "dashboard-receipt.json");
  await download.saveAs(saved);
  const text = readFileSync(saved, "utf8");
  const receipt = JSON.parse(text);
  assert(receipt.data.receiptId === receiptId, `downloaded ${receipt.data.receiptId}, shown ${receiptId}`);
  assert(receipt.data.deltasCount === 2, `deltasCount ${receipt.data.deltasCount}`);
  assert(text.includes('"finalBalance":1250.5'), "the final balance is not the exact 1250.5");
  await shot("customer-receipt");
});

await step("the receipt's verify page passes every check", async () => {
  const [verify] = await Promise.all([
    context.waitForEvent("page"),
    page.getByRole("link", { name: "Open the verify page" }).click(),
  ]);
  await verify.waitForSelector("body[data-state=done]", { timeout: ASYNC_TIMEOUT_MS });
  assert(verify.url().endsWith(`/verify/${receiptId}`), verify.url());
  assert((await verify.getAttribute("#verdict", "data-ok")) === "true", await verify.innerText("#verdict"));
  const failedChecks = await verify.$$eval("#checks li.check[data-ok=false]", (l) => l.length);
  assert(failedChecks === 0, `${failedChecks} checks failed`);
  await shot("verify-page", verify);
  await verify.close();
});

await step("the customer list shows the ledger", async () => {
  await nav("Customers");
  const row = page.locator(`tr[data-customer=${CUSTOMER}]`);
  await row.waitFor();
  assert((await row.innerText()).includes("1250.5"), await row.innerText());
  await shot("customers");
});

await step("the overview counts this month's usage against the plan", async () => {
  await nav("Overview", /Welcome, Grace/);
  await page.locator("[data-usage-env=sandbox] [data-used]", { hasText: /^2$/ }).waitFor();
  const row = await page.locator("[data-usage-env=sandbox]").innerText();
  assert(/\b2\b[\s\S]*\b10\b[\s\S]*\b8\b/.test(row), `sandbox usage row: ${row}`);
  await shot("overview-usage");
});

await step("the webhook received delta.verified", async () => {
  await nav("Webhooks");
  await page.getByRole("link", { name: "Deliveries" }).click();
  await heading("Deliveries");
  const deadline = Date.now() + ASYNC_TIMEOUT_MS;
  for (let i = 1; ; i++) {
    if ((await page.locator(".delivery[data-event='delta.verified'] td[data-http-status='200']").count()) > 0) break;
    assert(Date.now() < deadline, "no delivered delta.verified event");
    // The every-minute sweep re-rings lost deliveries; run it now and then.
    if (i % 5 === 0) await fetch(`${base}/cdn-cgi/local/scheduled?cron=*+*+*+*+*`).catch(() => {});
    await page.waitForTimeout(2000);
    await page.getByRole("button", { name: "Refresh" }).click();
  }
  await shot("webhook-deliveries-verified");
});

// ---------------------------------------------------------------- issue 30: logs, events, charts, search

/** Runs the header's search box with the keyboard. */
async function searchFor(q) {
  const box = page.getByRole("searchbox", { name: "Search by id" });
  await box.fill(q);
  await box.press("Enter");
}

await step("the overview charts deltas per day and the verification lag", async () => {
  await nav("Overview", /Welcome, Grace/);
  // The figures are counted as the events go out: both deltas' by now, or in a moment.
  const today = new Date().toISOString().slice(0, 10);
  const row = page.locator("table[data-chart-table=deltas-per-day] tr", { hasText: today });
  for (let i = 0; ; i++) {
    await page.locator("figure[data-chart=deltas-per-day][data-drawn=true]").waitFor({ timeout: ASYNC_TIMEOUT_MS });
    if (/\t2\t/.test(`${await row.innerText()}\t`)) break;
    assert(i < 20, `today's row: ${await row.innerText()}`);
    await page.waitForTimeout(1500);
    await page.reload();
  }
  await page.locator("figure[data-chart=verification-lag][data-drawn=true]").waitFor({ timeout: ASYNC_TIMEOUT_MS });
  // The table is one button away, for everyone.
  await page.locator("figure[data-chart=deltas-per-day]").getByRole("button", { name: "Show as a table" }).click();
  await page.locator("figure[data-chart=deltas-per-day] .table-wrap table").waitFor();
  await shot("overview-charts");
});

let failedId = "";
await step("a failed request is found by its Request-Id", async () => {
  // What a vendor's integration sees: a 400 naming the field, and its Request-Id.
  const bad = await fetch(`${base}/api/v1/balance/delta`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": sandboxKey },
    body: JSON.stringify({ customerId: CUSTOMER, delta: 5 }),
  });
  const answer = await bad.json();
  assert(bad.status === 400 && /reason/.test(answer.message), `${bad.status}: ${JSON.stringify(answer)}`);
  failedId = answer.requestId;
  assert(failedId && bad.headers.get("request-id") === failedId, `request id ${failedId}`);
  // The header's search box goes straight to it (the log is written a moment after the answer).
  const detail = page.locator(`[data-request='${failedId}'][data-status='400']`);
  for (let i = 0; ; i++) {
    await searchFor(failedId);
    try {
      await detail.waitFor({ timeout: 3000 });
      break;
    } catch (e) {
      assert(i < 10, `the request never showed: ${await page.innerText("main")}`);
    }
  }
  assert(page.url().endsWith(`/app/logs/${failedId}`), page.url());
  const main = await page.innerText("main");
  assert(main.includes('"customerId": "cus_dash"') && main.includes("validation_failed") && /reason/.test(main), main);
  await shot("request");
  await nav("Logs", "Request log");
  await page.getByLabel("Status", { exact: true }).selectOption("4xx");
  await page.getByRole("button", { name: "Show requests" }).click();
  // The filtered page: the failed request, and no request that succeeded.
  await page.waitForFunction((id) => {
    const rows = [...document.querySelectorAll("#requests tr[data-status]")];
    return rows.some((r) => r.dataset.requestId === id) && rows.every((r) => Number(r.dataset.status) >= 400);
  }, failedId);
  await shot("logs");
});

await step("an event is resent and its new attempt shown", async () => {
  await nav("Events");
  const row = page.locator("#events tr[data-type='delta.verified']").first();
  for (let i = 0; ; i++) {
    await row.waitFor();
    if (/1 of 1 delivered/.test(await row.innerText())) break;
    assert(i < 30, await row.innerText());
    await page.waitForTimeout(1000);
    await page.getByRole("button", { name: "Refresh" }).click();
  }
  await shot("events");
  await row.getByRole("link", { name: "delta.verified" }).click();
  await heading(/Event delta\.verified/);
  const delivery = page.locator(".delivery[data-status=succeeded]").first();
  await delivery.locator("[data-attempt='1'] td[data-http-status='200']").waitFor();
  const resend = delivery.getByRole("button", { name: /Resend/ });
  await resend.focus();
  await page.keyboard.press("Enter");
  await delivery.locator("[data-attempt='2'] td[data-http-status='200']").waitFor({ timeout: ASYNC_TIMEOUT_MS });
  await delivery.locator(".box.ok", { hasText: "HTTP 200" }).waitFor();
  assert((await page.innerText("main")).includes('"customerId": "cus_dash"'), "the payload is shown");
  await shot("event");
});

let anchorId = "";
let submissionRoot = "";
await step("a customer's balance chart has a point per verified delta", async () => {
  await nav("Customers");
  await page.getByRole("link", { name: CUSTOMER, exact: true }).click();
  await heading(`Customer ${CUSTOMER}`);
  const chart = page.locator("figure[data-chart=balance][data-drawn=true]");
  await chart.waitFor({ timeout: ASYNC_TIMEOUT_MS });
  assert((await chart.getAttribute("data-points")) === "2", `points: ${await chart.getAttribute("data-points")}`);
  assert((await chart.locator("canvas").count()) >= 1, "no canvas");
  const rows = await chart.locator("table[data-chart-table=balance] tbody tr").allInnerTexts();
  assert(rows.length === 2 && rows[0].includes("1250.75") && rows[1].includes("1250.5"), rows.join(" | "));
  anchorId = await page.locator("#deltas tr[data-anchor]").first().getAttribute("data-anchor");
  submissionRoot = (await page.locator("#deltas a[href^='/verify/']").first().getAttribute("href")).slice("/verify/".length);
  await shot("customer-chart");
});

await step("search finds a delta by its anchorId and objects by a proof root", async () => {
  await searchFor(anchorId);
  await heading("Search");
  const hit = page.locator(`#search-results [data-kind=delta][data-id='${anchorId}']`);
  await hit.waitFor();
  assert((await hit.innerText()).includes(`Customer ${CUSTOMER}`), await hit.innerText());
  await shot("search");
  await searchFor(receiptId);
  await page.locator(`#search-results [data-kind=receipt][data-id='${receiptId}']`).waitFor();
  await searchFor(submissionRoot);
  const sub = page.locator("#search-results [data-kind=submission]").first();
  await sub.waitFor();
  await sub.getByRole("link", { name: `Customer ${CUSTOMER}` }).click();
  await heading(`Customer ${CUSTOMER}`);
});

await step("one customer among 250 is found by prefix", async () => {
  // The operator moves the account to Enterprise (250 deltas are past the
  // Free plan's 10); the vendor's code records a delta for each customer.
  const plan = await fetch(`${base}/admin/tenants/${await tenantId()}/plan`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.BVS_ADMIN_TOKEN}` },
    body: JSON.stringify({ plan: "enterprise" }),
  });
  assert(plan.status === 200, `plan: ${plan.status} ${await plan.text()}`);
  for (let from = 0; from < 250; from += 100) {
    const deltas = [];
    for (let i = from; i < Math.min(250, from + 100); i++) {
      deltas.push({ customerId: `cus_many_${String(i).padStart(3, "0")}`, delta: 1, reason: "many" });
    }
    const r = await fetch(`${base}/api/v1/balance/delta/batch`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": sandboxKey },
      body: JSON.stringify({ deltas }),
    });
    assert(r.status === 202, `batch: ${r.status} ${await r.text()}`);
  }
  await nav("Customers");
  await page.getByLabel("Customer id starts with", { exact: true }).fill("cus_many_1");
  await page.getByRole("button", { name: "Find", exact: true }).click();
  await page.locator("[data-found='100']").waitFor();
  await page.getByLabel("Customer id starts with", { exact: true }).fill("cus_many_137");
  await page.getByLabel("Customer id starts with", { exact: true }).press("Enter");
  await page.locator("[data-found='1']").waitFor();
  const rows = page.locator("tr[data-customer]");
  assert((await rows.count()) === 1 && (await rows.first().getAttribute("data-customer")) === "cus_many_137", await page.innerText("main"));
  await shot("customers-search");
  await page.getByRole("link", { name: "cus_many_137", exact: true }).click();
  await heading("Customer cus_many_137");
});

/** The signed-in tenant's id, from the profile route. */
async function tenantId() {
  const jwt = await page.evaluate(() => JSON.parse(sessionStorage.getItem("bvs.session")).token);
  const r = await fetch(`${base}/dashboard/auth/profile`, { headers: { authorization: `Bearer ${jwt}` } });
  return (await r.json()).data.tenantId;
}

await step("the environment switch shows Production and is remembered", async () => {
  await nav("Customers");
  await page.getByLabel("Environment", { exact: true }).selectOption("production");
  await page.locator(".env-banner").waitFor();
  await page.locator("[data-needs-key]", { hasText: "Production API key" }).waitFor();
  await shot("customers-production");
  await page.reload();
  await heading("Customers");
  assert((await page.getByLabel("Environment", { exact: true }).inputValue()) === "production", "not remembered");
  await page.getByLabel("Environment", { exact: true }).selectOption("sandbox");
  await page.locator(`tr[data-customer=${CUSTOMER}]`).waitFor();
});

await step("a webhook is paused and resumed", async () => {
  await nav("Webhooks");
  await page.getByRole("button", { name: "Pause" }).click();
  await page.locator("[data-active=false]").waitFor();
  await page.getByRole("button", { name: "Resume" }).click();
  await page.locator("[data-active=true]").waitFor();
});

await step("logging out ends the session", async () => {
  await page.getByRole("button", { name: "Log out" }).click();
  await heading("Log in");
  assert((await page.innerText("main")).includes("logged out"), await page.innerText("main"));
  await page.goto(`${base}/app/keys`);
  await heading("Log in");
  await shot("login");
});

await step("a forgotten password is reset through the e-mailed link", async () => {
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await heading("Forgot your password?");
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Send the link" }).click();
  await page.locator(".box.ok").waitFor();
  await shot("forgot-password");
  // The reset mail is sent by the queue consumer: reload the mailbox until it is there.
  const resetLink = page.locator(".mail[data-kind=reset_password] a[href*='/reset-password?token=']");
  for (let i = 0; i < 40; i++) {
    await page.goto(`${base}/mailbox?to=${encodeURIComponent(email)}`);
    await page.waitForLoadState("networkidle");
    if ((await resetLink.count()) > 0) break;
    await page.waitForTimeout(500);
  }
  await resetLink.first().click();
  await heading("Choose a new password");
  await tokenNeverShown("Choose a new password");
  await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Save the new password" }).click();
  await page.locator(".box.ok").waitFor();
  await shot("reset-password");
  await page.getByRole("link", { name: "Log in" }).last().click();
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await heading(/Welcome, Grace/);
});

await step("changing the password checks the current one, then logs out", async () => {
  await nav("Settings");
  await page.getByLabel("Current password", { exact: true }).fill("Not-The-One-1");
  await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Change password" }).click();
  const { text, status } = await errorText();
  assert(status === "400" && /currentPassword/.test(text), `status ${status}: ${text}`);
  await shot("settings-wrong-password");
  await page.getByLabel("Current password", { exact: true }).fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Change password" }).click();
  await heading("Log in");
  assert(/Password changed/.test(await page.innerText("main")), await page.innerText("main"));
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await heading(/Welcome, Grace/);
});

await context.close();
rmSync(profile, { recursive: true, force: true });
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
