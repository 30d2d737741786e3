//! Throughput benchmark (not a test; issue 27): does verification keep up
//! with what the API accepts? On `wrangler dev`, one ledger shard, for each
//! build named in `BENCH_BUILDS` (alternating, so load from other
//! processes slows all alike; every phase prints the load average):
//!
//! 1. **Intake**: batch emit, 4 connections (one enterprise tenant each),
//!    batches of 100, `BENCH_INTAKE_SECS` (30) seconds, with the sequencer
//!    off (DEV_MODE `EMIT_PROFILE_STOP=sequencer-off`): accepted deltas/s.
//! 2. **Drain**: the same state restarted with the sequencer on, no intake
//!    running: the backlog the intake left (about 100,000 deltas) verified
//!    per second, the Worker's CPU ms per verified delta (its workerd
//!    process, `bvs_tests::bench::Cpu`), and when the event outbox is
//!    empty (the webhook dispatcher's share; builds with the operator's
//!    `GET /admin/shards`). Drain/intake is the headline ratio.
//! 3. **Isolation**: a quiet tenant's p99 verification lag alone, and
//!    while a noisy tenant keeps the same shard saturated
//!    (`bench-shards`' method: two lanes of batches, at most
//!    `NOISE_BACKLOG_MAX` pending each).
//! 4. **Burst**: one enterprise tenant sends batches over 4 connections
//!    for `BENCH_INTAKE_SECS` with the sequencer on (429s counted); then a
//!    fresh tenant's single delta: seconds from the burst's end until it
//!    is verified.
//!
//! Run: `bash bench/throughput.sh` (bench/README.md, "throughput");
//! `BENCH_BUILDS=before=DIR,after=` compares a saved build (a copy of
//! `worker/build`) with this checkout's (an empty path), `BENCH_ONLY`
//! (`drain`, `isolation`, `burst`, or `intake`: phase 1 alone, for quick
//! alternating A/B rounds of the intake), `BENCH_ROUNDS` (1); `BENCH_V8=1`
//! adds the isolate's own CPU per accepted delta (a V8 profile of the
//! intake's middle, issue 42), the figure that excludes local SQLite.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bvs_tests::bench::{median, Cpu, Server};
use bvs_tests::client::{Api, Keyed};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::{new_tenant_on_plan, Tenant};
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const CONNECTIONS: usize = 4;
const BATCH: usize = 100;
const NOISE_BACKLOG_MAX: u64 = 1000;
const SEQUENCER_OFF: (&str, &str) = ("EMIT_PROFILE_STOP", "sequencer-off");

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn part(name: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |p| p.split(',').any(|x| x == name))
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// A build under test: its name and its `index.js` (None: this checkout).
struct Build {
    name: String,
    script: Option<PathBuf>,
}

fn builds() -> Vec<Build> {
    let spec = std::env::var("BENCH_BUILDS").unwrap_or_else(|_| "after=".into());
    spec.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (name, dir) = s.split_once('=').unwrap_or((s, ""));
            Build {
                name: name.to_string(),
                script: (!dir.is_empty()).then(|| PathBuf::from(dir).join("index.js")),
            }
        })
        .collect()
}

fn start(build: &Build, dir: &std::path::Path, vars: &[(&str, &str)]) -> Wrangler {
    match &build.script {
        Some(script) => {
            before_schema(dir);
            Wrangler::start_script(dir, vars, script)
        }
        None => Wrangler::start_with_vars(dir, vars),
    }
}

/// A saved build from before issue 27 runs on this checkout's migrations
/// (its tables are unused there) less the one index its emits would
/// maintain for nothing (`deltas_queued_by_tenant`): its intake is
/// measured as it was.
fn before_schema(dir: &std::path::Path) {
    let root = bvs_tests::repo_root();
    let migrate = std::process::Command::new("bash")
        .arg(root.join("scripts/migrate.sh"))
        .arg(dir)
        .current_dir(&root)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(migrate.success());
    let script = format!(
        "source scripts/env.sh && wrangler d1 execute LEDGER_SANDBOX_0 --local --persist-to '{}' \
         --command 'DROP INDEX IF EXISTS deltas_queued_by_tenant' >/dev/null",
        dir.display()
    );
    let drop = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(drop.success());
}

