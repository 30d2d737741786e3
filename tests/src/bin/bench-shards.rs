//! Shard benchmark (not a test; issue 15): on `wrangler dev`,
//! (1) aggregate verified deltas/s under batch emits from 4 tenants with 1
//! shard vs 4 shards; (2) isolation: p99 verification lag of a quiet
//! tenant alone, while a noisy tenant saturates another shard, and while it
//! saturates the quiet tenant's own shard. Medians of `BENCH_ROUNDS`
//! rounds (default 3). The 1-shard and the 4-shard servers run side by
//! side and their rounds alternate, as do the three isolation cases, so
//! load from other processes slows all alike; each round prints the load
//! average. The noisy tenant keeps its shard saturated with a bounded
//! backlog (`NOISE_BACKLOG_MAX` pending per lane), drained after each case.
//! Run: `bash bench/shards.sh` (see bench/README.md; `BENCH_ONLY`,
//! `BENCH_ROUNDS`, `BENCH_LAG_SAMPLES`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bvs_tests::client::{Api, Keyed};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::{new_tenant_on_plan, Tenant};
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const TENANTS: usize = 4;
const BATCHES_PER_TENANT: usize = 10;
/// The noisy tenant's lanes pause while this many of their deltas are
/// pending: its shard always has work queued (saturated) without a backlog
/// that grows for as long as the measurement runs.
const NOISE_BACKLOG_MAX: u64 = 1000;

/// Quiet samples per case: `BENCH_LAG_SAMPLES` (default 20).
fn lag_samples() -> usize {
    std::env::var("BENCH_LAG_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

/// `BENCH_ONLY=throughput` or `isolation` runs one part (default both).
fn part(name: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |p| p == name)
}

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// The 1-minute load average (from /proc/loadavg), for the report.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Waits until none of `customers`' deltas is pending: a noisy phase's
/// backlog must not spill into the next measurement.
fn drain(api: &Api, t: &Tenant, customers: &[&str]) {
    let k = api.keyed(&t.test_key);
    for c in customers {
        eventually(
            Duration::from_secs(1800),
            "the noisy backlog to drain",
            || {
                let r = k.customer(c);
                (r.status == 404 || r.body["data"]["pendingDeltas"].as_u64() == Some(0))
                    .then_some(())
            },
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn verified(k: &Keyed, customer: &str) -> u64 {
    let r = k.customer(customer);
    r.body["data"]["totalDeltas"].as_u64().unwrap_or(0)
}

fn batch(k: &Keyed, customer: &str, tag: &str) {
    let items: Vec<Value> = (0..100)
        .map(|j| json!({"customerId": customer, "delta": 1, "reason": format!("{tag} {j}")}))
        .collect();
    let r = k.batch(&items);
    assert_eq!(r.status, 202, "{}", r.text);
}

/// Verified deltas/s: every tenant emits its batches (one thread each),
/// timed from the first emit until all of them are verified.
fn throughput(api: &Api, tenants: &[Tenant], round: usize) -> f64 {
    let customer = format!("cus_tp{round}");
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in tenants {
            let customer = &customer;
            s.spawn(move || {
                let k = api.keyed(&t.test_key);
                for b in 0..BATCHES_PER_TENANT {
                    batch(&k, customer, &format!("r{round} b{b}"));
                }
            });
        }
    });
    let want = (BATCHES_PER_TENANT * 100) as u64;
    for t in tenants {
        let k = api.keyed(&t.test_key);
        eventually(Duration::from_secs(900), "batches to verify", || {
            (verified(&k, &customer) >= want).then_some(())
        });
    }
    (tenants.len() as u64 * want) as f64 / start.elapsed().as_secs_f64()
}

/// The quiet tenant's verification lags (ms): one delta at a time, emit →
/// ANCHORED polled every 20 ms, while `noisy` (if any) emits batches.
fn quiet_lags(api: &Api, quiet: &Tenant, noisy: Option<&Tenant>, round: usize) -> Vec<f64> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        if let Some(n) = noisy {
            for lane in 0..2 {
                let stop = &stop;
                s.spawn(move || {
                    let k = api.keyed(&n.test_key);
                    let customer = format!("cus_noise{lane}");
                    let mut b = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let pending = k.customer(&customer).body["data"]["pendingDeltas"]
                            .as_u64()
                            .unwrap_or(0);
                        if pending >= NOISE_BACKLOG_MAX {
                            std::thread::sleep(Duration::from_millis(100));
                            continue;
                        }
                        batch(&k, &customer, &format!("r{round} n{b}"));
                        b += 1;
                    }
                });
            }
            // Let the noise build up a queue first.
            std::thread::sleep(Duration::from_secs(3));
        }
        let k = api.keyed(&quiet.test_key);
        let mut lags = Vec::new();
        for i in 0..lag_samples() {
            let start = Instant::now();
            let r = k.post(
                DELTA,
                &json!({"customerId": "cus_quiet", "delta": 1, "reason": format!("q{round} {i}")}),
            );
            assert_eq!(r.status, 202, "{}", r.text);
            let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
            eventually(Duration::from_secs(600), "the quiet delta", || {
                let d = k.delta_status(&anchor);
                if d.body["data"]["status"] == "ANCHORED" {
                    Some(())
                } else {
                    std::thread::sleep(Duration::from_millis(20));
                    None
                }
            });
            lags.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        stop.store(true, Ordering::Relaxed);
        lags
    })
}

