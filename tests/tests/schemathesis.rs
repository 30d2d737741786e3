//! Schema-driven fuzzing: schemathesis (in `.venv`, see
//! scripts/setup-python.sh) runs every operation of GET /openapi.json
//! against a real `wrangler dev`, authenticated as a registered, verified
//! tenant, and fails on any 5xx, undocumented status or response that does
//! not match the document. Bounded: scripts/schemathesis.sh caps examples
//! and time (about 3 minutes). A second test walks every operation down its
//! success path on purpose (scripts/openapi_conformance.py) and checks each
//! answer against the document.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use bvs_tests::client::Api;
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::tenant::{key_id, new_tenant_on_plan, Tenant};
use bvs_tests::{dev_var, eventually, repo_root, run_ok, shared};
use serde_json::json;

/// Real objects for the fixed path parameters: a customer with verified
/// deltas, a committed checkpoint, a receipt and a verified fact. Returns
/// (customerId, anchorId, contentHash, proofRoot).
fn seed(api: &Api, t: &Tenant) -> (String, String, String, String) {
    let k = api.keyed(&t.test_key);
    let customer = "st_customer_1";
    let mut anchor = String::new();
    for (delta, reason) in [("100", "top-up"), ("-4.25", "refund")] {
        let d = k.emit(
            &Delta::new(customer, delta, reason)
                .reference_id("ref-1")
                .metadata(json!({"k": "v"})),
        );
        anchor = d["anchorId"].as_str().unwrap().to_string();
    }
    eventually(WAIT, "the deltas to verify", || {
        let r = k.derive(customer, "");
        (r.body["data"]["deltasCount"] == 2).then_some(())
    });
    let r = k.checkpoint(&json!({"customerId": customer}));
    assert_eq!(r.status, 202, "{}", r.text);
    eventually(WAIT, "the checkpoint to commit", || {
        let r = k.checkpoints("");
        (r.body["data"]["checkpoints"][0]["status"] == "COMMITTED").then_some(())
    });
    let r = k.receipt(customer, "");
    assert_eq!(r.status, 200, "{}", r.text);
    let root = r.body["data"]["itemsRoot"].as_str().unwrap().to_string();
    let r = k.submit_fact(&json!({"content": "schemathesis seed fact", "metadata": {"a": 1}}));
    assert_eq!(r.status, 202, "{}", r.text);
    let hash = r.body["data"]["contentHash"].as_str().unwrap().to_string();
    k.wait_fact_verified(&hash);
    (customer.to_string(), anchor, hash, root)
}

#[test]
fn schema_pass_schemathesis_finds_no_server_error_and_no_mismatch() {
    let root = repo_root();
    assert!(
        root.join(".venv/bin/schemathesis").exists(),
        "schemathesis is not installed: run scripts/setup-python.sh"
    );
    let base = shared();
    let api = Api::new(base.clone());
    // Enterprise: the rate limit (1,000/s) and quota stay out of the way,
    // so the operations are reached rather than answered with 429/402.
    let t = new_tenant_on_plan(&api, "enterprise");
    let (customer, anchor, hash, proof_root) = seed(&api, &t);
    let report_dir = root.join("target/schemathesis");
    let key_id = key_id(&t.test_key);
    let failure = format!(
        "schemathesis found failures (reports in {})",
        report_dir.display()
    );
    let stdout = run_ok(
        Command::new("bash")
            .arg(root.join("scripts/schemathesis.sh"))
            .current_dir(&root)
            .env("BASE", &base)
            .env("JWT", &t.jwt)
            .env("API_KEY", &t.test_key)
            .env("ST_REPORT_DIR", &report_dir)
            .env("ST_CUSTOMER_ID", &customer)
            .env("ST_ANCHOR_ID", &anchor)
            .env("ST_CONTENT_HASH", &hash)
            .env("ST_PROOF_ROOT", &proof_root)
            .env("ST_TENANT_ID", &t.tenant_id)
            .env("ST_KEY_ID", &key_id),
        &failure,
    );
    // The summary lines: how much was exercised.
    for line in stdout.lines().filter(|l| l.contains(" generated")) {
        println!("schemathesis: {}", line.trim());
    }
}

#[test]
fn schema_pass_every_success_path_answers_as_documented() {
    let root = repo_root();
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "the venv is missing: run scripts/setup-python.sh"
    );
    let base = shared();
    let api = Api::new(base.clone());
    // Pilot: Production can be provisioned, so every route has a success path.
    let t = new_tenant_on_plan(&api, "pilot");
    let stdout = run_ok(
        Command::new(python)
            .arg(root.join("scripts/openapi_conformance.py"))
            .current_dir(&root)
            .env("BASE", &base)
            .env("JWT", &t.jwt)
            .env("API_KEY", &t.test_key)
            .env("ADMIN_TOKEN", dev_var("ADMIN_TOKEN")),
        "answers that do not match worker/src/openapi.json",
    );
    if let Some(summary) = stdout.lines().last() {
        println!("conformance: {summary}");
    }
}