/// A batch of `customer`'s deltas. With `BENCH_CONDITIONS=1` (issue
/// 43), every other one is a debit of 1 with `balanceAtLeast: 0` after a
/// credit of 2 (never refused: the drain verifies them all), and each
/// tenant has a default floor for the default asset (`main` sets it).
fn items(customer: &str, tag: &str) -> Vec<Value> {
    let conditions = env_or("BENCH_CONDITIONS", 0) == 1;
    (0..BATCH)
        .map(|j| {
            let reason = format!("{tag} {j}");
            if conditions && j % 2 == 1 {
                json!({"customerId": customer, "delta": -1, "reason": reason,
                       "conditions": {"balanceAtLeast": 0}})
            } else if conditions {
                json!({"customerId": customer, "delta": 2, "reason": reason})
            } else {
                json!({"customerId": customer, "delta": 1, "reason": reason})
            }
        })
        .collect()
}

/// With `BENCH_CONDITIONS=1`: the tenant's default floor of 0 for the
/// default asset (a build without floors answers 404; it is ignored).
fn default_floor(k: &Keyed) {
    if env_or("BENCH_CONDITIONS", 0) == 1 {
        let _ = k.send(
            k.req(reqwest::Method::PUT, "/api/v1/balance/assets/default")
                .json(&json!({"balanceAtLeast": 0})),
        );
    }
}

fn verified(k: &Keyed, customer: &str) -> u64 {
    k.customer(customer).body["data"]["totalDeltas"]
        .as_u64()
        .unwrap_or(0)
}

/// Deltas accepted so far by the running [`send_batches`].
static ACCEPTED_NOW: AtomicU64 = AtomicU64::new(0);

/// With `BENCH_V8=1`: the Worker isolate's own CPU per accepted delta
/// during the middle of an intake of `secs` (a V8 profile through its
/// inspector, `bench/worker-profile.mjs`: the samples not idle), without
/// workerd's local SQLite, which the deployed Worker does not run; the
/// profile is saved to `out`, its top functions printed.
fn v8_per_delta(port: u16, secs: u64, out: PathBuf) -> f64 {
    let window = secs.saturating_sub(6).max(2);
    std::thread::sleep(Duration::from_secs(3));
    let before = ACCEPTED_NOW.load(Ordering::Relaxed);
    let run = std::process::Command::new("node")
        .arg(bvs_tests::repo_root().join("bench/worker-profile.mjs"))
        .args([port.to_string(), window.to_string()])
        .arg(&out)
        .output();
    let accepted = ACCEPTED_NOW.load(Ordering::Relaxed) - before;
    let Ok(run) = run else {
        return f64::NAN;
    };
    let text = String::from_utf8_lossy(&run.stdout);
    let busy = text
        .lines()
        .find_map(|l| l.strip_prefix("busy_ms="))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|ms| ms.parse::<f64>().ok());
    for line in text.lines().take(16) {
        eprintln!("  v8 {line}");
    }
    busy.map_or(f64::NAN, |ms| ms / accepted.max(1) as f64)
}

