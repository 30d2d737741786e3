//! Idempotency survives a crash (issue 14). Two emits with an
//! Idempotency-Key stop at a DEV_MODE-only fault point (`X-Bvs-Fault`):
//! one after its claim and quota, before the write; one after the write
//! committed, before the claim was completed. The server's whole process
//! group is then killed (SIGKILL) and started again on the same state.
//! Once the claim's lease has passed, a retry with the same key and body
//! performs the first exactly once and replays the second's stored answer:
//! one delta each, quota spent once each, never a 202 "processing" forever.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::{new_tenant, sandbox_used};
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use reqwest::Method;
use serde_json::{json, Value};

/// The documented lease of an in-flight claim (docs/balance.md).
const LEASE: Duration = Duration::from_secs(30);

fn body(customer: &str) -> Value {
    json!({"customerId": customer, "delta": 7, "reason": "crash test"})
}

fn emit(api: &Api, key: &str, idem: &str, customer: &str) -> Reply {
    let k = api.keyed(key);
    k.send(
        k.req(Method::POST, DELTA)
            .header("idempotency-key", idem)
            .json(&body(customer)),
    )
}

fn delta_count(api: &Api, key: &str, customer: &str) -> usize {
    let r = api.keyed(key).customer(customer);
    if r.status == 404 {
        return 0;
    }
    assert_eq!(r.status, 200, "{}", r.text);
    let verified = r.body["data"]["totalDeltas"].as_u64().unwrap();
    let pending = r.body["data"]["pendingDeltas"].as_u64().unwrap();
    usize::try_from(verified + pending).unwrap()
}

#[test]
fn a_crash_between_claim_and_completion_neither_wedges_nor_duplicates() {
    let dir = fresh_state_dir("idempotency-crash");
    let server = Wrangler::start(&dir);
    let api = Api::new(server.base_url.clone());
    let t = new_tenant(&api);

    // Both requests hang at their fault point until the server dies.
    let started = Instant::now();
    for (fault, idem, customer) in [
        ("after-quota", "crash-before-write", "cus_before"),
        ("after-write", "crash-after-write", "cus_after"),
    ] {
        let base = server.base_url.clone();
        let key = t.test_key.clone();
        std::thread::spawn(move || {
            let http = reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap();
            let _ = http
                .post(format!("{base}{DELTA}"))
                .header("x-api-key", key)
                .header("idempotency-key", idem)
                .header("x-bvs-fault", fault)
                .json(&body(customer))
                .send();
        });
    }
    eventually(Duration::from_secs(30), "both fault points reached", || {
        let log = std::fs::read_to_string(&server.log_path).unwrap_or_default();
        (log.contains("fault point after-quota reached")
            && log.contains("fault point after-write reached"))
        .then_some(())
    });
    server.kill();

    let server = Wrangler::start(&dir);
    let api = Api::new(server.base_url.clone());
    if started.elapsed() < LEASE - Duration::from_secs(5) {
        let r = emit(&api, &t.test_key, "crash-after-write", "cus_after");
        assert_eq!(r.status, 202, "{}", r.text);
        assert_eq!(
            r.body["data"]["status"], "processing",
            "within the lease a retry waits: {}",
            r.text
        );
    }
    if let Some(left) = (LEASE + Duration::from_secs(1)).checked_sub(started.elapsed()) {
        std::thread::sleep(left);
    }

    // Committed before the crash: the stored answer, no second write.
    let after = emit(&api, &t.test_key, "crash-after-write", "cus_after");
    assert_eq!(after.status, 202, "{}", after.text);
    assert_eq!(after.body["data"]["status"], "QUEUED", "{}", after.text);
    assert_eq!(
        after
            .headers
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true"),
        "the committed write's stored answer is replayed"
    );
    // Not written before the crash: written now, once.
    let before = emit(&api, &t.test_key, "crash-before-write", "cus_before");
    assert_eq!(before.status, 202, "{}", before.text);
    assert_eq!(before.body["data"]["status"], "QUEUED", "{}", before.text);

    // And from now on both keys replay the same answers.
    for (idem, customer, first) in [
        ("crash-after-write", "cus_after", &after),
        ("crash-before-write", "cus_before", &before),
    ] {
        let again = emit(&api, &t.test_key, idem, customer);
        assert_eq!(again.status, 202, "{}", again.text);
        assert_eq!(
            again.body["data"]["anchorId"], first.body["data"]["anchorId"],
            "{}",
            again.text
        );
        assert_eq!(delta_count(&api, &t.test_key, customer), 1, "{customer}");
    }
    assert_eq!(
        sandbox_used(&api, &t.jwt),
        2,
        "each key's quota was spent exactly once"
    );
    server.stop();
}
