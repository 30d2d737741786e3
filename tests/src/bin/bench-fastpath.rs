//! Emit fast-path benchmark (not a test, issue 16): single emit against
//! `GET /health` side by side on one fresh `wrangler dev` (8 connections,
//! closed loop, every delta a new customer, medians of 3 alternating 10 s
//! rounds), batch emit deltas/s, and the storage round trips per request of
//! each hot route read from the DEV_MODE request log line (`d1Calls`,
//! `doCalls`). Each round also reports the server's CPU ms per request
//! (`bvs_tests::bench::Cpu`); BENCH_SETTLE=1 waits for an idle server
//! before each round; BENCH_BUILD=DIR serves a saved Worker build. Run: `bash bench/fastpath.sh` (see bench/README.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use bvs_tests::bench::{median, round, settle, Cpu, Server};
use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const ROUNDS: usize = 3;

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
    // BENCH_BUILD=DIR: serve a saved Worker build (a copy of worker/build),
    // to compare builds run after run.
    let dir = fresh_state_dir("bench-fastpath");
    let server = match std::env::var("BENCH_BUILD") {
        Ok(build) if !build.is_empty() => {
            Wrangler::start_script(&dir, &[], &std::path::Path::new(&build).join("index.js"))
        }
        _ => Wrangler::start(&dir),
    };
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
    let port = server
        .base_url
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let srv = Server {
        group: server.process_group(),
        port,
    };
    let settling = std::env::var("BENCH_SETTLE").is_ok_and(|v| v == "1");
    let pause = || {
        if settling {
            settle(&srv);
        }
    };
    // Warm up both paths once.
    round(&srv, 2, &next, &health);
    round(&srv, 2, &next, &emit);
    let (mut h_rps, mut h_p50, mut e_rps, mut e_p50, mut b_dps) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut h_cpu, mut e_cpu) = (vec![], vec![]);
    for r in 0..ROUNDS {
        pause();
        let h = round(&srv, secs, &next, &health);
        pause();
        let e = round(&srv, secs, &next, &emit);
        pause();
        let b = round(&srv, secs / 2, &next, &batch);
        eprintln!(
            "round {r}: health {:.0}/s p50 {:.1} ms; emit {:.0}/s p50 {:.1} ms; batch {:.0} deltas/s",
            h.rps, h.p50, e.rps, e.p50, b.rps * 100.0
        );
        for (name, c) in [("health", h.cpu), ("emit", e.cpu), ("batch", b.cpu)] {
            eprintln!(
                "  CPU ms per {name} request: worker {:.2}, entry {:.2}, node {:.2}, client {:.2}",
                c.worker, c.entry, c.node, c.client
            );
        }
        h_rps.push(h.rps);
        h_p50.push(h.p50);
        e_rps.push(e.rps);
        e_p50.push(e.p50);
        b_dps.push(b.rps * 100.0);
        h_cpu.push(h.cpu);
        e_cpu.push(e.cpu);
    }
    let (hr, hp, er, ep, bd) = (
        median(&mut h_rps),
        median(&mut h_p50),
        median(&mut e_rps),
        median(&mut e_p50),
        median(&mut b_dps),
    );
    let cpu_median =
        |v: &[Cpu], f: fn(&Cpu) -> f64| median(&mut v.iter().map(f).collect::<Vec<_>>());
    let server_ms = |c: &Cpu| c.worker + c.entry + c.node;
    let worker_ms = |c: &Cpu| c.worker;
    println!("| measure | value | vs /health |");
    println!("|---|---:|---:|");
    println!("| GET /health | {hr:.0} req/s, p50 {hp:.1} ms | 1.00× |");
    println!(
        "| single emit | {er:.0} req/s, p50 {ep:.1} ms | {:.2}× req/s, {:.2}× p50 |",
        er / hr,
        ep / hp
    );
    println!("| batch emit (100 deltas) | {bd:.0} deltas/s | |");
    let (hw, hs) = (cpu_median(&h_cpu, worker_ms), cpu_median(&h_cpu, server_ms));
    let (ew, es) = (cpu_median(&e_cpu, worker_ms), cpu_median(&e_cpu, server_ms));
    println!(
        "| server CPU per request (Worker's workerd / all) | health {hw:.2} / {hs:.2} ms, emit {ew:.2} / {es:.2} ms | {:.2}× / {:.2}× |",
        ew / hw.max(0.01),
        es / hs.max(0.01)
    );

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
