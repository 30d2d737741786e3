//! The public verify page in headless Chromium, against a real root of a
//! running `wrangler dev`: tests/browser/verify_page.mjs (playwright-core,
//! Debian's /usr/bin/chromium) checks that every check passes, that a
//! record tampered in flight fails with its meaning shown, and that the
//! receipt verifies offline. Screenshots land in tests/artifacts/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use bvs_tests::client::Api;
use bvs_tests::tenant::new_tenant;
use bvs_tests::{eventually, repo_root, shared};
use reqwest::Method;

const ANCHOR_TIMEOUT: Duration = Duration::from_secs(60);

fn keyed_get(api: &Api, key: &str, path: &str) -> bvs_tests::client::Reply {
    api.send(api.req(Method::GET, path).header("x-api-key", key))
}

/// A tenant's customer with two anchored submissions: the first one's root
/// and the customer's receipt, as the API sends it.
fn anchored_receipt(api: &Api, customer: &str) -> (String, String) {
    let t = new_tenant(api);
    let mut anchors = Vec::new();
    let mut roots = Vec::new();
    for (delta, reason) in [("1250.75", "invoice 17"), ("-0.25", "rounding credit")] {
        let body = format!(r#"{{"customerId":"{customer}","delta":{delta},"reason":"{reason}"}}"#);
        let r = api.send(
            api.req(Method::POST, "/api/v1/balance/delta")
                .header("x-api-key", &t.test_key)
                .header("content-type", "application/json")
                .body(body),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        anchors.push(r.body["data"]["anchorId"].as_str().unwrap().to_string());
        roots.push(r.body["data"]["receiptId"].as_str().unwrap().to_string());
    }
    for a in &anchors {
        eventually(ANCHOR_TIMEOUT, "the delta to be anchored", || {
            let r = keyed_get(api, &t.test_key, &format!("/api/v1/balance/delta/{a}"));
            (r.body["data"]["status"] == "ANCHORED").then_some(())
        });
    }
    let receipt = keyed_get(
        api,
        &t.test_key,
        &format!("/api/v1/balance/receipt/{customer}"),
    );
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    (roots.swap_remove(0), receipt.text)
}

#[test]
fn the_verify_page_checks_a_real_root_in_the_browser_and_shows_tampering() {
    let root_dir = repo_root();
    assert!(
        root_dir
            .join("public/pkg/bvs_verifier_wasm_bg.wasm")
            .exists(),
        "public/pkg is missing: run scripts/build-verifier.sh (scripts/setup.sh does)"
    );
    let api = Api::new(shared());
    let (root, receipt) = anchored_receipt(&api, "cus_page");
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let receipt_path = artifacts.join("verify-page-receipt.json");
    std::fs::write(&receipt_path, &receipt).unwrap();

    let node = root_dir.join("node_modules/.bin/node");
    let out = Command::new(if node.exists() { node } else { "node".into() })
        .arg(root_dir.join("tests/browser/verify_page.mjs"))
        .arg(&api.base)
        .arg(&root)
        .arg(&receipt_path)
        .current_dir(&root_dir)
        .output()
        .expect("run node tests/browser/verify_page.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser test failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("6 passed, 0 failed"), "{stdout}");
    assert!(artifacts.join("verify-page.png").exists());
}

/// The auditors' CLI, built by `cargo test --workspace` before this runs.
fn bvs_verify(args: &[&str]) -> std::process::Output {
    let root_dir = repo_root();
    let status = Command::new("cargo")
        .args(["build", "--quiet", "-p", "bvs-verify"])
        .current_dir(&root_dir)
        .status()
        .expect("cargo build -p bvs-verify");
    assert!(status.success());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root_dir.join("target"));
    Command::new(target.join("debug/bvs-verify"))
        .args(args)
        .output()
        .expect("run bvs-verify")
}

#[test]
fn a_receipt_saved_from_the_api_verifies_with_the_cli_and_a_tampered_one_fails() {
    let api = Api::new(shared());
    let (_, receipt) = anchored_receipt(&api, "cus_cli");
    let key = api.get("/api/v1/log/sandbox/key").body["data"]["verifierKey"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = repo_root().join("tests/artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("cli-receipt.json");
    std::fs::write(&saved, &receipt).unwrap();
    let saved = saved.display().to_string();

    let ok = bvs_verify(&["receipt", &saved, "--key", &key]);
    let out = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert_eq!(ok.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  deltas[1].inclusion"), "{out}");

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
