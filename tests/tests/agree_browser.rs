//! The customer's agreement flow in headless Chromium (issue 19):
//! tests/browser/agree_page.mjs opens the vendor's invitation, makes an
//! Ed25519 key in the browser, registers it, opens the period's checkpoint
//! and agrees; then, on a second customer's ledger, registers that key and
//! disputes its period from a delta. The vendor's `checkpoint.cosigned` and
//! `checkpoint.disputed` webhooks and the public verify answers show both.
//! Then **the service is stopped** and `bvs-verify` checks the saved
//! co-signed and disputed receipts, public answers and statement offline
//! (files only; it has no network code), and refuses tampered copies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::Delta;
use bvs_tests::log::log_key;
use bvs_tests::receiver::{wait_event, Receiver};
use bvs_tests::tenant::{agreement_webhook, new_tenant_on_plan};
use bvs_tests::{bvs_verify_bin, fresh_state_dir, repo_root, run_browser, Wrangler};
use serde_json::{json, Value};

/// Runs `bvs-verify` offline: (passed, stdout).
fn bvs_verify(bin: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(bin)
        .args(args)
        .output()
        .expect("run bvs-verify");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[test]
fn a_customer_agrees_and_disputes_in_the_browser_and_bvs_verify_checks_it_with_the_service_stopped()
{
    // Its own service, so that it can be stopped before the offline checks.
    let server = Wrangler::start(&fresh_state_dir("agree_browser"));
    let base = server.base_url.clone();
    let api = Api::new(base.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let rx = Receiver::start(&[]);
    agreement_webhook(&api, &t.jwt, &rx.url("/agreement"), "agree");

    // Two customers, each with a committed checkpoint and an invitation.
    let period_of = |customer: &str, amounts: &[&str]| -> (String, String) {
        let mut last = Value::Null;
        for amount in amounts {
            last = k.emit(&Delta::new(customer, *amount, "invoice"));
        }
        k.wait_anchored(last["anchorId"].as_str().unwrap());
        let cp = k.checkpoint(&json!({ "customerId": customer }));
        assert_eq!(cp.status, 202, "{}", cp.text);
        let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
        let inv = k.post(
            &format!("/api/v1/balance/customers/{customer}/invitations"),
            &json!({}),
        );
        assert_eq!(inv.status, 201, "{}", inv.text);
        (
            committed["merkleRoot"].as_str().unwrap().to_string(),
            inv.body["data"]["invitationUrl"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let agreeing = "cus_browser_agree";
    let (root, url) = period_of(agreeing, &["1250.75", "-0.25"]);
    let disputing = "cus_browser_dispute";
    let (dispute_root, dispute_url) = period_of(disputing, &["40", "2.5", "-7.125"]);

    let root_dir = repo_root();
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let out = artifacts.join("agree-page.json");
    let stdout = run_browser(
        "agree_page.mjs",
        &[
            url.as_str().as_ref(),
            root.as_ref(),
            out.as_os_str(),
            dispute_url.as_ref(),
            dispute_root.as_ref(),
        ],
    );
    assert!(stdout.contains("ok - the customer registered"), "{stdout}");
    assert!(stdout.contains("ok - the customer of a second"), "{stdout}");

    // The public answers show the agreement and the dispute, by the keys
    // the browser made.
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

    let dispute_answer = api.get(&format!("/api/v1/verify/{dispute_root}"));
    let d = &dispute_answer.body["data"]["agreement"];
    assert_ne!(d["counterpartyKey"], json!(key), "a key per ledger");
    let ds = d["statements"].as_array().unwrap();
    assert_eq!(ds.len(), 1, "{d}");
    assert_eq!(ds[0]["kind"], "dispute");
    let dispute = ds[0]["statement"].as_str().unwrap().to_string();
    // The second delta (2.5) is named by its itemHash, after 1 agreed
    // delta at the balance before it (40), exactly.
    let second = k.derive(disputing, "limit=3");
    let second_hash = second.body["data"]["deltas"][1]["itemHash"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        dispute.contains(&format!(
            "divergence changed\nafter 1\ndelta itemHash {second_hash}\nagreed 40\n"
        )),
        "{dispute}"
    );

    // The vendor's webhooks.
    let got = wait_event(&api, &rx, "checkpoint.cosigned");
    assert_eq!(got.json()["data"]["statement"], json!(statement));
    let got = wait_event(&api, &rx, "checkpoint.disputed");
    assert_eq!(got.json()["data"]["statement"], json!(dispute));
    assert_eq!(got.json()["data"]["customerId"], json!(disputing));

    // The receipts carry the statements once they are in the log.
    let mut receipts: Vec<Reply> = Vec::new();
    for (customer, s) in [(agreeing, &statements[0]), (disputing, &ds[0])] {
        k.wait_fact_verified(s["itemHash"].as_str().unwrap());
        let r = k.receipt(customer, "");
        assert_eq!(r.status, 200, "{}", r.text);
        let listed = &r.body["data"]["agreement"]["statements"];
        assert_eq!(listed[0]["statement"], s["statement"], "{}", r.text);
        receipts.push(r);
    }

    // Everything the offline checks need is saved, and the tools fetched
    // (the log key, pinned; bvs-verify built) before the service stops.
    let save = |name: &str, text: &str| {
        let path = artifacts.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let saved_statement = save("agree-statement.txt", &statement);
    let saved_answer = save("agree-answer.json", &answer.text);
    let saved_dispute_answer = save("agree-dispute-answer.json", &dispute_answer.text);
    let saved_receipt = save("agree-receipt.json", &receipts[0].text);
    let saved_dispute_receipt = save("agree-dispute-receipt.json", &receipts[1].text);
    assert!(answer.text.contains("balance 1250.5\\n\\n"));
    let tampered_answer = save(
        "agree-answer-tampered.json",
        &answer
            .text
            .replace("balance 1250.5\\n\\n", "balance 1250.6\\n\\n"),
    );
    assert!(receipts[0].text.contains("balance 1250.5\\n\\n"));
    let tampered_receipt = save(
        "agree-receipt-tampered.json",
        &receipts[0]
            .text
            .replacen("balance 1250.5\\n\\n", "balance 1250.6\\n\\n", 1),
    );
    let forged_statement = save(
        "agree-statement-forged.txt",
        &statement.replace("balance 1250.5\n", "balance 1250.6\n"),
    );
    let log = log_key(&api);
    let bin = bvs_verify_bin();

    // Issue 31: once the month is closed and its liabilities statement
    // published, the agreement page checks the customer's proof in
    // WebAssembly; a tampered proof fails there.
    liabilities_on_the_page(&api, &k, &base, &root);

    server.stop();
    let host = base.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(host).is_err(),
        "the service still answers at {base}"
    );

    // Offline, the service stopped: the statement against the key and root.
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (ok, text) = bvs_verify(
        &bin,
        &[
            "statement",
            &path(&saved_statement),
            "--key",
            &key,
            "--root",
            &root,
        ],
    );
    assert!(ok && text.contains("VERIFIED"), "{text}");
    let (ok, _) = bvs_verify(
        &bin,
        &["statement", &path(&forged_statement), "--key", &key],
    );
    assert!(!ok);

    // The saved public answers, agreement side included.
    let public = |file: &Path, root: &str| {
        bvs_verify(
            &bin,
            &["public", &path(file), "--key", &log, "--root", root],
        )
    };
    let (ok, text) = public(&saved_answer, &root);
    assert!(ok, "{text}");
    assert!(
        text.contains("agreement.key") && text.contains("agreement.statements[0]"),
        "{text}"
    );
    assert!(text.contains("agreed by the customer's key"), "{text}");
    let (ok, text) = public(&saved_dispute_answer, &dispute_root);
    assert!(ok, "{text}");
    assert!(text.contains("disputed by the customer's key"), "{text}");
    let (ok, text) = public(&tampered_answer, &root);
    assert!(!ok, "{text}");
    assert!(
        text.contains("FAIL  agreement.statements[0]") && text.contains("invalid_signature"),
        "{text}"
    );

    // The saved co-signed and disputed receipts.
    let receipt = |file: &Path| bvs_verify(&bin, &["receipt", &path(file), "--key", &log]);
    let (ok, text) = receipt(&saved_receipt);
    assert!(ok, "{text}");
    for check in [
        "PASS  agreement.checkpoint",
        "PASS  agreement.key",
        "PASS  agreement.statements[0]",
        "agreed by the customer's key",
    ] {
        assert!(text.contains(check), "{check}: {text}");
    }
    let (ok, text) = receipt(&saved_dispute_receipt);
    assert!(ok, "{text}");
    assert!(text.contains("disputed by the customer's key"), "{text}");
    let (ok, text) = receipt(&tampered_receipt);
    assert!(!ok, "{text}");
    assert!(
        text.contains("FAIL  agreement.statements[0]") && text.contains("invalid_signature"),
        "{text}"
    );
}

/// The cron a minute into next month starts the closed month's
/// liabilities statement; once it is published,
/// tests/browser/agree_liabilities.mjs opens `/agree?root=` and checks the
/// page's sentence, and its failure on a tampered proof.
fn liabilities_on_the_page(api: &Api, k: &bvs_tests::client::Keyed<'_>, base: &str, root: &str) {
    let now = bvs_tests::cron::now_ms();
    let period = bvs_core::types::Period::containing(i64::try_from(now).unwrap());
    bvs_tests::cron::sweep(api, u64::try_from(period.end_ms()).unwrap() + 60_000);
    let query = format!("/api/v1/liabilities?period={period}");
    bvs_tests::eventually(
        std::time::Duration::from_secs(120),
        "the liabilities statement published",
        || {
            let r = k.get(&query);
            assert_eq!(r.status, 200, "{}", r.text);
            let s = &r.body["data"]["statements"][0];
            assert_ne!(s["status"], "failed", "{s}");
            (s["status"] == "published").then_some(())
        },
    );
    let stdout = run_browser("agree_liabilities.mjs", &[base, root]);
    assert!(stdout.contains("ok - the page verifies"), "{stdout}");
    assert!(stdout.contains("ok - a tampered proof fails"), "{stdout}");
}
