//! The sweeper: a lost queue message delays work but never loses it. The
//! server is stopped right after emitting (its whole process group, queued
//! doorbells and all), started again on the same state, and the
//! every-minute cron, run through the scheduled route, finishes the work:
//! every delta reaches ANCHORED exactly once, the log stays consistent, and
//! every delta.verified webhook arrives exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bvs_tests::client::{Api, Keyed};
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::DELTA;
use bvs_tests::log::{check_consistency, log_key};
use bvs_tests::receiver::Receiver;
use bvs_tests::tenant::{create_webhook, new_tenant_on_plan};
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(120);
const BATCH: usize = 40;
const SINGLES: usize = 5;

/// The status route's `data`, waiting out the key's rate limit (sandbox:
/// 10 requests per second).
fn status(k: &Keyed, anchor: &str) -> Value {
    loop {
        let r = k.delta_status(anchor);
        if r.status == 429 {
            std::thread::sleep(Duration::from_secs(1));
            continue;
        }
        assert_eq!(r.status, 200, "{}", r.text);
        return r.body["data"].clone();
    }
}

#[test]
fn work_left_by_a_stopped_server_is_finished_by_the_sweep_exactly_once() {
    let dir = fresh_state_dir("sweeper");
    let server = Wrangler::start(&dir);
    let api = Api::new(server.base_url.clone());
    // Enterprise: its key's rate (1,000/s) fits polling 45 statuses a round;
    // a sandbox key's 10/s would answer 429 to the test itself.
    let t = new_tenant_on_plan(&api, "enterprise");
    let rx = Receiver::start(&[]);
    let hook = create_webhook(&api, &t.jwt, &rx.url("/sweep"), &["delta.verified"], "s");
    assert_eq!(hook.status, 201, "{}", hook.text);

    // Emit, then stop at once: doorbells in flight die with the server.
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    let items: Vec<Value> = (0..BATCH)
        .map(|i| json!({"customerId": format!("cus_s{}", i % 4), "delta": i + 1, "reason": "b"}))
        .collect();
    let r = api.keyed(&t.test_key).batch(&items);
    assert_eq!(r.status, 202, "{}", r.text);
    for (i, res) in r.body["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        expected.insert(
            res["anchorId"].as_str().unwrap().to_string(),
            i64::try_from(i).unwrap() + 1,
        );
    }
    for i in 0..SINGLES {
        let r = api.keyed(&t.test_key).post(
            DELTA,
            &json!({"customerId": "cus_single", "delta": 100 + i, "reason": "s"}),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        expected.insert(
            r.body["data"]["anchorId"].as_str().unwrap().to_string(),
            100 + i64::try_from(i).unwrap(),
        );
    }
    server.stop();

    let server = Wrangler::start(&dir);
    let api = Api::new(server.base_url.clone());
    let k = api.keyed(&t.test_key);
    let queued = expected
        .keys()
        .filter(|a| status(&k, a)["status"] == "QUEUED")
        .count();
    eprintln!(
        "after the restart, {queued} of {} deltas were still QUEUED",
        expected.len()
    );
    sweep(&api, now_ms() + 60_000);
    let mut last_sweep = Instant::now();
    let statuses: BTreeMap<String, Value> = eventually(WAIT, "every delta anchored", || {
        if last_sweep.elapsed() > Duration::from_secs(5) {
            sweep(&api, now_ms() + 60_000);
            last_sweep = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(500));
        let mut all = BTreeMap::new();
        for anchor in expected.keys() {
            let d = status(&k, anchor);
            if d["status"] != "ANCHORED" {
                return None;
            }
            all.insert(anchor.clone(), d);
        }
        Some(all)
    });

    // Exactly once: one leaf per delta, no leaf twice, no extra leaf.
    let n = expected.len();
    let leaves: BTreeSet<u64> = statuses
        .values()
        .map(|d| d["leafIndex"].as_u64().unwrap())
        .collect();
    assert_eq!(leaves.len(), n, "every delta has its own leaf");
    assert_eq!(*leaves.iter().next_back().unwrap(), n as u64 - 1);
    let mut total = 0;
    // Let the key's rate limit refill after the status reads.
    std::thread::sleep(Duration::from_secs(2));
    for customer in ["cus_s0", "cus_s1", "cus_s2", "cus_s3", "cus_single"] {
        let r = k.derive(customer, "limit=1000");
        assert_eq!(r.status, 200, "{}", r.text);
        let want: i64 = statuses
            .iter()
            .filter(|(_, d)| d["customerId"] == customer)
            .map(|(a, _)| expected[a])
            .sum();
        assert_eq!(r.body["data"]["computedBalance"], json!(want), "{customer}");
        total += r.body["data"]["deltasCount"].as_u64().unwrap();
    }
    assert_eq!(total, n as u64, "no delta counted twice");

    // The log holds exactly these items, and every head is consistent with
    // the latest one.
    let key = log_key(&api);
    let heads = api.get("/api/v1/log/sandbox/heads?limit=100");
    assert_eq!(heads.status, 200, "{}", heads.text);
    let heads = heads.body["data"]["heads"].as_array().unwrap().clone();
    let latest = heads
        .iter()
        .map(|h| h["treeSize"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(latest, n as u64, "leaf count = item count");
    for h in &heads {
        let m = h["treeSize"].as_u64().unwrap();
        if m == 0 {
            continue;
        }
        check_consistency(&api, &key, m, latest);
    }

    // Every delta.verified webhook arrives, once each.
    let got = eventually(WAIT, "every webhook", || {
        if last_sweep.elapsed() > Duration::from_secs(5) {
            sweep(&api, now_ms() + 60_000);
            last_sweep = Instant::now();
        }
        let got = rx.received();
        (got.len() >= n).then_some(got)
    });
    std::thread::sleep(Duration::from_secs(2));
    sweep(&api, now_ms() + 120_000);
    std::thread::sleep(Duration::from_secs(2));
    let got = if rx.received().len() > got.len() {
        rx.received()
    } else {
        got
    };
    let anchors: BTreeSet<String> = got
        .iter()
        .map(|r| r.json()["data"]["anchorId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got.len(), n, "no webhook twice");
    assert_eq!(anchors.len(), n);
    assert!(anchors.iter().all(|a| expected.contains_key(a)));
    server.stop();
}
