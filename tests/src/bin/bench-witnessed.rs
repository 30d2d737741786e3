//! Witnesses (issue 28, not a test): the time from a delta's emit to a
//! witnessed head (the delta status says `witnessed`) with three local
//! witnesses (aics-witness, quorum 2), and whether witnesses slow the emit
//! path: the emit's latency on a server with the witnesses and on one
//! without (no `WITNESS_POLICY_*`), one request at a time. Run by
//! `bash bench/witnessed.sh`; see bench/README.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::witness::Witnesses;
use bvs_tests::{fresh_state_dir, Wrangler};

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

/// Emit latencies (ms) of `n` single emits, one at a time.
fn emits(api: &Api, key: &str, n: usize) -> Vec<f64> {
    let k = api.keyed(key);
    (0..n)
        .map(|i| {
            let started = Instant::now();
            k.emit(&Delta::new(&format!("cus_e{}", i % 5), 1, "bench"));
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

fn main() {
    let samples: usize = std::env::var("BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let emits_n: usize = std::env::var("BENCH_EMITS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);

    let dir = fresh_state_dir("bench-witnessed");
    let w = Witnesses::start(&dir, 3, 2);
    let server = Wrangler::start_with_vars(&dir, &w.vars());
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    // Warm up: the first head and its cosignatures.
    k.emit_anchored(&Delta::new("cus_warm", 1, "warm"));

    let mut to_witnessed = Vec::new();
    for i in 0..samples {
        let started = Instant::now();
        let d = k.emit(&Delta::new("cus_w", 1, "bench"));
        let anchor = d["anchorId"].as_str().unwrap().to_string();
        loop {
            let r = k.delta_status(&anchor);
            if r.body["data"]["witnessed"] == true {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "sample {i}");
            std::thread::sleep(Duration::from_millis(25));
        }
        to_witnessed.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let mut with = emits(&api, &t.test_key, emits_n);
    server.stop();
    drop(w);

    let plain = Wrangler::start(&fresh_state_dir("bench-witnessed-none"));
    let api = Api::new(plain.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    emits(&api, &t.test_key, 5);
    let mut without = emits(&api, &t.test_key, emits_n);
    plain.stop();

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
    println!(
        "emit -> witnessed ({samples} samples, 3 local witnesses, quorum 2): p50 {:.0} ms, p99 {:.0} ms",
        percentile(&mut to_witnessed, 0.5),
        percentile(&mut to_witnessed, 0.99)
    );
    let (w50, w99) = (percentile(&mut with, 0.5), percentile(&mut with, 0.99));
    let (n50, n99) = (
        percentile(&mut without, 0.5),
        percentile(&mut without, 0.99),
    );
    println!("emit latency ({emits_n} one at a time): with witnesses p50 {w50:.1} ms p99 {w99:.1} ms; without p50 {n50:.1} ms p99 {n99:.1} ms; ratio p50 {:.2}", w50 / n50);
}
