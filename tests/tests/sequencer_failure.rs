//! A failing item cannot block the log: a delta, fact or checkpoint that
//! can never be appended (made so by the DEV_MODE fault injection: a delta
//! with reason `dev:fail-sequencer`, a fact whose content starts with it, a
//! checkpoint of the customer with that id) is isolated by splitting its
//! round, ends FAILED (with why) and sends one signed `verification.failed`
//! webhook, and every other item of its round, and later ones, are
//! appended on a log whose heads stay consistent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::api;
use bvs_tests::client::Api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::eventually;
use bvs_tests::ledger::{Delta, POISON, WAIT};
use bvs_tests::log::{check_consistency, log_key};
use bvs_tests::receiver::{Received, Receiver};
use bvs_tests::tenant::{create_webhook, new_tenant};
use serde_json::{json, Value};

fn body(d: &Delta) -> Value {
    serde_json::from_str(&d.to_json()).unwrap()
}

#[test]
fn a_poisoned_delta_ends_failed_with_a_webhook_and_the_rest_of_its_round_is_verified() {
    let api = api();
    let key = log_key(&api);
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    let r = create_webhook(
        &api,
        &t.jwt,
        &rx.url("/events"),
        &["verification.failed"],
        "failures",
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let secret = r.body["data"]["secret"].as_str().unwrap().to_string();
    let keyed = api.keyed(&t.test_key);

    let first = keyed.emit_anchored(&Delta::new("cus_sf_0", 1, "before"));
    let from = keyed.wait_anchored(first["anchorId"].as_str().unwrap())["treeSize"]
        .as_u64()
        .unwrap();

    // One submission, so every item is in the same round: the poisoned one
    // in the middle.
    let items: Vec<Value> = (0..7)
        .map(|i| {
            let reason = if i == 3 { POISON } else { "good" };
            body(&Delta::new(&format!("cus_sf_{}", i % 3), 10 + i, reason))
        })
        .collect();
    let r = keyed.batch(&items);
    assert_eq!(r.status, 202, "{}", r.text);
    let anchors: Vec<String> = r.body["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["anchorId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(anchors.len(), 7);

    let mut sizes = vec![from];
    for (i, a) in anchors.iter().enumerate() {
        if i == 3 {
            continue;
        }
        let d = keyed.wait_anchored(a);
        sizes.push(d["treeSize"].as_u64().unwrap());
    }
    let poisoned = &anchors[3];
    let mut polls = 0u32;
    let status = eventually(WAIT, "the poisoned delta to be FAILED", || {
        polls += 1;
        if polls.is_multiple_of(20) {
            sweep(&api, now_ms() + 60_000);
        }
        let r = keyed.delta_status(poisoned);
        assert_eq!(r.status, 200, "{}", r.text);
        (r.body["data"]["status"] != "QUEUED").then(|| r.body["data"]["status"].clone())
    });
    assert_eq!(status, "FAILED");

    // The webhook: signed, the delta as FAILED, and why.
    let is_failed = |r: &Received| r.json()["event"] == "verification.failed";
    let got = eventually(WAIT, "the verification.failed delivery", || {
        let got: Vec<Received> = rx.received().into_iter().filter(is_failed).collect();
        (!got.is_empty()).then_some(got)
    });
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].signature_is_valid(&secret));
    let data = &got[0].json()["data"];
    assert_eq!(data["anchorId"], poisoned.as_str());
    assert_eq!(data["status"], "FAILED");
    assert_eq!(data["reason"], POISON);
    assert_eq!(data["failure"]["code"], "APPEND_FAILED");
    assert!(data["failure"]["message"]
        .as_str()
        .unwrap()
        .contains("fault"));

    // The log is not blocked: a later delta is verified, and every head
    // since is consistent with the ones before.
    let later = keyed.emit_anchored(&Delta::new("cus_sf_1", 5, "after"));
    let to = keyed.wait_anchored(later["anchorId"].as_str().unwrap())["treeSize"]
        .as_u64()
        .unwrap();
    sizes.push(to);
    sizes.sort_unstable();
    sizes.dedup();
    for w in sizes.windows(2) {
        check_consistency(&api, &key, w[0], w[1]);
    }
    // The FAILED delta is in no ledger: the balance counts the six others.
    let r = keyed.delta_status(poisoned);
    assert_eq!(r.body["data"]["status"], "FAILED", "{}", r.text);
}

