//! Retention through `wrangler dev`: the daily cron, driven through the
//! scheduled route with a chosen time, removes raw context past a tenant's
//! window and nothing else; every proof still verifies afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use bvs_tests::client::{Api, Keyed};
use bvs_tests::cron::{now_ms, run_retention, sweep};
use bvs_tests::ledger::{Delta, POISON, WAIT};
use bvs_tests::log::{check_receipt, log_key};
use bvs_tests::receiver::Receiver;
use bvs_tests::tenant::{create_webhook, get_jwt, new_tenant, patch_jwt, Tenant};
use bvs_tests::{api, eventually};
use serde_json::{json, Value};

const DAY_MS: u64 = 86_400_000;
/// The retention cron moves every tenant's data at once: tests that run it
/// take turns, so one test's run never lands between another's steps.
static CRON: Mutex<()> = Mutex::new(());

/// A delta whose raw context (reason, referenceId, metadata) names
/// `reason`.
fn delta(customer: &str, amount: &str, reason: &str) -> Delta {
    Delta::new(customer, amount, reason)
        .reference_id(&format!("ref-{reason}"))
        .metadata(json!({"invoice": format!("inv-{reason}")}))
}

fn derive(k: &Keyed, customer: &str) -> Value {
    let r = k.derive(customer, "");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

fn set_retention(api: &Api, t: &Tenant, days: Value) {
    let r = patch_jwt(
        api,
        "/dashboard/tenant/retention",
        &t.jwt,
        &json!({ "dataRetentionDays": days }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

/// The receipt's `data`, checked by core on the server's exact bytes.
fn receipt_verifies(k: &Keyed, customer: &str) -> Value {
    let r = k.receipt(customer, "");
    assert_eq!(r.status, 200, "{}", r.text);
    check_receipt(&r, &log_key(k.api));
    r.body["data"].clone()
}

fn public_verify(api: &Api, root: &str) -> Value {
    let r = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["verified"], true, "{}", r.text);
    r.body["data"].clone()
}

fn purged(d: &Value) -> bool {
    d["dataPurged"] == true
}

#[test]
fn raw_context_past_the_window_is_purged_and_every_proof_still_verifies() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let rx = Receiver::start(&[]);
    let hook = create_webhook(&api, &t.jwt, &rx.url("/r"), &["delta.verified"], "r");
    assert_eq!(hook.status, 201, "{}", hook.text);
    let hook_id = hook.body["data"]["id"].as_str().unwrap().to_string();

    let a = k.emit(&delta("cus_ret", "10.5", "first"));
    let b = k.emit(&delta("cus_ret", "-2.25", "second"));
    let fact =
        k.submit_fact(&json!({"content": "retained fact", "metadata": {"secret": "fact-meta"}}));
    assert_eq!(fact.status, 202, "{}", fact.text);
    let content_hash = fact.body["data"]["contentHash"]
        .as_str()
        .unwrap()
        .to_string();
    for d in [&a, &b] {
        k.wait_anchored(d["anchorId"].as_str().unwrap());
    }
    k.wait_fact_verified(&content_hash);
    eventually(WAIT, "both deliveries to complete", || {
        let r = get_jwt(
            &api,
            &format!("/dashboard/webhooks/{hook_id}/deliveries"),
            &t.jwt,
        );
        let ds = r.body["data"].as_array()?.clone();
        (ds.len() == 2 && ds.iter().all(|d| d["status"] == "succeeded")).then_some(())
    });
    let before = derive(&k, "cus_ret");
    let receipt_before = receipt_verifies(&k, "cus_ret");

    let _turn = CRON.lock().unwrap_or_else(|p| p.into_inner());
    set_retention(&api, &t, json!(7));

    // Inside the window: nothing goes.
    run_retention(&api, now_ms() + 3 * DAY_MS);
    let d = derive(&k, "cus_ret");
    assert!(d["deltas"].as_array().unwrap().iter().all(|x| !purged(x)));
    assert_eq!(d["deltas"][0]["reason"], "first");

    // Past it: raw context goes, permanent data stays.
    run_retention(&api, now_ms() + 8 * DAY_MS);
    let after = derive(&k, "cus_ret");
    assert_eq!(after["computedBalance"], before["computedBalance"]);
    assert_eq!(after["computedBalance"], json!(8.25));
    assert_eq!(after["deltasCount"], 2);
    assert_eq!(after["latestReceiptId"], before["latestReceiptId"]);
    for (x, y) in after["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .zip(before["deltas"].as_array().unwrap())
    {
        assert!(purged(x), "{x}");
        assert!(x["reason"].is_null(), "{x}");
        assert!(x["referenceId"].is_null(), "{x}");
        for field in [
            "anchorId",
            "itemHash",
            "itemsRoot",
            "receiptId",
            "delta",
            "declaredTimestamp",
            "blockTimestamp",
            "verified",
        ] {
            assert_eq!(x[field], y[field], "{field} is permanent");
        }
    }
    let s = k.delta_status(a["anchorId"].as_str().unwrap());
    assert_eq!(s.status, 200, "{}", s.text);
    let s = &s.body["data"];
    assert_eq!(s["status"], "ANCHORED");
    assert!(s["metadata"].is_null() && s["reason"].is_null() && s["referenceId"].is_null());
    assert_eq!(s["dataPurged"], true);
    assert_eq!(s["receiptId"], a["receiptId"]);
    assert_eq!(s["itemHash"], a["itemHash"]);

    let f = k.fact(&content_hash);
    assert_eq!(f.status, 200, "{}", f.text);
    assert!(f.body["data"]["metadata"].is_null(), "{}", f.text);
    assert_eq!(f.body["data"]["content"], "retained fact");
    assert_eq!(f.body["data"]["verified"], true);

    let r = get_jwt(
        &api,
        &format!("/dashboard/webhooks/{hook_id}/deliveries"),
        &t.jwt,
    );
    for dlv in r.body["data"].as_array().unwrap() {
        assert_eq!(dlv["dataPurged"], true, "{dlv}");
        assert!(dlv["payload"].is_null() && dlv["url"].is_null(), "{dlv}");
        assert_eq!(dlv["status"], "succeeded");
        assert_eq!(dlv["attempts"][0]["httpStatus"], 200);
    }
    assert!(!r.text.contains("inv-first"));

    // Receipts, proofs and public verification still work and verify.
    let receipt_after = receipt_verifies(&k, "cus_ret");
    assert_eq!(receipt_after["itemsRoot"], receipt_before["itemsRoot"]);
    assert_eq!(
        receipt_after["finalBalance"],
        receipt_before["finalBalance"]
    );
    assert!(!serde_json::to_string(&receipt_after)
        .unwrap()
        .contains("inv-first"));
    public_verify(&api, receipt_after["itemsRoot"].as_str().unwrap());
    let v = public_verify(&api, a["receiptId"].as_str().unwrap());
    assert!(!serde_json::to_string(&v).unwrap().contains("first\""));
    let r = k.fact_verification(&content_hash);
    assert_eq!(r.body["data"]["verified"], true, "{}", r.text);

    // A later run finds nothing more to do and changes nothing.
    run_retention(&api, now_ms() + 9 * DAY_MS);
    assert_eq!(derive(&k, "cus_ret")["deltas"], after["deltas"]);
}

#[test]
fn no_window_keeps_everything_and_a_shorter_window_applies_at_the_next_run() {
    let api = api();
    let forever = new_tenant(&api);
    let stopped = new_tenant(&api);
    let shortened = new_tenant(&api);
    let keys = [&forever, &stopped, &shortened].map(|t| api.keyed(&t.test_key));
    let mut anchors = Vec::new();
    for k in &keys {
        let d = k.emit(&delta("cus_keep", "1", "kept"));
        anchors.push(d["anchorId"].as_str().unwrap().to_string());
    }
    for (k, a) in keys.iter().zip(&anchors) {
        k.wait_anchored(a);
    }

    let _turn = CRON.lock().unwrap_or_else(|p| p.into_inner());
    // `stopped` had a window and removed it: null stops purging.
    set_retention(&api, &stopped, json!(7));
    set_retention(&api, &stopped, Value::Null);
    set_retention(&api, &shortened, json!(30));
    run_retention(&api, now_ms() + 8 * DAY_MS);
    for k in &keys {
        let d = derive(k, "cus_keep");
        assert!(!purged(&d["deltas"][0]), "{d}");
        assert_eq!(d["deltas"][0]["reason"], "kept");
    }

    // Shortening the window takes effect at the next run.
    set_retention(&api, &shortened, json!(7));
    run_retention(&api, now_ms() + 8 * DAY_MS);
    let [k_forever, k_stopped, k_shortened] = keys;
    let d = derive(&k_shortened, "cus_keep");
    assert!(purged(&d["deltas"][0]), "{d}");
    assert!(d["deltas"][0]["reason"].is_null());
    for k in [&k_forever, &k_stopped] {
        let d = derive(k, "cus_keep");
        assert!(!purged(&d["deltas"][0]), "{d}");
    }
    receipt_verifies(&k_shortened, "cus_keep");
}

#[test]
fn a_failed_delta_and_a_failed_fact_lose_their_raw_context_past_the_window_too() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let failed = k.emit(
        &Delta::new("cus_ret_failed", "3", POISON)
            .reference_id("ref-failed")
            .metadata(json!({"invoice": "inv-failed"})),
    );
    let anchor = failed["anchorId"].as_str().unwrap().to_string();
    let fact = k.submit_fact(&json!({
        "content": format!("{POISON} retained {}", now_ms()),
        "metadata": {"secret": "failed-fact-meta"},
    }));
    assert_eq!(fact.status, 202, "{}", fact.text);
    let hash = fact.body["data"]["contentHash"]
        .as_str()
        .unwrap()
        .to_string();
    let status = || {
        let r = k.delta_status(&anchor);
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].clone()
    };
    let fact_now = || {
        let r = k.fact(&hash);
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].clone()
    };
    // With a sweep now and then: a round that fails is retried by the
    // sweeper, which isolates the poisoned item (sequencer_failure.rs).
    let mut polls = 0u32;
    eventually(WAIT, "the poisoned delta and fact to be FAILED", || {
        polls += 1;
        if polls.is_multiple_of(20) {
            sweep(&api, now_ms() + 60_000);
        }
        (status()["status"] == "FAILED" && fact_now()["status"] == "failed").then_some(())
    });

    let _turn = CRON.lock().unwrap_or_else(|p| p.into_inner());
    set_retention(&api, &t, json!(7));
    run_retention(&api, now_ms() + 3 * DAY_MS);
    let d = status();
    assert!(!purged(&d), "{d}");
    assert_eq!(d["reason"], POISON);
    assert_eq!(fact_now()["metadata"]["secret"], "failed-fact-meta");

    // Past the window, counted from when they were received: the raw
    // context goes; what they are, and that they failed, stays.
    run_retention(&api, now_ms() + 8 * DAY_MS);
    let d = status();
    assert!(purged(&d), "{d}");
    for field in ["reason", "referenceId", "metadata"] {
        assert!(d[field].is_null(), "{field}: {d}");
    }
    assert_eq!(d["status"], "FAILED");
    assert_eq!(d["delta"], json!(3));
    let f = fact_now();
    assert!(purged(&f), "{f}");
    assert!(f["metadata"].is_null(), "{f}");
    assert_eq!(f["status"], "failed");
    assert_eq!(f["failure"]["code"], "APPEND_FAILED");
    assert!(f["content"].as_str().unwrap().starts_with(POISON), "{f}");
}