/// The shard a tenant is on, from its first receipt's log.
fn shard_of(api: &Api, t: &Tenant) -> u64 {
    let k = api.keyed(&t.test_key);
    k.emit_anchored(&bvs_tests::ledger::Delta::new("cus_where", 1, "where"));
    k.receipt("cus_where", "").body["data"]["log"]["shard"]
        .as_u64()
        .unwrap()
}

fn server(shards: &str) -> (Wrangler, Api) {
    let w = Wrangler::start_with(
        &fresh_state_dir(&format!("bench-shards-{shards}")),
        &[("LEDGER_SHARDS_SANDBOX", shards)],
    );
    let api = Api::new(w.base_url.clone());
    (w, api)
}

fn main() {
    let mut rows: Vec<(String, String)> = Vec::new();

    if part("throughput") {
        throughput_part(&mut rows);
    }
    if part("isolation") {
        isolation_part(&mut rows);
    }
    println!("| measurement | value |\n|---|---|");
    for (k, v) in rows {
        println!("| {k} | {v} |");
    }
}

fn throughput_part(rows: &mut Vec<(String, String)>) {
    // (1) Aggregate throughput, 1 shard vs 4: both servers up, rounds
    // alternating between them.
    let servers: Vec<(&str, Wrangler, Api, Vec<Tenant>)> = ["1", "4"]
        .into_iter()
        .map(|shards| {
            let (w, api) = server(shards);
            let tenants: Vec<Tenant> = (0..TENANTS)
                .map(|_| new_tenant_on_plan(&api, "enterprise"))
                .collect();
            (shards, w, api, tenants)
        })
        .collect();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    for round in 0..rounds() {
        for (i, (shards, _, api, tenants)) in servers.iter().enumerate() {
            let r = throughput(api, tenants, round);
            eprintln!(
                "round {round}: {shards} shard(s): {r:.0} verified deltas/s (load {})",
                load()
            );
            rates[i].push(r);
        }
    }
    let mut medians = Vec::new();
    for ((shards, w, _, _), r) in servers.into_iter().zip(rates.iter_mut()) {
        let per_round = r
            .iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let m = median(r);
        rows.push((
            format!("verified deltas/s, {TENANTS} tenants, {shards} shard(s) (median)"),
            format!("{m:.0} (rounds: {per_round})"),
        ));
        medians.push(m);
        w.stop();
    }
    rows.push((
        "4 shards vs 1".into(),
        format!("{:.2}×", medians[1] / medians[0]),
    ));
}

fn isolation_part(rows: &mut Vec<(String, String)>) {
    // (2) Isolation on 4 shards: tenants 0..3 land on shards 0..3, the
    // fifth on shard 0 again (the emptiest rule).
    let (w, api) = server("4");
    let tenants: Vec<Tenant> = (0..5)
        .map(|_| new_tenant_on_plan(&api, "enterprise"))
        .collect();
    let shards: Vec<u64> = tenants.iter().map(|t| shard_of(&api, t)).collect();
    eprintln!("placement: {shards:?}");
    let noisy = &tenants[0];
    let other = tenants
        .iter()
        .zip(&shards)
        .find(|(_, s)| **s != shards[0])
        .unwrap()
        .0;
    let same = tenants[1..]
        .iter()
        .zip(&shards[1..])
        .find(|(_, s)| **s == shards[0])
        .unwrap()
        .0;
    let mut alone = Vec::new();
    let mut apart = Vec::new();
    let mut together = Vec::new();
    let noise = ["cus_noise0", "cus_noise1"];
    for round in 0..rounds() {
        alone.push(pct(&mut quiet_lags(&api, other, None, round), 0.99));
        apart.push(pct(&mut quiet_lags(&api, other, Some(noisy), round), 0.99));
        drain(&api, noisy, &noise);
        together.push(pct(&mut quiet_lags(&api, same, Some(noisy), round), 0.99));
        drain(&api, noisy, &noise);
        eprintln!(
            "round {round}: p99 alone {:.0} ms, noisy on another shard {:.0} ms, on the same shard {:.0} ms (load {})",
            alone[round], apart[round], together[round], load()
        );
    }
    let per_round = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (alone_rounds, apart_rounds, together_rounds) =
        (per_round(&alone), per_round(&apart), per_round(&together));
    let (a, b, c) = (
        median(&mut alone),
        median(&mut apart),
        median(&mut together),
    );
    rows.push((
        "quiet tenant p99 lag, alone (median)".into(),
        format!("{a:.0} ms (rounds: {alone_rounds})"),
    ));
    rows.push((
        "quiet tenant p99 lag, noisy tenant on another shard".into(),
        format!(
            "{b:.0} ms = {:.2}× alone (goal ≤ 1.5×; rounds: {apart_rounds})",
            b / a
        ),
    ));
    rows.push((
        "quiet tenant p99 lag, noisy tenant on the same shard".into(),
        format!(
            "{c:.0} ms = {:.2}× alone (rounds: {together_rounds})",
            c / a
        ),
    ));
    w.stop();
}
