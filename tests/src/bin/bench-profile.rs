//! Profiling aid (not a test, issue 16): fresh `wrangler dev` servers with
//! an Enterprise key each, then rounds of one request kind by 8
//! closed-loop clients, each with its rate, p50 and the server's CPU ms per
//! request, so a profiler can be attached to the printed process group
//! while it runs. Run: `bash bench/profile.sh [health|emit|emit-idem|batch]...`
//! PROFILE_SECS (default 20) per round; PROFILE_VARS="NAME=VALUE ..." adds
//! `--var`s to wrangler dev; PROFILE_BUILDS="a=DIR b=DIR@STOP" serves each
//! saved Worker build (a copy of worker/build; `this`: the checkout's) from
//! a server of its own, with EMIT_PROFILE_STOP=STOP if given, and
//! alternates the rounds between them, PROFILE_REPEAT (default 1) times,
//! then prints the medians: two builds compared under the same load. See
//! bench/README.md "profile".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;

use bvs_tests::bench::{median, round, settle, Round, Server};
use bvs_tests::client::{Api, Keyed};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::{json, Value};

fn one_round(kind: &str, srv: &Server, k: &Keyed, secs: u64, next: &AtomicUsize) -> Round {
    match kind {
        "health" => round(srv, secs, next, &|_| {
            assert_eq!(k.api.get("/health").status, 200);
        }),
        "emit" | "emit-idem" => round(srv, secs, next, &|i| {
            let body = json!({"customerId": format!("cus_p{i}"), "delta": 1, "reason": "profile"});
            let mut rb = k.req(reqwest::Method::POST, DELTA).json(&body);
            if kind == "emit-idem" {
                rb = rb.header("idempotency-key", format!("idem-profile-{i}"));
            }
            let r = k.api.send(rb);
            assert_eq!(r.status, 202, "{}", r.text);
        }),
        "batch" => round(srv, secs, next, &|i| {
            let items: Vec<Value> = (0..100)
                .map(|j| json!({"customerId": format!("cus_pb{i}_{j}"), "delta": 1, "reason": "b"}))
                .collect();
            let r = k.batch(&items);
            assert_eq!(r.status, 202, "{}", r.text);
        }),
        other => panic!("unknown kind {other}: health, emit, emit-idem or batch"),
    }
}

fn main() {
    let kinds: Vec<String> = std::env::args().skip(1).collect();
    let env_num = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let secs = env_num("PROFILE_SECS", 20);
    let repeat = env_num("PROFILE_REPEAT", 1);
    let vars_text = std::env::var("PROFILE_VARS").unwrap_or_default();
    let vars: Vec<(&str, &str)> = vars_text
        .split_whitespace()
        .filter_map(|v| v.split_once('='))
        .collect();
    let builds_text = std::env::var("PROFILE_BUILDS").unwrap_or_default();
    // name=DIR (a saved build; "this": the checkout's), optionally
    // @STOP: that server's EMIT_PROFILE_STOP.
    let builds: Vec<(String, Option<PathBuf>, Option<String>)> = if builds_text.trim().is_empty() {
        vec![("this".to_string(), None, None)]
    } else {
        builds_text
            .split_whitespace()
            .filter_map(|b| b.split_once('='))
            .map(|(name, spec)| {
                let (dir, stop) = match spec.split_once('@') {
                    Some((dir, stop)) => (dir, Some(stop.to_string())),
                    None => (spec, None),
                };
                let script = (dir != "this").then(|| PathBuf::from(dir).join("index.js"));
                (name.to_string(), script, stop)
            })
            .collect()
    };
    let servers: Vec<(String, Wrangler)> = builds
        .iter()
        .map(|(name, script, stop)| {
            let dir = fresh_state_dir("bench-profile");
            let mut vars = vars.clone();
            if let Some(stop) = stop {
                vars.push(("EMIT_PROFILE_STOP", stop));
            }
            let w = match script {
                Some(script) => Wrangler::start_script(&dir, &vars, script),
                None => Wrangler::start_with_vars(&dir, &vars),
            };
            (name.clone(), w)
        })
        .collect();
    let apis: Vec<Api> = servers
        .iter()
        .map(|(_, w)| Api::new(w.base_url.clone()))
        .collect();
    let keys: Vec<String> = apis
        .iter()
        .map(|api| new_tenant_on_plan(api, "enterprise").test_key)
        .collect();
    let srvs: Vec<Server> = servers.iter().map(|(_, w)| Server::of(w)).collect();
    for ((name, w), srv) in servers.iter().zip(&srvs) {
        eprintln!(
            "{name}: server {} process group {} log {}",
            w.base_url,
            srv.group,
            w.log_path.display()
        );
    }
    let next = AtomicUsize::new(0);
    // (server, kind) -> rounds
    let mut results: Vec<Vec<Vec<Round>>> = (0..servers.len())
        .map(|_| kinds.iter().map(|_| Vec::new()).collect())
        .collect();
    for _ in 0..repeat {
        for (ki, kind) in kinds.iter().enumerate() {
            for (si, (name, _)) in servers.iter().enumerate() {
                for s in &srvs {
                    settle(s);
                }
                let k = apis[si].keyed(&keys[si]);
                let r = one_round(kind, &srvs[si], &k, secs, &next);
                let c = r.cpu;
                println!(
                    "{name} {kind}: {:.0} req/s, p50 {:.1} ms; CPU ms per request: worker {:.2}, entry {:.2}, node {:.2}, client {:.2}",
                    r.rps, r.p50, c.worker, c.entry, c.node, c.client
                );
                results[si][ki].push(r);
            }
        }
    }
    if repeat > 1 || servers.len() > 1 {
        println!();
        println!("| build | kind | req/s | p50 ms | Worker CPU ms | all server CPU ms |");
        println!("|---|---|---:|---:|---:|---:|");
        for (si, (name, _)) in servers.iter().enumerate() {
            for (ki, kind) in kinds.iter().enumerate() {
                let rs = &results[si][ki];
                let m =
                    |f: &dyn Fn(&Round) -> f64| median(&mut rs.iter().map(f).collect::<Vec<_>>());
                println!(
                    "| {name} | {kind} | {:.0} | {:.1} | {:.2} | {:.2} |",
                    m(&|r| r.rps),
                    m(&|r| r.p50),
                    m(&|r| r.cpu.worker),
                    m(&|r| r.cpu.worker + r.cpu.entry + r.cpu.node)
                );
            }
        }
    }
    for (_, w) in servers {
        w.stop();
    }
}
