//! Proof of liabilities through the service (issue 31 part B,
//! docs/liabilities.md §9): a tenant with 200 customers (positive, zero
//! and negative balances) gets a statement of the closed month from the
//! cron, it is published in the log, every customer's proof verifies with
//! `bvs-verify liabilities`, the total is the sum of derive's positive
//! balances, tampered documents fail, and the statement's answer shows no
//! leaf. Both SDKs check a customer's proof too (`sdks`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Co-signing inclusion with the period's agreement (issue 31 part D).
#[path = "liabilities/cosign.rs"]
mod cosign;
// A second statement of the period supersedes the first (part D).
#[path = "liabilities/supersede.rs"]
mod supersede;
// Statements' leaves follow the retention window (part D).
#[path = "liabilities/retention.rs"]
mod retention;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bvs_core::amount::Amount;
use bvs_core::types::Period;
use bvs_tests::client::{api, Keyed};
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{bvs_verify_bin, eventually, repo_root, run_ok};
use serde_json::{json, Value};

const CUSTOMERS: usize = 200;

/// Customer `i`'s deltas in cents: positive, zero (credited then spent)
/// or negative (owes the vendor).
fn deltas_of(i: usize) -> Vec<i64> {
    let base = i64::try_from(i).unwrap() * 137 + 1;
    match i % 4 {
        0 => vec![base, -base],
        1 => vec![base, -(2 * base) - 5],
        _ => vec![base * 3, -(base / 2)],
    }
}

fn cents(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
}

fn customer(i: usize) -> String {
    format!("liab-{i:03}")
}

