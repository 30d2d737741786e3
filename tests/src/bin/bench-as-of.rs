//! As-of benchmark (not a test; issue 43): derive `asOf` with basis
//! `verified` on a ledger of 50,000 deltas against one of 100, at the
//! same place relative to each ledger's end (five deltas before its
//! latest), so both proofs list as many deltas (`AS_OF_PROOF_DELTAS_MAX`)
//! and the ratio shows what the history costs: the boundary is found in
//! one month's window, never by a walk of the ledger. Basis `declared`
//! (which sums the ledger, at most 5,000 deltas) has no ratio goal: its
//! latency at 100 and at 5,000 deltas is reported. Run: `bash
//! bench/as-of.sh` (bench/README.md, "as of").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use bvs_core::time::{format_iso_ms, parse_iso_ms};
use bvs_tests::bench::median;
use bvs_tests::client::{Api, Keyed};
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::json;

const TRIES: usize = 21;

/// Emits `n` deltas of 1 to `customer` in batches of 100 over 4 lanes,
/// and waits until all are verified.
fn seed(k: &Keyed, customer: &str, n: usize) {
    let batches = n / 100;
    std::thread::scope(|s| {
        for lane in 0..4 {
            s.spawn(move || {
                for b in (lane..batches).step_by(4) {
                    let items: Vec<_> = (0..100)
                        .map(|j| json!({"customerId": customer, "delta": 1, "reason": format!("seed {b} {j}")}))
                        .collect();
                    loop {
                        let r = k.batch(&items);
                        if r.status == 202 {
                            break;
                        }
                        assert_eq!(r.status, 429, "{}", r.text);
                        std::thread::sleep(Duration::from_millis(500));
                    }
                }
            });
        }
    });
    eventually(Duration::from_secs(3600), "the seed to be verified", || {
        let done = k.customer(customer).body["data"]["totalDeltas"]
            .as_u64()
            .unwrap_or(0);
        if done >= n as u64 {
            Some(())
        } else {
            std::thread::sleep(Duration::from_millis(500));
            None
        }
    });
}

/// Derive's query start for `customer`: its latest delta (a ledger of
/// 50,000 deltas needs a startingCheckpoint; both ledgers get the same).
fn start(k: &Keyed, customer: &str) -> String {
    let r = k.customer(customer);
    let latest = r.body["data"]["latestReceiptId"]
        .as_str()
        .unwrap()
        .to_string();
    format!("startingCheckpoint={latest}&limit=1")
}

/// The blockTimestamp of the ledger's delta at `seq` (one of its last
/// 100), read from an as-of answer at a later moment.
fn block_at(k: &Keyed, customer: &str, seq: u64) -> i64 {
    let later = format_iso_ms(i64::try_from(bvs_tests::cron::now_ms()).unwrap() + 60_000);
    let r = k.derive(customer, &format!("{}&asOf={later}", start(k, customer)));
    assert_eq!(r.status, 200, "{}", r.text);
    let listed = r.body["data"]["asOf"]["proof"]["deltas"]
        .as_array()
        .unwrap()
        .clone();
    let d = listed.iter().find(|d| d["ledgerSeq"] == seq).unwrap();
    parse_iso_ms(d["blockTimestamp"].as_str().unwrap()).unwrap()
}

/// Median milliseconds of derive with `query`, and the listed deltas.
fn timed(k: &Keyed, customer: &str, query: &str) -> (f64, usize) {
    let mut listed = 0;
    let mut v: Vec<f64> = (0..TRIES)
        .map(|_| {
            let start = Instant::now();
            let r = k.derive(customer, query);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(r.status, 200, "{query}: {}", r.text);
            listed = r.body["data"]["asOf"]["proof"]["deltas"]
                .as_array()
                .map_or(0, Vec::len);
            ms
        })
        .collect();
    (median(&mut v), listed)
}

fn main() {
    let dir = fresh_state_dir("bench-as-of");
    let w = Wrangler::start_with_vars(&dir, &[]);
    let api = Api::new(w.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let started = Instant::now();
    seed(&k, "cus_100", 100);
    seed(&k, "cus_5k", 5_000);
    seed(&k, "cus_50k", 50_000);
    eprintln!("seeded in {:.0} s", started.elapsed().as_secs_f64());
    let verified = |customer: &str, n: u64| {
        let at = block_at(&k, customer, n - 5);
        let query = format!("{}&asOf={}", start(&k, customer), format_iso_ms(at));
        timed(&k, customer, &query)
    };
    let (small, small_listed) = verified("cus_100", 100);
    let (large, large_listed) = verified("cus_50k", 50_000);
    let now = format_iso_ms(i64::try_from(bvs_tests::cron::now_ms()).unwrap());
    let declared = |customer: &str| {
        let query = format!("{}&asOf={now}&asOfBasis=declared", start(&k, customer));
        timed(&k, customer, &query).0
    };
    let (d100, d5k) = (declared("cus_100"), declared("cus_5k"));
    println!("| measurement | value |");
    println!("|---|---|");
    println!("| asOf verified, 100-delta ledger (median of {TRIES}) | {small:.1} ms ({small_listed} deltas listed) |");
    println!(
        "| asOf verified, 50,000-delta ledger | {large:.1} ms ({large_listed} deltas listed) |"
    );
    println!(
        "| **50,000 vs 100** | **{:.2}×** (goal ≤ 1.5×) |",
        large / small
    );
    println!("| asOf declared, 100-delta ledger | {d100:.1} ms |");
    println!("| asOf declared, 5,000-delta ledger | {d5k:.1} ms |");
    w.stop();
}
