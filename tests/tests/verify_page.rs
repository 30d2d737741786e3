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

#[test]
fn the_verify_page_checks_a_real_root_in_the_browser_and_shows_tampering() {
    let root_dir = repo_root();
    assert!(
        root_dir
            .join("public/pkg/bvs_verifier_wasm_bg.wasm")
            .exists(),
        "public/pkg is missing: run scripts/build-verifier.sh (scripts/test.sh does)"
    );
    let api = Api::new(shared());
    let t = new_tenant(&api);

    // Two submissions for one customer; the page checks the first one's root.
    let mut anchors = Vec::new();
    let mut roots = Vec::new();
    for (delta, reason) in [("1250.75", "invoice 17"), ("-0.25", "rounding credit")] {
        let body = format!(r#"{{"customerId":"cus_page","delta":{delta},"reason":"{reason}"}}"#);
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
            let r = keyed_get(&api, &t.test_key, &format!("/api/v1/balance/delta/{a}"));
            (r.body["data"]["status"] == "ANCHORED").then_some(())
        });
    }
    let receipt = keyed_get(&api, &t.test_key, "/api/v1/balance/receipt/cus_page");
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let receipt_path = artifacts.join("verify-page-receipt.json");
    std::fs::write(&receipt_path, &receipt.text).unwrap();

    let node = root_dir.join("node_modules/.bin/node");
    let out = Command::new(if node.exists() { node } else { "node".into() })
        .arg(root_dir.join("tests/browser/verify_page.mjs"))
        .arg(&api.base)
        .arg(&roots[0])
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
    assert!(stdout.contains("3 passed, 0 failed"), "{stdout}");
    assert!(artifacts.join("verify-page.png").exists());
}