/// Every customer's deltas, in batches, each waited on until verified.
fn emit_all(k: &Keyed<'_>) {
    let mut items = Vec::new();
    for round in 0..2 {
        for i in 0..CUSTOMERS {
            let d = deltas_of(i)[round];
            items.push(json!({
                "customerId": customer(i),
                "delta": serde_json::from_str::<Value>(&cents(d)).unwrap(),
                "reason": "liabilities test",
            }));
        }
    }
    let mut last = Vec::new();
    for chunk in items.chunks(100) {
        let r = k.batch(chunk);
        assert_eq!(r.status, 202, "{}", r.text);
        let deltas = r.body["data"]["results"].as_array().unwrap();
        last.push(
            deltas.last().unwrap()["anchorId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for a in last {
        k.wait_anchored(&a);
    }
}

fn post_statement(k: &Keyed<'_>, body: &Value) -> bvs_tests::client::Reply {
    k.post("/api/v1/liabilities", body)
}

/// `bvs-verify`, built once for the binary (each `bvs_verify_bin` call
/// runs cargo).
fn cli_path() -> &'static std::path::PathBuf {
    static CLI: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    CLI.get_or_init(bvs_verify_bin)
}

fn cli(args: &[&str]) -> (bool, String) {
    let out = Command::new(cli_path())
        .args(args)
        .output()
        .expect("bvs-verify runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `bvs-verify liabilities` as customer `who` checks a proof.
fn verify_file(path: &Path, who: &str, key: &str, balance: Option<&str>) -> (bool, String) {
    let p = path.to_str().unwrap();
    match balance {
        Some(b) => cli(&[
            "liabilities",
            p,
            "--customer",
            who,
            "--key",
            key,
            "--balance",
            b,
        ]),
        None => cli(&["liabilities", p, "--customer", who, "--key", key]),
    }
}

/// A statement covers the months from the tenant's first delta's to the
/// last closed one (issue 40): a key cannot store a statement row and
/// queue a job for every month back to `0000-01`.
#[test]
fn a_period_before_the_first_delta_is_refused_and_nothing_is_stored() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let period = Period::containing(i64::try_from(now_ms()).unwrap());
    let earlier = Period::containing(period.start_ms() - 1).to_string();
    let refused = |p: &str, why: &str| {
        let r = post_statement(&k, &json!({"environment": "sandbox", "period": p}));
        assert_eq!(r.status, 400, "{why}: {}", r.text);
        assert_eq!(r.body["code"], "validation_failed", "{why}: {}", r.text);
        assert_eq!(r.body["field"], "period", "{why}: {}", r.text);
        let listed = k.get(&format!("/api/v1/liabilities?period={p}"));
        assert_eq!(listed.status, 200, "{}", listed.text);
        assert_eq!(
            listed.body["data"]["statements"],
            json!([]),
            "{why}: {}",
            listed.text
        );
    };
    // No delta yet: no month has anything to state.
    refused(&earlier, "no delta yet");
    refused("0001-01", "no delta yet");

    let r = k.batch(&[json!({"customerId": "liab-first", "delta": 5, "reason": "first"})]);
    assert_eq!(r.status, 202, "{}", r.text);
    k.wait_anchored(r.body["data"]["results"][0]["anchorId"].as_str().unwrap());

    // The first delta is this month's: every earlier month is refused,
    // however far back; this month is still only not closed yet.
    refused(&earlier, "before the first delta");
    refused("0001-01", "before the first delta");
    let open = post_statement(
        &k,
        &json!({"environment": "sandbox", "period": period.to_string()}),
    );
    assert_eq!(open.status, 409, "{}", open.text);
    assert_eq!(open.body["code"], "period_not_closed", "{}", open.text);
}

#[test]
fn a_closed_months_statement_is_published_and_every_customers_proof_verifies() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    emit_all(&k);
    // One customer's checkpoint of the month: its merkleRoot is what the
    // customer holds, and what opens its proof without the vendor's key.
    let checkpointed = 2;
    let cp = k.checkpoint(&json!({ "customerId": customer(checkpointed) }));
    assert_eq!(cp.status, 202, "{}", cp.text);
    // And another's, who agrees before it co-signs its inclusion.
    let agreed_first = 6;
    let cp2 = k.checkpoint(&json!({ "customerId": customer(agreed_first) }));
    assert_eq!(cp2.status, 202, "{}", cp2.text);
    let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
    let cp_root = committed["merkleRoot"].as_str().unwrap().to_owned();
    let committed2 = k.wait_committed(cp2.body["data"]["checkpointId"].as_str().unwrap());
    let cp2_root = committed2["merkleRoot"].as_str().unwrap().to_owned();

    let now = now_ms();
    let period = Period::containing(i64::try_from(now).unwrap());
    let period_text = period.to_string();

    // The month is not over: no statement yet; a wrong environment or
    // period is a 400 naming the field.
    let open = post_statement(
        &k,
        &json!({"environment": "sandbox", "period": period_text}),
    );
    assert_eq!(open.status, 409, "{}", open.text);
    assert_eq!(open.body["code"], "period_not_closed", "{}", open.text);
    let wrong = post_statement(
        &k,
        &json!({"environment": "production", "period": "2020-13"}),
    );
    assert_eq!(wrong.status, 400, "{}", wrong.text);
    assert!(wrong.text.contains("environment"), "{}", wrong.text);
    assert!(wrong.text.contains("period"), "{}", wrong.text);

    // The cron, a minute into next month, starts the closed month's
    // statement; the job and the sequencer publish it.
    let next_month = u64::try_from(period.end_ms()).unwrap();
    sweep(&api, next_month + 60_000);
    let query = format!("/api/v1/liabilities?period={period_text}");
    let statement = eventually(Duration::from_secs(120), "the statement published", || {
        let r = k.get(&query);
        assert_eq!(r.status, 200, "{}", r.text);
        let s = r.body["data"]["statements"][0].clone();
        assert_ne!(s["status"], "failed", "{s}");
        (s["status"] == "published").then_some(s)
    });
    let id = statement["id"].as_str().unwrap();
    let by_id = k.get(&format!("/api/v1/liabilities/{id}"));
    assert_eq!(by_id.status, 200, "{}", by_id.text);
    assert_eq!(by_id.body["data"], statement);
    assert_eq!(statement["ledgersSnapshotted"], CUSTOMERS);
    assert_eq!(statement["ledgersBuilt"], CUSTOMERS);
    assert_eq!(statement["liabilities"]["leafCount"], CUSTOMERS);
    assert!(statement["leafIndex"].is_u64(), "{statement}");
    assert!(statement["supersedes"].is_null(), "{statement}");

    // The statement's answer shows no leaf: no customer, ledger id or salt.
    for secret in ["liab-", "salt", "ledgerId", "seed", "builder"] {
        assert!(!by_id.text.contains(secret), "{secret} in {}", by_id.text);
    }

    // Public verify of the statement's hash: the statement and its log
    // proof, no leaf; `bvs-verify public` checks it.
    let hash = statement["statementHash"].as_str().unwrap();
    let public = api.get(&format!("/api/v1/verify/{hash}"));
    assert_eq!(public.status, 200, "{}", public.text);
    assert_eq!(
        public.body["data"]["kind"], "liabilities",
        "{}",
        public.text
    );
    assert_eq!(public.body["data"]["period"], period_text.as_str());
    for secret in ["liab-", "salt", "ledgerId", "\"path\"", "seed"] {
        assert!(!public.text.contains(secret), "{secret} in {}", public.text);
    }
    let answer_path = repo_root().join("target/liabilities-public.json");
    std::fs::write(&answer_path, &public.text).unwrap();

    // The totals are derive's: positives owed, negatives owed to the vendor.
    let mut owed = Amount::ZERO;
    let mut due = Amount::ZERO;
    let mut negatives = 0u64;
    let mut balances = Vec::new();
    for i in 0..CUSTOMERS {
        let d = k.derive(&customer(i), "");
        assert_eq!(d.status, 200, "{}", d.text);
        let b = Amount::parse(&d.body["data"]["computedBalance"].to_string()).unwrap();
        let want: i64 = deltas_of(i).iter().sum();
        assert_eq!(b, Amount::parse(&cents(want)).unwrap(), "customer {i}");
        if b.signum() > 0 {
            owed = owed.checked_add(b).unwrap();
        } else if b.signum() < 0 {
            due = due.checked_add(b.checked_neg().unwrap()).unwrap();
            negatives += 1;
        }
        balances.push(b);
    }
    assert_eq!(statement["liabilities"]["total"], owed.to_string());
    assert_eq!(statement["receivables"]["total"], due.to_string());
    assert_eq!(statement["receivables"]["leafCount"], negatives);

    // Every customer's proof verifies against the pinned log key, with the
    // balance derive gives.
    let key_reply = api.get("/api/v1/log/sandbox/key");
    assert_eq!(key_reply.status, 200, "{}", key_reply.text);
    let key = key_reply.body["data"]["verifierKey"]
        .as_str()
        .or_else(|| key_reply.body["verifierKey"].as_str())
        .unwrap_or_else(|| panic!("no verifierKey: {}", key_reply.text))
        .to_owned();
    let (ok, out) = cli(&["public", answer_path.to_str().unwrap(), "--key", &key]);
    assert!(ok && out.contains("VERIFIED"), "{out}");
    let dir = repo_root().join("target/liabilities-proofs");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut docs = Vec::new();
    for (i, balance) in balances.iter().enumerate() {
        let r = k.get(&format!(
            "/api/v1/balance/customers/{}/liabilities-proof?period={period_text}",
            customer(i)
        ));
        assert_eq!(r.status, 200, "{}", r.text);
        let doc = r.raw_data().to_owned();
        std::fs::write(dir.join(format!("{}.json", customer(i))), &doc).unwrap();
        if balance.signum() < 0 {
            assert!(doc.contains("\"receivables\":{"), "customer {i}: {doc}");
        } else {
            assert!(doc.contains("\"receivables\":null"), "customer {i}: {doc}");
        }
        docs.push(doc);
    }
    // Each customer checks its own, with the balance it knows: the CLI
    // runs four at a time.
    std::thread::scope(|scope| {
        for lane in 0..4 {
            let (dir, key, balances) = (&dir, &key, &balances);
            scope.spawn(move || {
                for i in (lane..CUSTOMERS).step_by(4) {
                    let path = dir.join(format!("{}.json", customer(i)));
                    let (ok, out) =
                        verify_file(&path, &customer(i), key, Some(&balances[i].to_string()));
                    assert!(ok, "customer {i}: {out}");
                    assert!(out.contains("VERIFIED"), "customer {i}: {out}");
                }
            });
        }
    });
    customer_side(
        &api,
        &k,
        &key,
        &period_text,
        (checkpointed, &cp_root),
        &docs[checkpointed],
    );
    cosign::cosign_inclusion(
        &api,
        &k,
        &customer(checkpointed),
        &cp_root,
        &docs[checkpointed],
    );
    cosign::cosign_after_agreeing(
        &api,
        &k,
        &customer(agreed_first),
        &cp2_root,
        &docs[agreed_first],
    );
    let positive = (0..CUSTOMERS).find(|i| balances[*i].signum() > 0).unwrap();
    sdks(
        &api.base,
        &t.test_key,
        &key,
        &period_text,
        (&customer(positive), &balances[positive].to_string()),
        (checkpointed, &cp_root),
    );
    // A customer with no leaf (no delta) has no proof.
    let none = k.get(&format!(
        "/api/v1/balance/customers/nobody/liabilities-proof?period={period_text}"
    ));
    assert_eq!(none.status, 404, "{}", none.text);

    // Tampered documents fail the customer's check.
    let tampered = |name: &str, doc: String, balance: Option<&str>| {
        let path = dir.join(format!("tampered-{name}.json"));
        std::fs::write(&path, doc).unwrap();
        let (ok, out) = verify_file(&path, &customer(positive), &key, balance);
        assert!(!ok, "{name}: the tampered proof verified: {out}");
        out
    };
    let doc = &docs[positive];
    let b = balances[positive].to_string();
    // A changed amount: the leaf says less than the balance.
    let out = tampered(
        "amount",
        doc.replacen(&format!("\"amount\":{b}"), "\"amount\":0.01", 1),
        Some(&b),
    );
    assert!(out.contains("liabilities.amount"), "{out}");
    // A changed balance and leaf together: the path no longer adds up.
    let changed = doc
        .replacen(&format!("\"balance\":{b}"), "\"balance\":0.01", 1)
        .replacen(&format!("\"amount\":{b}"), "\"amount\":0.01", 1);
    let out = tampered("balance-and-leaf", changed, None);
    assert!(out.contains("liabilities.path"), "{out}");
    // A negative sibling sum (a negative leaf hidden in the subtree).
    let first_sum = doc.find("\"sum\":").unwrap() + "\"sum\":".len();
    let end = first_sum + doc[first_sum..].find('}').unwrap();
    let negative = format!("{}-5{}", &doc[..first_sum], &doc[end..]);
    let out = tampered("negative-sibling", negative, None);
    assert!(out.contains("liabilities.path"), "{out}");
    // A sibling sum that does not match its children.
    let bumped = format!("{}123456{}", &doc[..first_sum], &doc[end..]);
    let out = tampered("sum-mismatch", bumped, None);
    assert!(out.contains("liabilities.path"), "{out}");
    // A statement claiming one customer fewer (one left out).
    let count = format!("\"leafCount\":{CUSTOMERS}");
    let fewer = doc.replacen(&count, &format!("\"leafCount\":{}", CUSTOMERS - 1), 1);
    let out = tampered("omitted", fewer, None);
    assert!(out.contains("statementHash"), "{out}");
    // Another customer's leaf handed out as this one's.
    let other = (0..CUSTOMERS)
        .find(|i| *i != positive && balances[*i] == balances[positive])
        .map_or_else(
            || docs[(positive + 4) % CUSTOMERS].clone(),
            |i| docs[i].clone(),
        );
    let swapped = other.replacen(
        &format!(
            "\"customerId\":\"{}\"",
            customer((positive + 4) % CUSTOMERS)
        ),
        &format!("\"customerId\":\"{}\"", customer(positive)),
        1,
    );
    let out = tampered("swapped", swapped, Some(&b));
    assert!(out.contains("FAIL"), "{out}");
    // Issue 40: another customer's proof with its customerId taken out (as
    // a vendor that left this customer out of the total would hand it, and
    // as the public route answers), of the same balance where one has it:
    // it fails for the customer checking it, and passes for its own.
    let other_i = (0..CUSTOMERS)
        .find(|i| *i != positive && balances[*i] == balances[positive])
        .unwrap_or((positive + 4) % CUSTOMERS);
    let unnamed = docs[other_i].replacen(
        &format!("\"customerId\":\"{}\"", customer(other_i)),
        "\"customerId\":null",
        1,
    );
    assert_ne!(unnamed, docs[other_i]);
    let out = tampered("unnamed", unnamed.clone(), Some(&b));
    assert!(out.contains("FAIL  customer.ledgerId"), "{out}");
    let path = dir.join("unnamed-own.json");
    std::fs::write(&path, &unnamed).unwrap();
    let own_balance = balances[other_i].to_string();
    let (ok, out) = verify_file(&path, &customer(other_i), &key, Some(&own_balance));
    assert!(ok, "{out}");

    // A second statement of the period supersedes the first; the
    // customer's proof is then the second's.
    let second = supersede::second_supersedes_first(
        &api,
        &k,
        &key,
        &period_text,
        next_month + 120_000,
        &statement,
        cli,
    );
    let r = k.get(&format!(
        "/api/v1/balance/customers/{}/liabilities-proof?period={period_text}",
        customer(positive)
    ));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["statementHash"], second["statementHash"]);

    // Past the tenant's retention window, both statements' leaves go.
    let first = k.get(&format!("/api/v1/liabilities/{id}")).body["data"].clone();
    retention::purged_past_the_window(
        &api,
        &t,
        &k,
        (
            &period_text,
            &customer(checkpointed),
            &cp_root,
            (next_month + 120_000).max(now_ms()),
        ),
        &[&first, &second],
        cli,
        &key,
    );
}

