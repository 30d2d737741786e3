//! Issue 15: a noisy shard does not delay a quiet one. Each ledger shard has
//! its own verification queue with one consumer at a time, so a shard whose
//! sequencer is busy holds only its own queue. Here shard 0's sequencer is
//! held in the middle of a round (the DEV_MODE hold point: a delta whose
//! reason is `dev:hold-sequencer` holds its round 30 s before it commits)
//! with a noisy tenant's batches queued behind it, and a quiet tenant on
//! shard 1 emits one delta: that delta is VERIFIED while every noisy delta
//! is still pending. Asserted on state, not on time: with one queue for
//! all shards the quiet doorbell waited for the held invocation, and the
//! noisy backlog was appended first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::{Api, Keyed};
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

/// worker/src/sequencer/round.rs `DEV_HOLD_REASON`.
const HOLD_REASON: &str = "dev:hold-sequencer";
/// Batches of 100 the noisy tenant queues behind the held round.
const BACKLOG_BATCHES: usize = 4;
/// Long enough for the hold (30 s) and the backlog behind it on a loaded
/// machine; a bound, not a measurement.
const WAIT: Duration = Duration::from_secs(300);

fn batch(k: &Keyed, items: &[Value]) {
    let r = k.batch(items);
    assert_eq!(r.status, 202, "{}", r.text);
}

fn noise(first: usize) -> Vec<Value> {
    (first..first + 100)
        .map(|i| json!({"customerId": "cus_noisy", "delta": 1, "reason": format!("noise {i}")}))
        .collect()
}

/// `(pendingDeltas, totalDeltas)` of a customer.
fn counts(k: &Keyed, customer: &str) -> (u64, u64) {
    let r = k.customer(customer);
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    (
        d["pendingDeltas"].as_u64().unwrap(),
        d["totalDeltas"].as_u64().unwrap(),
    )
}

/// The shard of a tenant's log, from a receipt.
fn shard(k: &Keyed, customer: &str) -> u64 {
    let r = k.receipt(customer, "");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["log"]["shard"].as_u64().unwrap()
}

#[test]
fn a_quiet_shard_is_verified_while_a_noisy_shard_is_busy() {
    let server = Wrangler::start_sharded(&fresh_state_dir("shard-queues"));
    let api = Api::new(server.base_url.clone());
    // A fresh service places tenants on the emptiest shard, lowest first.
    let noisy = new_tenant_on_plan(&api, "enterprise");
    let quiet = new_tenant_on_plan(&api, "enterprise");
    let (kn, kq) = (api.keyed(&noisy.test_key), api.keyed(&quiet.test_key));

    // Shard 0's sequencer takes the held delta and is busy with it...
    let mut first = noise(1);
    first[0] = json!({"customerId": "cus_noisy", "delta": 1, "reason": HOLD_REASON});
    batch(&kn, &first);
    eventually(WAIT, "shard 0's sequencer to reach the hold", || {
        let log = std::fs::read_to_string(&server.log_path).unwrap_or_default();
        log.contains("sequencer sandbox: DEV_MODE hold reached")
            .then_some(())
    });
    // ...while more of the noisy tenant's batches queue up behind it.
    for b in 1..=BACKLOG_BATCHES {
        batch(&kn, &noise(b * 100 + 1));
    }
    let noisy_total = (100 * (BACKLOG_BATCHES + 1)) as u64;
    assert_eq!(counts(&kn, "cus_noisy"), (noisy_total, 0));

    // The quiet tenant's delta on shard 1 is verified meanwhile: its
    // status is read before the noisy count, so the noisy backlog was still
    // pending when it was ANCHORED.
    let anchor = kq.emit(&Delta::new("cus_quiet", 1, "quiet"))["anchorId"]
        .as_str()
        .unwrap()
        .to_string();
    eventually(WAIT, "the quiet delta to be verified", || {
        let quiet_status = kq.delta_status(&anchor).body["data"]["status"].clone();
        let (pending, _) = counts(&kn, "cus_noisy");
        assert!(
            pending > 0,
            "the noisy backlog was verified before the quiet delta (status {quiet_status}): \
             the quiet shard waited for the busy one"
        );
        (quiet_status == "ANCHORED").then_some(())
    });

    // Then the held round commits and the backlog drains, each once, each
    // tenant in its own shard's log.
    eventually(WAIT, "the noisy backlog to be verified", || {
        (counts(&kn, "cus_noisy") == (0, noisy_total)).then_some(())
    });
    assert_eq!(shard(&kn, "cus_noisy"), 0);
    assert_eq!(shard(&kq, "cus_quiet"), 1);
    assert_eq!(counts(&kq, "cus_quiet"), (0, 1));
    server.stop();
}
