//! Schema-driven fuzzing: schemathesis (in `.venv`, see
//! scripts/setup-python.sh) runs every operation of GET /openapi.json
//! against a real `wrangler dev`, authenticated as a registered, verified
//! tenant, and fails on any 5xx, undocumented status or response that does
//! not match the document. Bounded: scripts/schemathesis.sh caps examples
//! and time (about 3 minutes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use bvs_tests::client::Api;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{repo_root, shared};

#[test]
fn every_operation_answers_as_the_openapi_document_says() {
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
    let report_dir = root.join("target/schemathesis");
    let out = Command::new("bash")
        .arg(root.join("scripts/schemathesis.sh"))
        .current_dir(&root)
        .env("BASE", &base)
        .env("JWT", &t.jwt)
        .env("API_KEY", &t.test_key)
        .env("ST_REPORT_DIR", &report_dir)
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