/// The customer's side (docs/liabilities.md §10): its checkpoint's
/// merkleRoot opens the same proof without the vendor's key, and the
/// period's receipt carries it, tied to `finalBalance` by `bvs-verify
/// receipt`.
fn customer_side(
    api: &bvs_tests::client::Api,
    k: &Keyed<'_>,
    key: &str,
    period: &str,
    (checkpointed, root): (usize, &str),
    vendors: &str,
) {
    let mine = api.get(&format!("/api/v1/agreement/liabilities-proof/{root}"));
    assert_eq!(mine.status, 200, "{}", mine.text);
    // A bare root holder is not told the vendor's name for the customer
    // (issue 40); the ledger and balance are the vendor's document's.
    let customer_of = &mine.body["data"]["customer"];
    assert!(customer_of["customerId"].is_null(), "{}", mine.text);
    assert!(
        !mine.text.contains(&customer(checkpointed)),
        "{}",
        mine.text
    );
    // The same document (its log evidence is into the latest head).
    let vendors: Value = serde_json::from_str(vendors).unwrap();
    let same = |doc: &Value| {
        for field in ["statementHash", "liabilities", "receivables"] {
            assert_eq!(doc[field], vendors[field], "{field}: {doc}");
        }
        for field in ["ledgerId", "balance"] {
            assert_eq!(
                doc["customer"][field], vendors["customer"][field],
                "{field}: {doc}"
            );
        }
    };
    same(&mine.body["data"]);
    let bad = api.get("/api/v1/agreement/liabilities-proof/xyz");
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("merkleRoot"), "{}", bad.text);
    let unknown = api.get(&format!(
        "/api/v1/agreement/liabilities-proof/{}",
        "ab".repeat(32)
    ));
    assert_eq!(unknown.status, 404, "{}", unknown.text);

    let receipt = k.receipt(&customer(checkpointed), &format!("period={period}"));
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    same(&receipt.body["data"]["liabilities"]);
    let path = repo_root().join("target/liabilities-receipt.json");
    std::fs::write(&path, &receipt.text).unwrap();
    let (ok, out) = cli(&["receipt", path.to_str().unwrap(), "--key", key]);
    assert!(ok && out.contains("liabilities.receipt"), "{out}");
    // Another customer's proof handed with this receipt fails the tie.
    let other = repo_root().join("target/liabilities-proofs/liab-006.json");
    let (ok, out) = cli(&[
        "receipt",
        path.to_str().unwrap(),
        "--key",
        key,
        "--liabilities",
        other.to_str().unwrap(),
    ]);
    assert!(!ok && out.contains("liabilities.receipt"), "{out}");
}