/// Deltas accepted before the first 429 of the last [`send_batches`].
static BEFORE_FIRST_429: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sends batches from `keys` (one connection each) for `secs`: accepted
/// deltas, 429 answers, and the seconds it took.
fn send_batches(api: &Api, keys: &[String], secs: u64, customer: &str) -> (u64, u64, f64) {
    let accepted = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    BEFORE_FIRST_429.store(u64::MAX, Ordering::Relaxed);
    ACCEPTED_NOW.store(0, Ordering::Relaxed);
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    std::thread::scope(|s| {
        for (lane, key) in keys.iter().enumerate() {
            let (accepted, refused) = (&accepted, &refused);
            s.spawn(move || {
                let k = api.keyed(key);
                let mut b = 0;
                while Instant::now() < end {
                    let r = k.batch(&items(customer, &format!("l{lane} b{b}")));
                    match r.status {
                        202 => {
                            accepted.fetch_add(BATCH as u64, Ordering::Relaxed);
                            ACCEPTED_NOW.fetch_add(BATCH as u64, Ordering::Relaxed);
                        }
                        429 => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            BEFORE_FIRST_429
                                .fetch_min(accepted.load(Ordering::Relaxed), Ordering::Relaxed);
                            let wait = r
                                .headers
                                .get("retry-after")
                                .and_then(|v| v.to_str().ok())
                                .and_then(|v| v.parse().ok());
                            std::thread::sleep(Duration::from_secs(wait.unwrap_or(1).min(5)));
                        }
                        other => panic!("batch answered {other}: {}", r.text),
                    }
                    b += 1;
                }
            });
        }
    });
    (
        accepted.into_inner(),
        refused.into_inner(),
        start.elapsed().as_secs_f64(),
    )
}

/// "Deltas accepted before the first 429", or that none was answered.
fn first_429(accepted: u64) -> String {
    if accepted == u64::MAX {
        "no 429".into()
    } else {
        accepted.to_string()
    }
}

/// Intake with the sequencer off, then the drain of what it left.
struct Drain {
    intake: f64,
    intake_cpu_ms: f64,
    /// The isolate's CPU per accepted delta (`BENCH_V8=1`), else NaN.
    intake_v8_ms: f64,
    drain: f64,
    cpu_ms_per_delta: f64,
    outbox_secs: Option<f64>,
    backlog: u64,
}

