//! Profiling aid (not a test, issue 16): one fresh `wrangler dev`, an
//! Enterprise key, then rounds of one request kind by 8 closed-loop
//! clients, each with its rate, p50 and the server's CPU ms per request,
//! so a profiler can be attached to the printed process group while it
//! runs. Run: `bash bench/profile.sh [health|emit|emit-idem|batch]...`
//! (PROFILE_SECS, default 20, per round; PROFILE_VARS="NAME=VALUE ..."
//! adds `--var`s to wrangler dev). See bench/README.md "profile".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::sync::atomic::AtomicUsize;

use bvs_tests::bench::{round, settle, Server};
use bvs_tests::client::Api;
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::{json, Value};

fn main() {
    let kinds: Vec<String> = std::env::args().skip(1).collect();
    let secs: u64 = std::env::var("PROFILE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let vars_text = std::env::var("PROFILE_VARS").unwrap_or_default();
    let vars: Vec<(&str, &str)> = vars_text
        .split_whitespace()
        .filter_map(|v| v.split_once('='))
        .collect();
    let server = Wrangler::start_with_vars(&fresh_state_dir("bench-profile"), &vars);
    let srv = Server::of(&server);
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let next = AtomicUsize::new(0);
    eprintln!(
        "server {} process group {} log {}",
        server.base_url,
        srv.group,
        server.log_path.display()
    );
    for kind in &kinds {
        settle(&srv);
        let r = match kind.as_str() {
            "health" => round(&srv, secs, &next, &|_| {
                assert_eq!(api.get("/health").status, 200);
            }),
            "emit" | "emit-idem" => round(&srv, secs, &next, &|i| {
                let body =
                    json!({"customerId": format!("cus_p{i}"), "delta": 1, "reason": "profile"});
                let mut rb = k.req(reqwest::Method::POST, DELTA).json(&body);
                if kind == "emit-idem" {
                    rb = rb.header("idempotency-key", format!("idem-profile-{i}"));
                }
                let r = api.send(rb);
                assert_eq!(r.status, 202, "{}", r.text);
            }),
            "batch" => round(&srv, secs, &next, &|i| {
                let items: Vec<Value> = (0..100)
                    .map(|j| json!({"customerId": format!("cus_pb{i}_{j}"), "delta": 1, "reason": "b"}))
                    .collect();
                let r = k.batch(&items);
                assert_eq!(r.status, 202, "{}", r.text);
            }),
            other => panic!("unknown kind {other}: health, emit, emit-idem or batch"),
        };
        let c = r.cpu;
        println!(
            "{kind}: {:.0} req/s, p50 {:.1} ms; CPU ms per request: worker {:.2}, entry {:.2}, node {:.2}, client {:.2}",
            r.rps, r.p50, c.worker, c.entry, c.node, c.client
        );
    }
    server.stop();
}