/// Both SDKs check the proofs (sdk/README.md): each fetches a customer's
/// proof by the vendor's route and the customer's by its checkpoint root,
/// verifies them with the log key and the balance, sees a changed sibling
/// sum fail `liabilities.path`, and checks the period receipt's own proof
/// (sdk/typescript/test/liabilities-live.mjs,
/// sdk/python/tests/live_liabilities.py; the SDKs are built by
/// scripts/setup-test.sh).
fn sdks(
    base: &str,
    api_key: &str,
    log_key: &str,
    period: &str,
    (customer_id, balance): (&str, &str),
    (checkpointed, root): (usize, &str),
) {
    let root_dir = repo_root();
    let path = format!(
        "{}:{}",
        root_dir.join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let python = root_dir.join(".venv-sdk/bin/python");
    assert!(
        python.exists(),
        ".venv-sdk is missing: run scripts/setup-test.sh"
    );
    let started = std::time::Instant::now();
    let receipt_customer = customer(checkpointed);
    let with_env = |cmd: &mut Command| {
        cmd.env("BVS_BASE", base)
            .env("BVS_API_KEY", api_key)
            .env("BVS_LOG_KEY", log_key)
            .env("BVS_PERIOD", period)
            .env("BVS_CUSTOMER", customer_id)
            .env("BVS_BALANCE", balance)
            .env("BVS_ROOT", root)
            .env("BVS_RECEIPT_CUSTOMER", &receipt_customer)
            .env("PATH", &path);
    };
    let mut node = Command::new("node");
    node.arg(root_dir.join("sdk/typescript/test/liabilities-live.mjs"));
    with_env(&mut node);
    let out = run_ok(&mut node, "the TypeScript SDK's liabilities check failed");
    assert!(
        out.contains("sdk ok") && out.contains("is counted in a total"),
        "{out}"
    );
    // The sources, not an installed copy: the quickstart binary may be
    // reinstalling the package into .venv-sdk at the same time.
    let mut py = Command::new(&python);
    py.arg(root_dir.join("sdk/python/tests/live_liabilities.py"))
        .env("PYTHONPATH", root_dir.join("sdk/python/src"));
    with_env(&mut py);
    let out = run_ok(&mut py, "the Python SDK's liabilities check failed");
    assert!(
        out.contains("sdk ok") && out.contains("is counted in a total"),
        "{out}"
    );
    println!(
        "the SDKs' liabilities checks: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