/// A webhook receiver subscribed to `verification.failed` for tenant `jwt`;
/// returns it and the webhook's secret.
fn failures_receiver(api: &Api, jwt: &str) -> (Receiver, String) {
    let rx = Receiver::start(&[]);
    let r = create_webhook(
        api,
        jwt,
        &rx.url("/events"),
        &["verification.failed"],
        "failures",
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let secret = r.body["data"]["secret"].as_str().unwrap().to_string();
    (rx, secret)
}

/// Polls `status` (with a sweep now and then, as the sequencer's doorbell
/// may ring before the item is visible) until it is no longer `waiting`.
fn wait_status(api: &Api, what: &str, waiting: &str, mut status: impl FnMut() -> Value) -> Value {
    let mut polls = 0u32;
    eventually(WAIT, what, || {
        polls += 1;
        if polls.is_multiple_of(20) {
            sweep(api, now_ms() + 60_000);
        }
        let s = status();
        (s["status"] != waiting).then_some(s)
    })
}

/// The `verification.failed` deliveries received, after a sweep and a
/// pause that would have let a second one arrive: each item sends once.
fn failed_deliveries(api: &Api, rx: &Receiver, expected: usize) -> Vec<Received> {
    let is_failed = |r: &Received| r.json()["event"] == "verification.failed";
    eventually(WAIT, "the verification.failed deliveries", || {
        let got = rx.received().into_iter().filter(is_failed).count();
        (got >= expected).then_some(())
    });
    sweep(api, now_ms() + 60_000);
    std::thread::sleep(Duration::from_secs(3));
    rx.received().into_iter().filter(is_failed).collect()
}

/// The log is not blocked: a later delta of the tenant is anchored.
fn later_delta_anchors(keyed: &bvs_tests::client::Keyed<'_>) {
    let later = keyed.emit_anchored(&Delta::new("cus_sf_later", 5, "after"));
    keyed.wait_anchored(later["anchorId"].as_str().unwrap());
}

#[test]
fn a_poisoned_fact_ends_failed_with_a_webhook_and_the_other_facts_are_verified() {
    let api = api();
    let t = new_tenant(&api);
    let (rx, secret) = failures_receiver(&api, &t.jwt);
    let keyed = api.keyed(&t.test_key);

    // The poisoned fact first, then good ones: they share rounds with it
    // until it is isolated.
    let submit = |content: String| {
        let r = keyed.submit_fact(&json!({ "content": content }));
        assert_eq!(r.status, 202, "{}", r.text);
        r.body["data"]["contentHash"].as_str().unwrap().to_string()
    };
    let poisoned = submit(format!("{POISON} fact {}", now_ms()));
    let good: Vec<String> = (0..3).map(|i| submit(format!("good fact {i}"))).collect();

    let v = wait_status(&api, "the poisoned fact to fail", "pending", || {
        let r = keyed.fact_verification(&poisoned);
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].clone()
    });
    assert_eq!(v["status"], "failed", "{v}");
    assert_eq!(v["verified"], false);
    assert_eq!(v["failure"]["code"], "APPEND_FAILED");
    assert!(
        v["failure"]["message"].as_str().unwrap().contains("fault"),
        "{v}"
    );
    // The fact itself says so too.
    let r = keyed.fact(&poisoned);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["status"], "failed", "{}", r.text);
    assert_eq!(r.body["data"]["verified"], false);
    assert_eq!(r.body["data"]["failure"]["code"], "APPEND_FAILED");
    for h in &good {
        keyed.wait_fact_verified(h);
        assert_eq!(keyed.fact(h).body["data"]["status"], "verified");
    }

    let got = failed_deliveries(&api, &rx, 1);
    assert_eq!(got.len(), 1, "once only: {got:?}");
    assert!(got[0].signature_is_valid(&secret));
    let data = &got[0].json()["data"];
    assert_eq!(data["contentHash"], poisoned.as_str());
    assert_eq!(data["status"], "failed");
    assert_eq!(data["verified"], false);
    assert_eq!(data["failure"]["code"], "APPEND_FAILED");
    assert!(data["failure"]["message"]
        .as_str()
        .unwrap()
        .contains("fault"));

    later_delta_anchors(&keyed);
    assert_eq!(
        keyed.fact_verification(&poisoned).body["data"]["status"],
        "failed"
    );
}

#[test]
fn a_poisoned_checkpoint_ends_failed_with_a_webhook_and_the_other_checkpoint_commits() {
    let api = api();
    let t = new_tenant(&api);
    let (rx, secret) = failures_receiver(&api, &t.jwt);
    let keyed = api.keyed(&t.test_key);

    // A checkpoint needs verified deltas of its customer in the period.
    for customer in [POISON, "cus_sf_ok"] {
        let d = keyed.emit_anchored(&Delta::new(customer, 7, "good"));
        keyed.wait_anchored(d["anchorId"].as_str().unwrap());
    }
    let checkpoint = |customer: &str| {
        let r = keyed.checkpoint(&json!({ "customerId": customer }));
        assert_eq!(r.status, 202, "{}", r.text);
        r.body["data"]["checkpointId"].as_str().unwrap().to_string()
    };
    let poisoned = checkpoint(POISON);
    let good = checkpoint("cus_sf_ok");

    let listed = |id: &str| {
        let r = keyed.checkpoints("limit=100");
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"]["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["checkpointId"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("checkpoint {id} not listed: {}", r.text))
    };
    let c = wait_status(&api, "the poisoned checkpoint to fail", "QUEUED", || {
        listed(&poisoned)
    });
    assert_eq!(c["status"], "FAILED", "{c}");
    assert_eq!(c["failure"]["code"], "APPEND_FAILED");
    assert!(
        c["failure"]["message"].as_str().unwrap().contains("fault"),
        "{c}"
    );
    assert!(
        c["leafIndex"].is_null() && c["committedAt"].is_null(),
        "{c}"
    );
    keyed.wait_committed(&good);
    assert!(listed(&good).get("failure").is_none());

    let got = failed_deliveries(&api, &rx, 1);
    assert_eq!(got.len(), 1, "once only: {got:?}");
    assert!(got[0].signature_is_valid(&secret));
    let data = &got[0].json()["data"];
    assert_eq!(data["checkpointId"], poisoned.as_str());
    assert_eq!(data["customerId"], POISON);
    assert_eq!(data["status"], "FAILED");
    assert_eq!(data["failure"]["code"], "APPEND_FAILED");
    assert!(data["failure"]["message"]
        .as_str()
        .unwrap()
        .contains("fault"));

    later_delta_anchors(&keyed);
    assert_eq!(listed(&poisoned)["status"], "FAILED");
}
