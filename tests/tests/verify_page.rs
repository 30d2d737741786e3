//! The public verify page in headless Chromium, against a real root of a
//! running `wrangler dev`: tests/browser/verify_page.mjs (playwright-core,
//! Debian's /usr/bin/chromium) checks that every check passes, that a
//! record tampered in flight fails with its meaning shown, and that the
//! receipt verifies offline. Screenshots land in tests/artifacts/.
//!
//! The server runs with three local witnesses and a quorum of 2 (issue
//! 28), so the page pins the log list's witness policy and says which
//! witnesses cosigned each head. The cases run one at a time: each waits
//! until its log's latest head is witnessed, which another case's deltas
//! would make newer (and not yet cosigned) under it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bvs_core::cosignature::Freshness;
use bvs_core::policy::Policy;
use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::log::log_key;
use bvs_tests::tenant::new_tenant;
use bvs_tests::witness::Witnesses;
use bvs_tests::{bvs_verify_bin, eventually, fresh_state_dir, repo_root, run_browser, Wrangler};
use serde_json::json;

/// The binary's server and its witnesses (stopped when the binary exits).
struct Witnessed {
    witnesses: Witnesses,
    server: Wrangler,
}

static SERVER: OnceLock<Witnessed> = OnceLock::new();
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn witnessed() -> &'static Witnessed {
    SERVER.get_or_init(|| {
        let dir = fresh_state_dir("verify-page");
        let witnesses = Witnesses::start(&dir, 3, 2);
        let server = Wrangler::start_with_vars(&dir, &witnesses.vars());
        Witnessed { witnesses, server }
    })
}

fn api() -> Api {
    Api::new(witnessed().server.base_url.clone())
}

/// Waits until the sandbox log's latest head carries the cosignatures
/// `policy_text`'s quorum needs (the service collects them after the head
/// commits).
fn wait_witnessed(api: &Api, policy_text: &str) {
    let policy = Policy::parse(policy_text).unwrap();
    eventually(
        Duration::from_secs(90),
        "the sandbox log's latest head to be witnessed",
        || {
            let head = api.get("/api/v1/log/sandbox/checkpoint");
            (head.status == 200
                && policy
                    .check(&head.text, Freshness::Offline)
                    .is_ok_and(|q| q.met))
            .then_some(())
        },
    );
}

/// A tenant's customer with two anchored submissions: the first one's root
/// and the customer's receipt, as the API sends it, once the log's latest
/// head is witnessed (so the receipt proves into a witnessed head), and
/// derive's answer with the balance as of now (issue 43).
fn anchored_receipt(api: &Api, customer: &str) -> (String, String, String) {
    let t = new_tenant(api);
    let k = api.keyed(&t.test_key);
    let mut anchors = Vec::new();
    let mut roots = Vec::new();
    for (delta, reason) in [("1250.75", "invoice 17"), ("-0.25", "rounding credit")] {
        let d = k.emit(&Delta::new(customer, delta, reason));
        anchors.push(d["anchorId"].as_str().unwrap().to_string());
        roots.push(d["receiptId"].as_str().unwrap().to_string());
    }
    for a in &anchors {
        k.wait_anchored(a);
    }
    wait_witnessed(api, witnessed().witnesses.policy());
    let receipt = k.receipt(customer, "");
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let now = bvs_core::time::format_iso_ms(i64::try_from(bvs_tests::cron::now_ms()).unwrap());
    let as_of = k.derive(customer, &format!("asOf={now}"));
    assert_eq!(as_of.status, 200, "{}", as_of.text);
    (roots.swap_remove(0), receipt.text, as_of.text)
}

/// A batch over two customers, anchored: its root, whose public answer
/// withholds amounts (issue 40).
fn withheld_batch_root(api: &Api) -> String {
    let t = new_tenant(api);
    let k = api.keyed(&t.test_key);
    let batch = k.batch_anchored(&[
        json!({"customerId": "cus_batch_a", "delta": 3, "reason": "a in a batch"}),
        json!({"customerId": "cus_batch_b", "delta": -1.5, "reason": "b in a batch"}),
    ]);
    wait_witnessed(api, witnessed().witnesses.policy());
    batch["itemsRoot"].as_str().unwrap().to_string()
}

