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
use std::time::Duration;

use bvs_tests::client::{Api, Reply};
use bvs_tests::tenant::{new_tenant_on_plan, Tenant};
use bvs_tests::{dev_var, eventually, repo_root, shared};
use reqwest::Method;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

fn keyed(api: &Api, t: &Tenant, method: Method, path: &str, body: Option<&Value>) -> Reply {
    let mut rb = api.req(method, path).header("x-api-key", &t.test_key);
    if let Some(b) = body {
        rb = rb.json(b);
    }
    api.send(rb)
}

/// Real objects for the fixed path parameters: a customer with verified
/// deltas, a committed checkpoint, a receipt and a verified fact. Returns
/// (customerId, anchorId, contentHash, proofRoot).
fn seed(api: &Api, t: &Tenant) -> (String, String, String, String) {
    let customer = "st_customer_1";
    let mut anchor = String::new();
    for (delta, reason) in [("100", "top-up"), ("-4.25", "refund")] {
        let r = api.send(
            api.req(Method::POST, "/api/v1/balance/delta")
                .header("x-api-key", &t.test_key)
                .header("content-type", "application/json")
                .body(format!(
                    r#"{{"customerId":"{customer}","delta":{delta},"reason":"{reason}","referenceId":"ref-1","metadata":{{"k":"v"}}}}"#
                )),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
    }
    eventually(WAIT, "the deltas to verify", || {
        let r = keyed(
            api,
            t,
            Method::GET,
            &format!("/api/v1/balance/derive/{customer}"),
            None,
        );
        (r.body["data"]["deltasCount"] == 2).then_some(())
    });
    let r = keyed(
        api,
        t,
        Method::POST,
        "/api/v1/balance/checkpoint",
        Some(&json!({"customerId": customer})),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    eventually(WAIT, "the checkpoint to commit", || {
        let r = keyed(api, t, Method::GET, "/api/v1/balance/checkpoints", None);
        (r.body["data"]["checkpoints"][0]["status"] == "COMMITTED").then_some(())
    });
    let r = keyed(
        api,
        t,
        Method::GET,
        &format!("/api/v1/balance/receipt/{customer}"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let root = r.body["data"]["itemsRoot"].as_str().unwrap().to_string();
    let r = keyed(
        api,
        t,
        Method::POST,
        "/api/v1/facts",
        Some(&json!({"content": "schemathesis seed fact", "metadata": {"a": 1}})),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let hash = r.body["data"]["contentHash"].as_str().unwrap().to_string();
    eventually(WAIT, "the fact to verify", || {
        let r = keyed(
            api,
            t,
            Method::GET,
            &format!("/api/v1/facts/{hash}/verify"),
            None,
        );
        (r.body["data"]["verified"] == true).then_some(())
    });
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
    let key_id = t
        .test_key
        .trim_start_matches("pk_test_")
        .split('.')
        .next()
        .unwrap();
    let out = Command::new("bash")
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
        .env("ST_KEY_ID", key_id)
        .output()
        .expect("run scripts/schemathesis.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "schemathesis found failures (reports in {}):\n{stdout}\n{stderr}",
        report_dir.display()
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
    let out = Command::new(python)
        .arg(root.join("scripts/openapi_conformance.py"))
        .current_dir(&root)
        .env("BASE", &base)
        .env("JWT", &t.jwt)
        .env("API_KEY", &t.test_key)
        .env("ADMIN_TOKEN", dev_var("ADMIN_TOKEN"))
        .output()
        .expect("run scripts/openapi_conformance.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "answers that do not match worker/src/openapi.json:\n{stdout}\n{stderr}"
    );
    if let Some(summary) = stdout.lines().last() {
        println!("conformance: {summary}");
    }
}
