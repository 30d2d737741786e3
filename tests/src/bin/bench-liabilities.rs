//! Liabilities benchmark (not a test; issue 31 part B): on `wrangler dev`,
//! build and store a statement for `BENCH_LEDGERS` ledgers (default
//! 100,000) through the worker's job, publish it through the sequencer,
//! then time a customer's proof (`GET .../liabilities-proof`). The ledgers
//! are seeded by the DEV_MODE route `POST /dev/liabilities/seed` (a
//! balance at the end of last month each, no deltas), so the run measures
//! the statement, not intake. Prints the wall times, the job's pages and
//! the load average. Run: `bash bench/liabilities.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use bvs_core::types::Period;
use bvs_tests::cron::now_ms;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::json;

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

fn main() {
    let n: u64 = std::env::var("BENCH_LEDGERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let server = Wrangler::start(&fresh_state_dir("bench-liabilities"));
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let now = i64::try_from(now_ms()).unwrap();
    let last = Period::containing(Period::containing(now).start_ms() - 1).to_string();
    let started = Instant::now();
    let r = k.post("/dev/liabilities/seed", &json!({"n": n, "period": last}));
    assert_eq!(r.status, 200, "{}", r.text);
    println!(
        "seeded {n} ledgers in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let r = k.post(
        "/api/v1/liabilities",
        &json!({"environment": "sandbox", "period": last}),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.body["data"]["id"].as_str().unwrap().to_owned();
    let mut built_at = None;
    // A patient client: a status read waits behind the job's pages on a
    // loaded `wrangler dev` (one local isolate).
    let patient = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let status_url = format!("{}/api/v1/liabilities/{id}", server.base_url);
    let s = eventually(Duration::from_secs(3600), "the statement published", || {
        std::thread::sleep(Duration::from_secs(2));
        let Ok(r) = patient
            .get(&status_url)
            .header("X-Api-Key", &t.test_key)
            .send()
        else {
            return None;
        };
        let body: serde_json::Value = r.json().ok()?;
        let s = body["data"].clone();
        eprintln!(
            "{:>6.1} s  {} snapshotted {} built {}",
            started.elapsed().as_secs_f64(),
            s["status"],
            s["ledgersSnapshotted"],
            s["ledgersBuilt"]
        );
        assert_ne!(s["status"], "failed", "{s}");
        if built_at.is_none() && (s["status"] == "queued" || s["status"] == "published") {
            built_at = Some(started.elapsed());
        }
        (s["status"] == "published").then_some(s)
    });
    let published = started.elapsed();
    let built = built_at.unwrap_or(published);
    println!(
        "statement of {} ledgers: built and stored in {:.1} s ({:.0} ledgers/s), published in {:.1} s; load {}",
        s["ledgersBuilt"],
        built.as_secs_f64(),
        n as f64 / built.as_secs_f64(),
        published.as_secs_f64(),
        load()
    );
    println!(
        "liabilities {} receivables {}",
        s["liabilities"], s["receivables"]
    );

    let mut times = Vec::new();
    for i in [1u64, n / 2, n] {
        let c = format!("bench-{i:07}");
        let t0 = Instant::now();
        let r = k.get(&format!(
            "/api/v1/balance/customers/{c}/liabilities-proof?period={last}"
        ));
        assert_eq!(r.status, 200, "{}", r.text);
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "one customer's proof: median {:.0} ms of 3; load {}",
        times[1],
        load()
    );
    server.stop();
}
