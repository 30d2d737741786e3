//! Service benchmark (not a test): drives a fresh `wrangler dev` over HTTP
//! and prints a table of throughput ratios, verification lag, derive and
//! proof latency ratios, and checkpoint cost against the Worker's own
//! SHA-256 limit. Run: `bash bench/service.sh` (see bench/README.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use bvs_tests::client::{Api, Keyed, Reply};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const CLIENTS: usize = 4;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

/// Requests per second of `f` run `n` times by CLIENTS threads.
fn throughput(n: usize, f: impl Fn(usize) + Sync) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let f = &f;
            s.spawn(move || {
                for i in (c..n).step_by(CLIENTS) {
                    f(i);
                }
            });
        }
    });
    n as f64 / start.elapsed().as_secs_f64()
}

fn timed(f: impl FnOnce() -> Reply) -> (f64, Reply) {
    let start = Instant::now();
    let r = f();
    (start.elapsed().as_secs_f64() * 1000.0, r)
}

fn seed(k: &Keyed, customer: &str, count: usize) -> Vec<String> {
    let batches = count.div_ceil(100);
    let firsts = std::sync::Mutex::new(vec![String::new(); batches]);
    throughput(batches, |b| {
        let n = (count - b * 100).min(100);
        let items: Vec<Value> = (0..n)
            .map(|i| json!({"customerId": customer, "delta": 1, "reason": format!("seed {b}/{i}")}))
            .collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
        firsts.lock().unwrap()[b] = r.body["data"]["results"][0]["anchorId"]
            .as_str()
            .unwrap()
            .to_string();
    });
    firsts.into_inner().unwrap()
}

fn wait_verified(k: &Keyed, customer: &str, count: usize) {
    eventually(Duration::from_secs(1800), "seeded deltas to verify", || {
        let r = k.customer(customer);
        (r.body["data"]["totalDeltas"] == count as u64).then_some(())
    });
}

