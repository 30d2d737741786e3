//! A failing item cannot block the log: a delta that can never be appended
//! (made so by the DEV_MODE fault injection, reason `dev:fail-sequencer`)
//! is isolated by splitting its round, ends FAILED with a signed
//! `verification.failed` webhook, and every other delta of its round, and
//! later ones, are verified on a log whose heads stay consistent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::eventually;
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::log::{check_consistency, log_key};
use bvs_tests::receiver::{Received, Receiver};
use bvs_tests::tenant::{create_webhook, new_tenant};
use serde_json::Value;

/// The DEV_MODE fault-injection reason (worker `sequencer::DEV_FAULT_REASON`).
const POISON: &str = "dev:fail-sequencer";

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
