//! Round trips per hot route (not a test, issue 16): on one fresh, quiet
//! `wrangler dev` with an Enterprise key, the sample of
//! `bvs_tests::trips::prepare` (emit, batch, derive from genesis and from
//! either checkpoint type, both receipts, public verify of each kind of
//! root, compare, delta status), each route sent `BENCH_TRIES` (9) times
//! one at a time; prints the medians of its D1 calls, sequential D1 round
//! trips and Durable Object calls (the DEV_MODE request log line) and of
//! its latency. Run by `bash bench/fastpath.sh` before the throughput
//! rounds (`BENCH_ONLY=trips`: this part only); see bench/README.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::client::Api;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{fresh_state_dir, trips, Wrangler};

fn main() {
    let server = Wrangler::start(&fresh_state_dir("bench-trips"));
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let tries: usize = std::env::var("BENCH_TRIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(9);
    let probes = trips::prepare(&k, "cus_rt");
    println!(
        "| route (medians of {tries}, one at a time) | D1 calls | D1 sequential | Durable Object calls | p50 ms |"
    );
    println!("|---|---:|---:|---:|---:|");
    for p in &probes {
        let t = trips::measure(&k, &server.log_path, p, tries);
        println!(
            "| {} | {} | {} | {} | {:.1} |",
            p.name, t.d1_calls, t.d1_trips, t.do_calls, t.ms
        );
    }
    server.stop();
}