#[test]
fn the_verify_page_checks_a_real_root_in_the_browser_and_shows_tampering() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root_dir = bvs_tests::verifier_built();
    let api = api();
    let (root, receipt, as_of) = anchored_receipt(&api, "cus_page");
    let batch_root = withheld_batch_root(&api);
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let receipt_path = artifacts.join("verify-page-receipt.json");
    std::fs::write(&receipt_path, &receipt).unwrap();
    let as_of_path = artifacts.join("verify-page-as-of.json");
    std::fs::write(&as_of_path, &as_of).unwrap();

    let stdout = run_browser(
        "verify_page.mjs",
        &[
            api.base.as_str().as_ref(),
            root.as_ref(),
            receipt_path.as_os_str(),
            batch_root.as_ref(),
            as_of_path.as_os_str(),
        ],
    );
    assert!(stdout.contains("9 passed, 0 failed"), "{stdout}");
    assert!(artifacts.join("verify-page.png").exists());
}

/// `flat`'s witness lines under a nested quorum, (w1 and w2) or w3, which
/// the log list's k-of-n form cannot say.
fn nested_policy(flat: &str) -> String {
    let witnesses: Vec<&str> = flat.lines().filter(|l| l.starts_with("witness ")).collect();
    assert_eq!(witnesses.len(), 3, "{flat}");
    format!(
        "{}\ngroup pair all w1 w2\ngroup top any pair w3\nquorum top\n",
        witnesses.join("\n")
    )
}

/// Issue 41: a log whose witness policy has nested groups. The verify page
/// checks its heads with the lazily loaded module's full policy check (it
/// used to report them ok, unchecked).
#[test]
fn the_verify_page_checks_a_nested_witness_policy() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    bvs_tests::verifier_built();
    let dir = fresh_state_dir("verify-nested");
    let witnesses = Witnesses::start(&dir, 3, 2);
    let nested = nested_policy(witnesses.policy());
    let vars: Vec<(&str, &str)> = bvs_tests::witness::POLICY_VARS
        .iter()
        .map(|v| (*v, nested.as_str()))
        .collect();
    let server = Wrangler::start_with_vars(&dir, &vars);
    let api = Api::new(server.base_url.clone());
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let d = k.emit_anchored(&Delta::new("cus_nested", "7.5", "nested policy"));
    let root = d["receiptId"].as_str().unwrap().to_string();
    wait_witnessed(&api, &nested);
    let logs = api.get("/api/v1/logs");
    assert!(logs.text.contains("group top any pair w3"), "{}", logs.text);

    let stdout = run_browser("verify_nested.mjs", &[&server.base_url, &root]);
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}

/// The auditors' CLI, built by `cargo test --workspace` before this runs.
fn bvs_verify(args: &[&str]) -> std::process::Output {
    Command::new(bvs_verify_bin())
        .args(args)
        .output()
        .expect("run bvs-verify")
}

#[test]
fn a_receipt_saved_from_the_api_verifies_with_the_cli_and_a_tampered_one_fails() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let api = api();
    let (_, receipt, _) = anchored_receipt(&api, "cus_cli");
    let key = log_key(&api);
    let dir = repo_root().join("tests/artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("cli-receipt.json");
    std::fs::write(&saved, &receipt).unwrap();
    let saved = saved.display().to_string();

    let ok = bvs_verify(&["receipt", &saved, "--key", &key]);
    let out = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert_eq!(ok.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  deltas[1].inclusion"), "{out}");

    // The log list's policy, saved once: the receipt's head is witnessed.
    let logs = api.get("/api/v1/logs");
    let text = logs.body["data"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "sandbox")
        .and_then(|l| l["witnessPolicyText"].as_str())
        .unwrap_or_else(|| panic!("no witnessPolicyText for sandbox: {}", logs.text))
        .to_string();
    let policy = dir.join("cli-policy.txt");
    std::fs::write(&policy, text).unwrap();
    let policy = policy.display().to_string();
    let ok = bvs_verify(&["receipt", &saved, "--key", &key, "--policy", &policy]);
    let out = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert_eq!(ok.status.code(), Some(0), "{out}");
    assert!(out.contains("witnessed: cosigned by"), "{out}");

    // 1250.75 - 0.25 = 1250.5, claimed as 1250.51.
    let tampered = receipt.replace("\"finalBalance\":1250.5", "\"finalBalance\":1250.51");
    assert_ne!(tampered, receipt, "{receipt}");
    let bad = dir.join("cli-receipt-tampered.json");
    std::fs::write(&bad, tampered).unwrap();
    let no = bvs_verify(&["receipt", &bad.display().to_string(), "--key", &key]);
    let out = String::from_utf8_lossy(&no.stdout).into_owned();
    assert_eq!(no.status.code(), Some(1), "{out}");
    assert!(
        out.contains(
            "First failure: finalBalance: 0 + 2 deltas = 1250.5, the receipt says 1250.51"
        ),
        "{out}"
    );
}
