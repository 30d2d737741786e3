//! Issue 40: both SDKs hold a receipt's signed tree head to a witness
//! policy. Against three local witnesses (aics-witness, quorum 2): a
//! `Client` pins the log list's `witnessPolicyText` on first use and the
//! witnessed receipt passes; the same receipt with its cosignature lines
//! stripped (still saying `witnessed: true`) fails `witnesses`, pinned or
//! given; without a Client, verify needs a policy (TypeError). Before,
//! both SDKs checked the log key only and passed the stripped receipt
//! (sdk/typescript/test/witness-live.mjs, sdk/python/tests/live_witness.py;
//! the SDKs are built by scripts/setup-test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::witness::Witnesses;
use bvs_tests::{eventually, fresh_state_dir, repo_root, run_ok, Wrangler};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn both_sdks_fail_a_receipt_whose_cosignatures_were_stripped() {
    let dir = fresh_state_dir("sdk-witness");
    let w = Witnesses::start(&dir, 3, 2);
    let server = Wrangler::start_with_vars(&dir, &w.vars());
    let api = Api::new(server.base_url.clone());
    let entry = api.log_entry("sandbox");
    let key = entry["verifierKey"].as_str().unwrap().to_string();
    let policy = entry["witnessPolicyText"].as_str().unwrap().to_string();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let a = k.emit_anchored(&Delta::new("cus_sdk_w", 10, "witnessed"));
    k.wait_anchored(a["anchorId"].as_str().unwrap());
    // The receipt once a witnessed head includes the delta.
    let text = eventually(WAIT, "a witnessed receipt", || {
        let r = k.receipt("cus_sdk_w", "");
        assert_eq!(r.status, 200, "{}", r.text);
        (r.body["data"]["proof"]["witnessed"] == true).then_some(r.text)
    });
    let file = dir.join("receipt.json");
    std::fs::write(&file, &text).unwrap();

    let root = repo_root();
    let path = format!(
        "{}:{}",
        root.join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let python = root.join(".venv-sdk/bin/python");
    assert!(
        python.exists(),
        ".venv-sdk is missing: run scripts/setup-test.sh"
    );
    let with_env = |cmd: &mut Command| {
        cmd.env("BVS_BASE", &server.base_url)
            .env("BVS_API_KEY", &t.test_key)
            .env("BVS_LOG_KEY", &key)
            .env("BVS_POLICY", &policy)
            .env("BVS_RECEIPT_FILE", &file)
            .env("PATH", &path);
    };
    let mut node = Command::new("node");
    node.arg(root.join("sdk/typescript/test/witness-live.mjs"));
    with_env(&mut node);
    let out = run_ok(
        &mut node,
        "the TypeScript SDK's witness policy check failed",
    );
    assert!(out.contains("sdk ok"), "{out}");
    let mut py = Command::new(&python);
    py.arg(root.join("sdk/python/tests/live_witness.py"))
        .env("PYTHONPATH", root.join("sdk/python/src"));
    with_env(&mut py);
    let out = run_ok(&mut py, "the Python SDK's witness policy check failed");
    assert!(out.contains("sdk ok"), "{out}");
}
