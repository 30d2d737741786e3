//! Retention through `wrangler dev`: the daily cron, driven through the
//! scheduled route with a chosen time, removes raw context past a tenant's
//! window and nothing else; every proof still verifies afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bvs_core::verify::verify_receipt_json;
use bvs_tests::client::{Api, Reply};
use bvs_tests::receiver::Receiver;
use bvs_tests::tenant::{get_jwt, new_tenant, patch_jwt, post_jwt, Tenant};
use bvs_tests::{eventually, shared};
use reqwest::Method;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);
const DAY_MS: u64 = 86_400_000;
/// The retention cron moves every tenant's data at once: tests that run it
/// take turns, so one test's run never lands between another's steps.
static CRON: Mutex<()> = Mutex::new(());

fn api() -> Api {
    Api::new(shared())
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn keyed(api: &Api, t: &Tenant, method: Method, path: &str, body: Option<&Value>) -> Reply {
    let mut rb = api.req(method, path).header("x-api-key", &t.test_key);
    if let Some(b) = body {
        rb = rb.json(b);
    }
    api.send(rb)
}

fn emit(api: &Api, t: &Tenant, customer: &str, delta: &str, reason: &str) -> Value {
    let body = format!(
        r#"{{"customerId":"{customer}","delta":{delta},"reason":"{reason}","referenceId":"ref-{reason}","metadata":{{"invoice":"inv-{reason}"}}}}"#
    );
    let r = api.send(
        api.req(Method::POST, "/api/v1/balance/delta")
            .header("x-api-key", &t.test_key)
            .header("content-type", "application/json")
            .body(body),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    r.body["data"].clone()
}

fn status(api: &Api, t: &Tenant, anchor: &str) -> Value {
    let r = keyed(
        api,
        t,
        Method::GET,
        &format!("/api/v1/balance/delta/{anchor}"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

fn wait_anchored(api: &Api, t: &Tenant, anchor: &str) {
    eventually(WAIT, "anchored", || {
        (status(api, t, anchor)["status"] == "ANCHORED").then_some(())
    });
}

fn derive(api: &Api, t: &Tenant, customer: &str) -> Value {
    let r = keyed(
        api,
        t,
        Method::GET,
        &format!("/api/v1/balance/derive/{customer}"),
        None,
    );
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

/// Runs the daily retention cron as if it were `time_ms`.
fn run_retention(api: &Api, time_ms: u64) {
    let r = api.get(&format!(
        "/cdn-cgi/local/scheduled?cron=17+3+*+*+*&time={time_ms}"
    ));
    assert_eq!(r.status, 200, "scheduled route: {}", r.text);
}

fn log_key(api: &Api) -> String {
    let r = api.get("/api/v1/log/sandbox/key");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["verifierKey"].as_str().unwrap().to_string()
}

/// The receipt's `data` exactly as the server wrote it, and its check by core.
fn receipt_verifies(api: &Api, t: &Tenant, customer: &str) -> Value {
    let r = keyed(
        api,
        t,
        Method::GET,
        &format!("/api/v1/balance/receipt/{customer}"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let start = r.text.find("\"data\":").unwrap() + 7;
    let raw = &r.text[start..r.text.len() - 1];
    let report = verify_receipt_json(raw, Some(&log_key(api)));
    assert!(
        report.ok,
        "{:#?}",
        report.checks.iter().filter(|c| !c.ok).collect::<Vec<_>>()
    );
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
    let rx = Receiver::start(&[]);
    let hook = post_jwt(
        &api,
        "/dashboard/webhooks",
        &t.jwt,
        &json!({"url": rx.url("/r"), "events": ["delta.verified"], "description": "r"}),
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let hook_id = hook.body["data"]["id"].as_str().unwrap().to_string();

    let a = emit(&api, &t, "cus_ret", "10.5", "first");
    let b = emit(&api, &t, "cus_ret", "-2.25", "second");
    let fact = keyed(
        &api,
        &t,
        Method::POST,
        "/api/v1/facts",
        Some(&json!({"content": "retained fact", "metadata": {"secret": "fact-meta"}})),
    );
    assert_eq!(fact.status, 202, "{}", fact.text);
    let content_hash = fact.body["data"]["contentHash"]
        .as_str()
        .unwrap()
        .to_string();
    for d in [&a, &b] {
        wait_anchored(&api, &t, d["anchorId"].as_str().unwrap());
    }
    eventually(WAIT, "the fact to verify", || {
        let r = keyed(
            &api,
            &t,
            Method::GET,
            &format!("/api/v1/facts/{content_hash}/verify"),
            None,
        );
        (r.body["data"]["verified"] == true).then_some(())
    });
    eventually(WAIT, "both deliveries to complete", || {
        let r = get_jwt(
            &api,
            &format!("/dashboard/webhooks/{hook_id}/deliveries"),
            &t.jwt,
        );
        let ds = r.body["data"].as_array()?.clone();
        (ds.len() == 2 && ds.iter().all(|d| d["status"] == "succeeded")).then_some(())
    });
    let before = derive(&api, &t, "cus_ret");
    let receipt_before = receipt_verifies(&api, &t, "cus_ret");

    let _turn = CRON.lock().unwrap_or_else(|p| p.into_inner());
    set_retention(&api, &t, json!(7));

    // Inside the window: nothing goes.
    run_retention(&api, now_ms() + 3 * DAY_MS);
    let d = derive(&api, &t, "cus_ret");
    assert!(d["deltas"].as_array().unwrap().iter().all(|x| !purged(x)));
    assert_eq!(d["deltas"][0]["reason"], "first");

    // Past it: raw context goes, permanent data stays.
    run_retention(&api, now_ms() + 8 * DAY_MS);
    let after = derive(&api, &t, "cus_ret");
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
    let s = status(&api, &t, a["anchorId"].as_str().unwrap());
    assert_eq!(s["status"], "ANCHORED");
    assert!(s["metadata"].is_null() && s["reason"].is_null() && s["referenceId"].is_null());
    assert_eq!(s["dataPurged"], true);
    assert_eq!(s["receiptId"], a["receiptId"]);
    assert_eq!(s["itemHash"], a["itemHash"]);

    let f = keyed(
        &api,
        &t,
        Method::GET,
        &format!("/api/v1/facts/{content_hash}"),
        None,
    );
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
    let receipt_after = receipt_verifies(&api, &t, "cus_ret");
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
    let r = keyed(
        &api,
        &t,
        Method::GET,
        &format!("/api/v1/facts/{content_hash}/verify"),
        None,
    );
    assert_eq!(r.body["data"]["verified"], true, "{}", r.text);

    // A later run finds nothing more to do and changes nothing.
    run_retention(&api, now_ms() + 9 * DAY_MS);
    assert_eq!(derive(&api, &t, "cus_ret")["deltas"], after["deltas"]);
}

#[test]
fn no_window_keeps_everything_and_a_shorter_window_applies_at_the_next_run() {
    let api = api();
    let forever = new_tenant(&api);
    let stopped = new_tenant(&api);
    let shortened = new_tenant(&api);
    let mut anchors = Vec::new();
    for t in [&forever, &stopped, &shortened] {
        let d = emit(&api, t, "cus_keep", "1", "kept");
        anchors.push(d["anchorId"].as_str().unwrap().to_string());
    }
    for (t, a) in [&forever, &stopped, &shortened].iter().zip(&anchors) {
        wait_anchored(&api, t, a);
    }

    let _turn = CRON.lock().unwrap_or_else(|p| p.into_inner());
    // `stopped` had a window and removed it: null stops purging.
    set_retention(&api, &stopped, json!(7));
    set_retention(&api, &stopped, Value::Null);
    set_retention(&api, &shortened, json!(30));
    run_retention(&api, now_ms() + 8 * DAY_MS);
    for t in [&forever, &stopped, &shortened] {
        let d = derive(&api, t, "cus_keep");
        assert!(!purged(&d["deltas"][0]), "{d}");
        assert_eq!(d["deltas"][0]["reason"], "kept");
    }

    // Shortening the window takes effect at the next run.
    set_retention(&api, &shortened, json!(7));
    run_retention(&api, now_ms() + 8 * DAY_MS);
    let d = derive(&api, &shortened, "cus_keep");
    assert!(purged(&d["deltas"][0]), "{d}");
    assert!(d["deltas"][0]["reason"].is_null());
    for t in [&forever, &stopped] {
        let d = derive(&api, t, "cus_keep");
        assert!(!purged(&d["deltas"][0]), "{d}");
    }
    receipt_verifies(&api, &shortened, "cus_keep");
}