fn main() {
    let server = Wrangler::start(&fresh_state_dir("bench"));
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let mut rows = Rows(Vec::new());

    // Throughput against an empty route on the same server.
    let health = throughput(400, |_| {
        assert_eq!(api.get("/health").status, 200);
    });
    let single = throughput(400, |i| {
        let r = k.post(
            DELTA,
            &json!({"customerId": format!("cus_tp{}", i % 10), "delta": 1, "reason": "tp"}),
        );
        assert_eq!(r.status, 202, "{}", r.text);
    });
    let batch = throughput(40, |i| {
        let items: Vec<Value> = (0..100).map(|j| json!({"customerId": format!("cus_b{}", j % 10), "delta": 1, "reason": format!("b{i}")})).collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
    });
    rows.push((
        "empty route (GET /health)".into(),
        format!("{health:.0} req/s"),
        "1.00×".into(),
    ));
    rows.push((
        "single emit".into(),
        format!("{single:.0} req/s"),
        format!("{:.2}× of empty", single / health),
    ));
    rows.push((
        "batch emit (100 deltas)".into(),
        format!("{batch:.1} req/s = {:.0} deltas/s", batch * 100.0),
        format!("{:.2}× of empty (requests)", batch / health),
    ));

    // Verification lag: emit → ANCHORED, polled every 20 ms.
    let mut lags = Vec::new();
    for i in 0..30 {
        let start = Instant::now();
        let r = k.post(
            DELTA,
            &json!({"customerId": "cus_lag", "delta": 1, "reason": format!("lag {i}")}),
        );
        let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
        loop {
            let s = k.delta_status(&anchor);
            if s.body["data"]["status"] == "ANCHORED" {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        lags.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    rows.push((
        "verification lag p50 / p99".into(),
        format!(
            "{:.0} ms / {:.0} ms",
            pct(&mut lags, 0.5),
            pct(&mut lags, 0.99)
        ),
        "queue batch timeout is 1 s".into(),
    ));

    // Derive latency at 1k vs 100k history (same query shape: resume from
    // the first delta, one page of 100).
    let small = seed(&k, "cus_1k", 1_000);
    let large = seed(&k, "cus_100k", 100_000);
    let ten_k = seed(&k, "cus_10k", 10_000);
    wait_verified(&k, "cus_1k", 1_000);
    wait_verified(&k, "cus_100k", 100_000);
    wait_verified(&k, "cus_10k", 10_000);
    let derive_ms = |customer: &str, anchor: &str| {
        let query =
            format!("startingCheckpoint={anchor}&startingCheckpointType=anchorId&limit=100");
        let mut v: Vec<f64> = (0..40)
            .map(|_| timed(|| k.derive(customer, &query)).0)
            .collect();
        median(&mut v)
    };
    let d1k = derive_ms("cus_1k", &small[0]);
    let d100k = derive_ms("cus_100k", &large[0]);
    rows.push((
        "derive, 1k history (median)".into(),
        format!("{d1k:.1} ms"),
        String::new(),
    ));
    rows.push((
        "derive, 100k history (median)".into(),
        format!("{d100k:.1} ms"),
        format!("{:.2}× of 1k (target ≤ 1.2×)", d100k / d1k),
    ));
    let _ = ten_k;

    // Checkpoint build vs the Worker's SHA-256 limit for the same tree.
    for (customer, n) in [("cus_10k", 10_000u64), ("cus_100k", 100_000)] {
        let mut ck: Vec<f64> = (0..3)
            .map(|_| {
                let (ms, r) = timed(|| k.checkpoint(&json!({"customerId": customer})));
                assert_eq!(r.status, 202, "{}", r.text);
                ms
            })
            .collect();
        let mut hash: Vec<f64> = (0..3)
            .map(|_| timed(|| api.post("/dev/bench/hash", &json!({"n": n}))).0)
            .collect();
        let (c, h) = (median(&mut ck), median(&mut hash));
        rows.push((
            format!("checkpoint over {n} deltas (median)"),
            format!("{c:.0} ms vs {h:.0} ms hashing"),
            format!("{:.2}× of SHA-256 limit (target ≤ 1.5×)", c / h),
        ));
    }

    // Inclusion-proof latency at 1k vs 1M leaves (production log: empty so far).
    let grow = |mut n: u64| {
        while n > 0 {
            let step = n.min(50_000);
            let r = api.post("/dev/log/grow", &json!({"n": step, "env": "production"}));
            assert_eq!(r.status, 200, "{}", r.text);
            n -= step;
        }
    };
    let proof_ms = |api: &Api| {
        let heads = api.get("/api/v1/log/production/heads?from=0&limit=100");
        let _ = heads;
        let head = api.get("/api/v1/log/production/checkpoint").text;
        let size: u64 = head.lines().nth(1).unwrap().parse().unwrap();
        // Any leaf: read its hash back through the log (first leaf of the last append).
        let mut v = Vec::new();
        for i in 0..40u64 {
            let leaf = (i * 7919) % size;
            let (ms, r) = timed(|| api.get(&format!("/dev/log/leaf?env=production&index={leaf}")));
            let _ = ms;
            let item = r.body["data"]["itemHash"].as_str().unwrap().to_string();
            let (ms, r) = timed(|| {
                api.get(&format!(
                    "/api/v1/log/production/proof/inclusion?itemHash={item}"
                ))
            });
            assert_eq!(r.status, 200, "{}", r.text);
            v.push(ms);
        }
        median(&mut v)
    };
    grow(1_000);
    let p1k = proof_ms(&api);
    let start = Instant::now();
    grow(999_000);
    let grown = start.elapsed();
    let p1m = proof_ms(&api);
    rows.push((
        "inclusion proof, 1k leaves (median)".into(),
        format!("{p1k:.1} ms"),
        String::new(),
    ));
    rows.push((
        "inclusion proof, 1M leaves (median)".into(),
        format!("{p1m:.1} ms"),
        format!(
            "{:.2}× of 1k (target ≤ 1.5×); grew 999k leaves in {:.0} s",
            p1m / p1k,
            grown.as_secs_f64()
        ),
    ));

    println!("\n| measurement | value | ratio |\n|---|---|---|");
    for (a, b, c) in &rows.0 {
        println!("| {a} | {b} | {c} |");
    }
    server.stop();
}

/// Rows of the table; each is also printed to stderr as it is measured.
struct Rows(Vec<(String, String, String)>);

impl Rows {
    fn push(&mut self, row: (String, String, String)) {
        eprintln!("measured: {} = {} ({})", row.0, row.1, row.2);
        self.0.push(row);
    }
}