fn intake_and_drain(build: &Build, round: usize) -> Drain {
    let dir = fresh_state_dir(&format!("bench-throughput-{}-{round}", build.name));
    let w = start(build, &dir, &[SEQUENCER_OFF]);
    let api = Api::new(w.base_url.clone());
    let tenants: Vec<Tenant> = (0..=CONNECTIONS)
        .map(|_| new_tenant_on_plan(&api, "enterprise"))
        .collect();
    let keys: Vec<String> = tenants[..CONNECTIONS]
        .iter()
        .map(|t| t.test_key.clone())
        .collect();
    for k in &keys {
        default_floor(&api.keyed(k));
    }
    let secs = env_or("BENCH_INTAKE_SECS", 30);
    let server = Server::of(&w);
    let cpu_before = Cpu::now(server.group, &server.port);
    let v8 = (env_or("BENCH_V8", 0) == 1).then(|| {
        let (port, out) = (w.inspector_port, dir.join("intake.cpuprofile"));
        std::thread::spawn(move || v8_per_delta(port, secs, out))
    });
    let (accepted, refused, took) = send_batches(&api, &keys, secs, "cus_tp");
    let intake = accepted as f64 / took;
    let intake_v8_ms = v8.and_then(|h| h.join().ok()).unwrap_or(f64::NAN);
    // The Worker's CPU per accepted delta: a figure that other processes
    // on a shared machine disturb far less than the rate.
    let intake_cpu = Cpu::now(server.group, &server.port).per(cpu_before, accepted as f64);
    eprintln!(
        "[{}] intake: {accepted} deltas in {took:.1} s = {intake:.0}/s, {refused} refused, worker CPU {:.3} ms/delta, isolate (V8) {intake_v8_ms:.3} ms/delta (load {})",
        build.name,
        intake_cpu.worker,
        load()
    );
    w.stop();
    if !part("drain") {
        // BENCH_ONLY=intake: the intake alone (A/B rounds are quick).
        return Drain {
            intake,
            intake_cpu_ms: intake_cpu.worker,
            intake_v8_ms,
            drain: f64::NAN,
            cpu_ms_per_delta: f64::NAN,
            outbox_secs: None,
            backlog: accepted,
        };
    }
    // The same state, the sequencer on; nothing runs until a doorbell.
    let w = match &build.script {
        Some(script) => Wrangler::start_script(&dir, &[], script),
        None => Wrangler::start_with_vars(&dir, &[]),
    };
    let api = Api::new(w.base_url.clone());
    let server = Server::of(&w);
    let ring = api.keyed(&tenants[CONNECTIONS].test_key);
    let cpu_before = Cpu::now(server.group, &server.port);
    let start = Instant::now();
    let r = ring.post(
        DELTA,
        &json!({"customerId": "cus_ring", "delta": 1, "reason": "ring"}),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let ks: Vec<Keyed> = keys.iter().map(|k| api.keyed(k)).collect();
    eventually(Duration::from_secs(3600), "the backlog to drain", || {
        let done: u64 = ks.iter().map(|k| verified(k, "cus_tp")).sum();
        if done >= accepted {
            Some(())
        } else {
            std::thread::sleep(Duration::from_millis(200));
            None
        }
    });
    let drained = start.elapsed().as_secs_f64();
    let cpu = Cpu::now(server.group, &server.port).per(cpu_before, accepted as f64);
    let drain = accepted as f64 / drained;
    // The outbox (where `/admin/shards` reports it): until the
    // dispatcher has moved every event.
    let outbox_secs = outbox_pending(&api).map(|_| {
        eventually(Duration::from_secs(3600), "the outbox to empty", || {
            if outbox_pending(&api) == Some(0) {
                Some(start.elapsed().as_secs_f64())
            } else {
                std::thread::sleep(Duration::from_millis(200));
                None
            }
        })
    });
    eprintln!(
        "[{}] drain: {accepted} deltas in {drained:.1} s = {drain:.0}/s ({:.2}× intake), worker CPU {:.3} ms/delta, outbox empty after {} (load {})",
        build.name,
        drain / intake,
        cpu.worker,
        outbox_secs.map_or("n/a".into(), |s| format!("{s:.1} s")),
        load()
    );
    w.stop();
    Drain {
        intake,
        intake_cpu_ms: intake_cpu.worker,
        intake_v8_ms,
        drain,
        cpu_ms_per_delta: cpu.worker,
        outbox_secs,
        backlog: accepted,
    }
}

/// The event outbox's pending rows on every shard, from the operator's
/// `GET /admin/shards` (None for a build without it).
fn outbox_pending(api: &Api) -> Option<u64> {
    let token = bvs_tests::dev_var("ADMIN_TOKEN");
    let h = api.send(
        api.req(reqwest::Method::GET, "/admin/shards")
            .bearer_auth(token),
    );
    let shards = h.body["data"]["shards"].as_array()?;
    Some(
        shards
            .iter()
            .map(|s| s["outboxPending"].as_u64().unwrap_or(0))
            .sum(),
    )
}

/// The quiet tenant's verification lags (ms), one delta at a time, while
/// `noisy` (if any) keeps the shard saturated.
fn quiet_lags(api: &Api, quiet: &Tenant, noisy: Option<&Tenant>, tag: &str) -> Vec<f64> {
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
                        let r = k.batch(&items(&customer, &format!("{tag} n{b}")));
                        assert!(r.status == 202 || r.status == 429, "{}", r.text);
                        b += 1;
                    }
                });
            }
            std::thread::sleep(Duration::from_secs(3));
        }
        let k = api.keyed(&quiet.test_key);
        let mut lags = Vec::new();
        for i in 0..env_or("BENCH_LAG_SAMPLES", 20) {
            let start = Instant::now();
            let r = k.post(
                DELTA,
                &json!({"customerId": "cus_quiet", "delta": 1, "reason": format!("{tag} {i}")}),
            );
            assert_eq!(r.status, 202, "{}", r.text);
            let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
            wait_verified(&k, &anchor);
            lags.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        stop.store(true, Ordering::Relaxed);
        lags
    })
}

