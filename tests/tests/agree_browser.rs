//! The customer's agreement flow in headless Chromium (issue 19):
//! tests/browser/agree_page.mjs opens the vendor's invitation, makes an
//! Ed25519 key in the browser, registers it, opens the period's checkpoint
//! and agrees. Then the vendor's `checkpoint.cosigned` webhook and the
//! public verify answer show it, and `bvs-verify statement` checks the
//! saved co-signed statement offline (no service involved).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::receiver::Receiver;
use bvs_tests::tenant::{create_webhook, new_tenant_on_plan};
use bvs_tests::{api, bvs_verify_bin, eventually, repo_root, run_ok};
use serde_json::{json, Value};

#[test]
fn a_customer_agrees_in_the_browser_and_the_vendor_and_the_public_see_it() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let rx = Receiver::start(&[]);
    let hook = create_webhook(
        &api,
        &t.jwt,
        &rx.url("/cosigned"),
        &["checkpoint.cosigned"],
        "agree",
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let customer = "cus_browser_agree";
    let mut last = Value::Null;
    for amount in ["1250.75", "-0.25"] {
        last = k.emit(&Delta::new(customer, amount, "invoice"));
    }
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let cp = k.checkpoint(&json!({ "customerId": customer }));
    assert_eq!(cp.status, 202, "{}", cp.text);
    let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
    let root = committed["merkleRoot"].as_str().unwrap().to_string();
    let inv = k.post(
        &format!("/api/v1/balance/customers/{customer}/invitations"),
        &json!({}),
    );
    assert_eq!(inv.status, 201, "{}", inv.text);
    let url = inv.body["data"]["invitationUrl"]
        .as_str()
        .unwrap()
        .to_string();

    let root_dir = repo_root();
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let out = artifacts.join("agree-page.json");
    let node = root_dir.join("node_modules/.bin/node");
    let stdout = run_ok(
        Command::new(if node.exists() { node } else { "node".into() })
            .arg(root_dir.join("tests/browser/agree_page.mjs"))
            .arg(&url)
            .arg(&root)
            .arg(&out)
            .current_dir(&root_dir),
        "browser test failed",
    );
    println!("{stdout}");
    assert!(stdout.contains("ok - the customer registered"), "{stdout}");

    // The public answer shows the agreement, by the key the browser made.
    let answer = api.get(&format!("/api/v1/verify/{root}"));
    let agreement = &answer.body["data"]["agreement"];
    let key = agreement["counterpartyKey"].as_str().unwrap().to_string();
    let statements = agreement["statements"].as_array().unwrap();
    assert_eq!(statements.len(), 1, "{agreement}");
    assert_eq!(statements[0]["kind"], "balance");
    assert_eq!(agreement["balance"], json!(1250.5));
    let statement = statements[0]["statement"].as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(shown["shown"].as_str().unwrap().contains(&key), "{shown}");

    // The vendor's webhook.
    let mut polls = 0u32;
    let got = eventually(WAIT, "checkpoint.cosigned", || {
        polls += 1;
        if polls.is_multiple_of(15) {
            sweep(&api, now_ms());
        }
        rx.received()
            .into_iter()
            .find(|r| r.json()["event"] == "checkpoint.cosigned")
    });
    assert_eq!(got.json()["data"]["statement"], json!(statement));

    // Offline: the saved statement checks against the key and the root.
    let saved = artifacts.join("agree-statement.txt");
    std::fs::write(&saved, &statement).unwrap();
    let checked = Command::new(bvs_verify_bin())
        .args([
            "statement",
            saved.to_str().unwrap(),
            "--key",
            &key,
            "--root",
            &root,
        ])
        .output()
        .expect("run bvs-verify");
    let text = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{text}");
    assert!(text.contains("VERIFIED"), "{text}");
    let forged = artifacts.join("agree-statement-forged.txt");
    std::fs::write(
        &forged,
        statement.replace("balance 1250.5\n", "balance 1250.6\n"),
    )
    .unwrap();
    let refused = Command::new(bvs_verify_bin())
        .args(["statement", forged.to_str().unwrap(), "--key", &key])
        .output()
        .expect("run bvs-verify");
    assert!(!refused.status.success());
}
