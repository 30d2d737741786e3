//! A public answer's agreement side checked from its text
//! (`agreement::answer_agreement_report`, what the verify page runs in
//! WebAssembly, issue 41): built from the sample log's cosigned receipt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::agreement::answer_agreement_report;
use bvs_core::agreement::sample::SampleLog;
use serde_json::json;

const ORIGIN: &str = "bvs.example/log/sandbox";
const LOG: SampleLog<'static> = SampleLog {
    origin: ORIGIN,
    seed: &[9; 32],
    t0_ms: 1_795_323_400_123,
};

/// A public answer (as the route sends it) for the sample checkpoint the
/// customer agreed to and then disputed.
fn answer() -> String {
    let r = LOG.cosigned(&[0x42; 32]).unwrap();
    let a = r.agreement.unwrap();
    json!({
        "success": true,
        "statusCode": 200,
        "data": {
            "summary": {
                "kind": "checkpoint",
                "proofRoot": a.checkpoint.merkle_root,
                "period": a.checkpoint.period,
                "itemCount": a.checkpoint.delta_count,
            },
            "agreement": a,
        }
    })
    .to_string()
}

fn failed(r: &bvs_core::verify::VerificationReport) -> Vec<&str> {
    r.checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect()
}

#[test]
fn an_answers_agreement_verifies_and_says_who_agreed_and_disputed() {
    let r = answer_agreement_report(&answer(), ORIGIN);
    assert!(r.ok, "{:?}", r.checks);
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "agreement.key",
            "agreement.statements[0]",
            "agreement.statements[1]"
        ]
    );
    assert!(
        r.checks[1]
            .detail
            .starts_with("agreed by the customer's key"),
        "{:?}",
        r.checks[1]
    );
    assert!(
        r.checks[2]
            .detail
            .starts_with("disputed by the customer's key"),
        "{:?}",
        r.checks[2]
    );
}

#[test]
fn a_tampered_statement_another_log_or_root_fails() {
    let text = answer();
    // A statement's balance changed after it was signed.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let signed = v["data"]["agreement"]["statements"][0]["statement"]
        .as_str()
        .unwrap();
    let changed = signed.replacen("balance ", "balance 9", 1);
    assert_ne!(changed, signed);
    let tampered = text.replace(
        &serde_json::to_string(signed).unwrap(),
        &serde_json::to_string(&changed).unwrap(),
    );
    assert_eq!(
        failed(&answer_agreement_report(&tampered, ORIGIN)),
        ["agreement.statements[0]"]
    );
    // Checked against another log than the one the key is bound to.
    let r = answer_agreement_report(&text, "other.example/log");
    assert!(failed(&r).contains(&"agreement.key"), "{:?}", r.checks);
    // Another root than the statements name.
    let root = v["data"]["summary"]["proofRoot"].as_str().unwrap();
    let moved = text.replacen(
        &format!("\"proofRoot\":\"{root}\""),
        &format!("\"proofRoot\":\"{}\"", "ab".repeat(32)),
        1,
    );
    let r = answer_agreement_report(&moved, ORIGIN);
    assert!(
        !r.ok && failed(&r).contains(&"agreement.statements[0]"),
        "{:?}",
        r.checks
    );
    // No agreement side: nothing to check; not JSON: one failed check.
    assert!(answer_agreement_report(r#"{"summary":{}}"#, ORIGIN)
        .checks
        .is_empty());
    assert_eq!(failed(&answer_agreement_report("{", ORIGIN)), ["agreement"]);
}
