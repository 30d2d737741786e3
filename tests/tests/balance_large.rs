//! Large histories: the 50,000-delta rule of derive, seeded fast with
//! 100-item batches on an enterprise tenant. Its own binary, so its own
//! `wrangler dev`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bvs_tests::client::Api;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{api, eventually};
use serde_json::{json, Value};

const DELTAS: usize = 50_000;
const BATCH: usize = 100;
const SEEDERS: usize = 4;

#[test]
fn derive_over_50000_deltas_requires_a_starting_checkpoint() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let started = Instant::now();
    let batches = DELTAS / BATCH;
    let anchors: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..SEEDERS)
            .map(|w| {
                let api = Api::new(api.base.clone());
                let key = t.test_key.clone();
                s.spawn(move || {
                    let mut firsts = Vec::new();
                    for b in (w..batches).step_by(SEEDERS) {
                        let items: Vec<Value> = (0..BATCH)
                            .map(|i| json!({"customerId": "cus_huge", "delta": 1, "reason": format!("seed {b}/{i}")}))
                            .collect();
                        let r = api.keyed(&key).batch(&items);
                        assert_eq!(r.status, 202, "{}", r.text);
                        firsts.push(r.body["data"]["results"][0]["anchorId"].as_str().unwrap().to_string());
                    }
                    firsts
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(anchors.iter().map(Vec::len).sum::<usize>(), batches);
    let seeded = started.elapsed();
    let k = api.keyed(&t.test_key);
    eventually(Duration::from_secs(900), "50,000 deltas to verify", || {
        let r = k.customer("cus_huge");
        (r.body["data"]["totalDeltas"] == DELTAS as u64).then_some(())
    });
    eprintln!(
        "seeded {DELTAS} deltas in {seeded:?}, all verified after {:?}",
        started.elapsed()
    );

    let derive = |q: &str| k.derive("cus_huge", q);
    let refused = derive("");
    assert_eq!(refused.status, 422, "{}", refused.text);
    let message = refused.message();
    let customer = k.customer("cus_huge");
    let latest = customer.body["data"]["latestReceiptId"].as_str().unwrap();
    assert!(
        message.contains("startingCheckpoint") && message.contains(latest),
        "{message}"
    );

    let resumed = derive(&format!(
        "startingCheckpoint={latest}&startingBalance=50000"
    ));
    assert_eq!(resumed.status, 200, "{}", resumed.text);
    assert_eq!(resumed.body["data"]["deltasCount"], 0);
    assert_eq!(resumed.body["data"]["computedBalance"], json!(50000));

    // From the last batch's first delta: 100 deltas replayed, exact balance.
    let last_batch_first = derive(&format!("startingCheckpoint={latest}&limit=1")).body["data"]
        ["latestCheckpoint"]
        .clone();
    assert_eq!(last_batch_first, json!(latest));
    let by_anchor = anchors.iter().flatten().next().unwrap();
    let mid = derive(&format!("startingCheckpoint={by_anchor}&startingCheckpointType=anchorId&startingBalance=1&limit=1000"));
    assert_eq!(mid.status, 200, "{}", mid.text);
    let replayed = mid.body["data"]["deltasCount"].as_u64().unwrap();
    assert_eq!(mid.body["data"]["computedBalance"], json!(1 + replayed));
    assert_eq!(
        mid.body["data"]["deltas"].as_array().unwrap().len(),
        1000.min(replayed as usize)
    );
    if replayed >= 1000 {
        assert!(mid.body["data"]["_hint"]["startingCheckpoint"].is_string());
    }
}