fn wait_verified(k: &Keyed, anchor: &str) {
    eventually(Duration::from_secs(900), "the delta to verify", || {
        if k.delta_status(anchor).body["data"]["status"] == "ANCHORED" {
            Some(())
        } else {
            std::thread::sleep(Duration::from_millis(20));
            None
        }
    });
}

fn p99(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * 0.99).round() as usize]
}

fn drain_noise(api: &Api, t: &Tenant) {
    let k = api.keyed(&t.test_key);
    for c in ["cus_noise0", "cus_noise1"] {
        eventually(Duration::from_secs(1800), "the noise to drain", || {
            let r = k.customer(c);
            (r.status == 404 || r.body["data"]["pendingDeltas"].as_u64() == Some(0)).then_some(())
        });
    }
}

/// p99 lag alone and beside a noisy tenant; then the burst.
struct Shared {
    alone: f64,
    beside: f64,
    burst_accepted: u64,
    burst_refused: u64,
    /// Accepted before the first 429 (`u64::MAX`: none).
    burst_first_429: u64,
    after_burst: f64,
}

fn isolation_and_burst(build: &Build, round: usize) -> Shared {
    let dir = fresh_state_dir(&format!("bench-throughput-iso-{}-{round}", build.name));
    let w = start(build, &dir, &[]);
    let api = Api::new(w.base_url.clone());
    let (quiet, noisy) = (
        new_tenant_on_plan(&api, "enterprise"),
        new_tenant_on_plan(&api, "enterprise"),
    );
    let mut out = Shared {
        alone: 0.0,
        beside: 0.0,
        burst_accepted: 0,
        burst_refused: 0,
        burst_first_429: u64::MAX,
        after_burst: 0.0,
    };
    if part("isolation") {
        out.alone = p99(&mut quiet_lags(&api, &quiet, None, &format!("a{round}")));
        out.beside = p99(&mut quiet_lags(
            &api,
            &quiet,
            Some(&noisy),
            &format!("b{round}"),
        ));
        drain_noise(&api, &noisy);
        eprintln!(
            "[{}] quiet p99 lag: alone {:.0} ms, beside a noisy tenant on the shard {:.0} ms = {:.2}× (load {})",
            build.name,
            out.alone,
            out.beside,
            out.beside / out.alone,
            load()
        );
    }
    if part("burst") {
        let bursty = new_tenant_on_plan(&api, "enterprise");
        let fresh = new_tenant_on_plan(&api, "enterprise");
        let keys = vec![bursty.test_key.clone(); CONNECTIONS];
        let secs = env_or("BENCH_INTAKE_SECS", 30);
        let (accepted, refused, _) = send_batches(&api, &keys, secs, "cus_burst");
        let end = Instant::now();
        let k = api.keyed(&fresh.test_key);
        let r = k.post(
            DELTA,
            &json!({"customerId": "cus_fresh", "delta": 1, "reason": "fresh"}),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        wait_verified(&k, r.body["data"]["anchorId"].as_str().unwrap());
        out.burst_accepted = accepted;
        out.burst_refused = refused;
        out.burst_first_429 = BEFORE_FIRST_429.load(Ordering::Relaxed);
        out.after_burst = end.elapsed().as_secs_f64();
        eprintln!(
            "[{}] burst: {accepted} accepted, {refused} answers 429 (first after {}); a fresh tenant's delta verified {:.1} s after the burst (load {})",
            build.name,
            first_429(out.burst_first_429),
            out.after_burst,
            load()
        );
    }
    w.stop();
    out
}

fn main() {
    let builds = builds();
    let rounds = env_or("BENCH_ROUNDS", 1) as usize;
    let mut drains: Vec<Vec<Drain>> = builds.iter().map(|_| Vec::new()).collect();
    let mut shared: Vec<Vec<Shared>> = builds.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (i, b) in builds.iter().enumerate() {
            if part("drain") || part("intake") {
                drains[i].push(intake_and_drain(b, round));
            }
            if part("isolation") || part("burst") {
                shared[i].push(isolation_and_burst(b, round));
            }
        }
    }
    println!(
        "| measurement | {} |",
        builds
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(builds.len()));
    let row = |name: &str, f: &dyn Fn(usize) -> String| {
        let cells: Vec<String> = (0..builds.len()).map(f).collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    let med = |v: Vec<f64>| {
        let mut v = v;
        if v.is_empty() {
            f64::NAN
        } else {
            median(&mut v)
        }
    };
    if part("drain") || part("intake") {
        row("batch intake, deltas/s (sequencer off)", &|i| {
            format!("{:.0}", med(drains[i].iter().map(|d| d.intake).collect()))
        });
        row(
            "batch intake vs the first build's, median of rounds",
            &|i| {
                let ratios = (0..drains[i].len().min(drains[0].len()))
                    .map(|r| drains[i][r].intake / drains[0][r].intake)
                    .collect();
                format!("{:.2}×", med(ratios))
            },
        );
        row("Worker CPU per accepted delta (intake), ms", &|i| {
            format!(
                "{:.3}",
                med(drains[i].iter().map(|d| d.intake_cpu_ms).collect())
            )
        });
        if env_or("BENCH_V8", 0) == 1 {
            row("isolate (V8) CPU per accepted delta (intake), ms", &|i| {
                format!(
                    "{:.3}",
                    med(drains[i].iter().map(|d| d.intake_v8_ms).collect())
                )
            });
            row("… vs the first build's, median of rounds", &|i| {
                let ratios = (0..drains[i].len().min(drains[0].len()))
                    .map(|r| drains[i][r].intake_v8_ms / drains[0][r].intake_v8_ms)
                    .collect();
                format!("{:.2}×", med(ratios))
            });
        }
    }
    if part("drain") {
        row("drain of the intake's backlog, verified deltas/s", &|i| {
            let backlog = drains[i].first().map_or(0, |d| d.backlog);
            format!(
                "{:.0} ({backlog} deltas)",
                med(drains[i].iter().map(|d| d.drain).collect())
            )
        });
        row("drain / intake", &|i| {
            format!(
                "{:.2}×",
                med(drains[i].iter().map(|d| d.drain / d.intake).collect())
            )
        });
        row("Worker CPU per verified delta (ms)", &|i| {
            format!(
                "{:.3}",
                med(drains[i].iter().map(|d| d.cpu_ms_per_delta).collect())
            )
        });
        row("event outbox empty after (s)", &|i| {
            drains[i]
                .first()
                .and_then(|d| d.outbox_secs)
                .map_or("n/a".into(), |s| format!("{s:.1}"))
        });
    }
    if part("isolation") {
        row("quiet tenant p99 lag alone (ms)", &|i| {
            format!("{:.0}", med(shared[i].iter().map(|s| s.alone).collect()))
        });
        row("… beside a noisy tenant on the same shard (ms)", &|i| {
            let m = med(shared[i].iter().map(|s| s.beside).collect());
            let r = med(shared[i].iter().map(|s| s.beside / s.alone).collect());
            format!("{m:.0} = {r:.2}×")
        });
    }
    if part("burst") {
        row("burst: accepted / 429 answers", &|i| {
            shared[i].first().map_or("n/a".into(), |s| {
                format!("{} / {}", s.burst_accepted, s.burst_refused)
            })
        });
        row("burst: deltas accepted before the first 429", &|i| {
            shared[i]
                .first()
                .map_or("n/a".into(), |s| first_429(s.burst_first_429))
        });
        row("fresh tenant's delta verified after the burst (s)", &|i| {
            format!(
                "{:.1}",
                med(shared[i].iter().map(|s| s.after_burst).collect())
            )
        });
    }
    println!("load average at the end: {}", load());
}
