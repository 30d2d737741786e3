//! Emit fast-path benchmark (not a test, issue 16): single emit against
//! `GET /health` side by side on one fresh `wrangler dev` (8 connections,
//! closed loop, every delta a new customer, medians of 3 alternating 10 s
//! rounds), batch emit deltas/s, and the storage round trips per request of
//! each hot route read from the DEV_MODE request log line (`d1Calls`,
//! `doCalls`). Run: `bash bench/fastpath.sh` (see bench/README.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const CONNECTIONS: usize = 8;
const ROUNDS: usize = 3;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Requests/s and p50 latency (ms) of `f` run for `secs` by CONNECTIONS
/// closed-loop clients; `f(i)` gets a number unique in the whole run.
fn round(secs: u64, next: &AtomicUsize, f: &(impl Fn(usize) + Sync)) -> (f64, f64) {
    let lat = Mutex::new(Vec::new());
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    std::thread::scope(|s| {
        for _ in 0..CONNECTIONS {
            s.spawn(|| {
                let mut mine = Vec::new();
                while Instant::now() < end {
                    let t = Instant::now();
                    f(next.fetch_add(1, Ordering::Relaxed));
                    mine.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                lat.lock().unwrap().extend(mine);
            });
        }
    });
    let mut lat = lat.into_inner().unwrap();
    let n = lat.len() as f64;
    (n / start.elapsed().as_secs_f64(), median(&mut lat))
}

/// The `d1Calls` and `doCalls` of the last logged request on `route`.
fn calls(log: &str, method: &str, route: &str) -> Option<(u64, u64)> {
    log.lines()
        .rev()
        .filter_map(|l| {
            l.find('{')
                .and_then(|i| serde_json::from_str::<Value>(&l[i..]).ok())
        })
        .find(|v| v["route"] == route && v["method"] == method && v.get("d1Calls").is_some())
        .map(|v| {
            (
                v["d1Calls"].as_u64().unwrap_or(0),
                v["doCalls"].as_u64().unwrap_or(0),
            )
        })
}

fn main() {
    let server = Wrangler::start(&fresh_state_dir("bench-fastpath"));
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let next = AtomicUsize::new(0);
    let secs: u64 = std::env::var("BENCH_ROUND_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);

    let health = |_| assert_eq!(api.get("/health").status, 200);
    let emit = |i: usize| {
        let r = k.post(
            DELTA,
            &json!({"customerId": format!("cus_fp{i}"), "delta": 1, "reason": "fast path"}),
        );
        assert_eq!(r.status, 202, "{}", r.text);
    };
    let batch = |i: usize| {
        let items: Vec<Value> = (0..100)
            .map(|j| json!({"customerId": format!("cus_fb{i}_{j}"), "delta": 1, "reason": "b"}))
            .collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
    };
    let rt = k.emit_anchored(&bvs_tests::ledger::Delta::new("cus_rt", 5, "round trips"));
    // Warm up both paths once.
    round(2, &next, &health);
    round(2, &next, &emit);
    let (mut h_rps, mut h_p50, mut e_rps, mut e_p50, mut b_dps) =
        (vec![], vec![], vec![], vec![], vec![]);
    for r in 0..ROUNDS {
        let (rps, p50) = round(secs, &next, &health);
        h_rps.push(rps);
        h_p50.push(p50);
        let (rps, p50) = round(secs, &next, &emit);
        e_rps.push(rps);
        e_p50.push(p50);
        let (rps, _) = round(secs / 2, &next, &batch);
        b_dps.push(rps * 100.0);
        eprintln!(
            "round {r}: health {:.0}/s p50 {:.1} ms; emit {:.0}/s p50 {:.1} ms; batch {:.0} deltas/s",
            h_rps[r], h_p50[r], e_rps[r], e_p50[r], b_dps[r]
        );
    }
    let (hr, hp, er, ep, bd) = (
        median(&mut h_rps),
        median(&mut h_p50),
        median(&mut e_rps),
        median(&mut e_p50),
        median(&mut b_dps),
    );
    println!("| measure | value | vs /health |");
    println!("|---|---:|---:|");
    println!("| GET /health | {hr:.0} req/s, p50 {hp:.1} ms | 1.00× |");
    println!(
        "| single emit | {er:.0} req/s, p50 {ep:.1} ms | {:.2}× req/s, {:.2}× p50 |",
        er / hr,
        ep / hp
    );
    println!("| batch emit (100 deltas) | {bd:.0} deltas/s | |");

    // Round trips per hot route: one request at a time, so the per-isolate
    // counters see only that request.
    // The round-trip sample's delta was emitted before the rounds: anchored
    // by now (the rounds leave a long queue behind them).
    k.wait_anchored(rt["anchorId"].as_str().unwrap());
    let emitted = k.post(
        DELTA,
        &json!({"customerId": "cus_rt", "delta": 2, "reason": "round trips"}),
    );
    assert_eq!(emitted.status, 202, "{}", emitted.text);
    batch(usize::MAX);
    let root = rt["receiptId"].as_str().unwrap().to_string();
    let derive: Reply = k.get("/api/v1/balance/derive/cus_rt");
    let receipt: Reply = k.get("/api/v1/balance/receipt/cus_rt");
    let verify: Reply = api.get(&format!("/api/v1/verify/{root}"));
    eprintln!(
        "derive {}, receipt {}, verify {}",
        derive.status, receipt.status, verify.status
    );
    std::thread::sleep(Duration::from_secs(1));
    let log = std::fs::read_to_string(&server.log_path).unwrap_or_default();
    println!();
    println!("| route | D1 round trips | Durable Object calls |");
    println!("|---|---:|---:|");
    for (method, route) in [
        ("POST", "/api/v1/balance/delta"),
        ("POST", "/api/v1/balance/delta/batch"),
        ("GET", "/api/v1/balance/derive/:customerId"),
        ("GET", "/api/v1/balance/receipt/:customerId"),
        ("GET", "/api/v1/verify/:proofRoot"),
    ] {
        match calls(&log, method, route) {
            Some((d1, dos)) => println!("| {method} {route} | {d1} | {dos} |"),
            None => println!("| {method} {route} | ? | ? |"),
        }
    }
    server.stop();
}
