//! Crash-proof at any point (issue 15): `wrangler dev` with two sandbox
//! shards is killed with SIGKILL (its whole process group) at random
//! moments while two tenants, one per shard, emit deltas with an
//! Idempotency-Key and the sequencers append them; it restarts on the same
//! state each time, and a write whose answer was lost is retried with the
//! same key and body, as a careful client would. Then:
//!
//! - every accepted delta is VERIFIED exactly once (its ledger lists its
//!   anchor once, and no reference id twice);
//! - no leaf is appended twice to any shard's log;
//! - every signed head of every shard verifies with the listed key and is
//!   consistent with every later one (each with the next, by proof);
//! - each ledger's balance is the sum of its accepted deltas;
//! - every `delta.verified` webhook arrives at least once, always with one
//!   delivery id, and names the log of its tenant's shard.
//!
//! - no write is left unresolved: a write cut short ("processing") is
//!   retried after its idempotency lease (30 s) has passed, and then answers
//!   its stored result or is performed once; at the end every write has its
//!   anchor, and the ledgers hold exactly the accepted writes.
//!
//! Cycles: `BVS_CRASH_CYCLES` (default 3, as CI runs it; run 20 or more on
//! its own, about 10 minutes on 2 cores:
//! `BVS_CRASH_CYCLES=20 cargo test -p bvs-tests --test crash_shards -- --nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bvs_core::verify::verify_consistency_between_heads;
use bvs_core::Hash32;
use bvs_tests::client::{Api, Reply};
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::DELTA;
use bvs_tests::receiver::Receiver;
use bvs_tests::tenant::{create_webhook, new_tenant_on_plan, Tenant};
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::{json, Value};

/// Writes per tenant per cycle at most: keeps the checks (one request per
/// delta and per leaf) short; the kill still lands mid-emit most cycles.
const WRITES_PER_CYCLE_MAX: usize = 60;

/// The documented lease of an in-flight Idempotency-Key claim
/// (docs/balance.md): a retry after it gets the key's answer.
const IDEMPOTENCY_LEASE: Duration = Duration::from_secs(30);

fn cycles() -> u64 {
    std::env::var("BVS_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// A small xorshift generator seeded from the clock (printed, to replay).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One write: its tenant (index), key, customer and amount.
#[derive(Debug, Clone)]
struct Write {
    tenant: usize,
    key: String,
    customer: String,
    amount: i64,
}

impl Write {
    fn body(&self) -> Value {
        json!({
            "customerId": self.customer, "delta": self.amount, "reason": "crash test",
            "referenceId": self.key,
        })
    }
}

enum Outcome {
    /// 202 with an anchor id.
    Accepted(String),
    /// 202 "processing": the first request with this key was cut short.
    Processing,
    /// No answer (the server died or was down).
    Lost,
}

fn send(api: &Api, tenant: &Tenant, w: &Write) -> Outcome {
    let rb = api
        .req(reqwest::Method::POST, DELTA)
        .header("x-api-key", &tenant.test_key)
        .header("idempotency-key", &w.key)
        .json(&w.body());
    let Ok(r) = rb.send() else {
        return Outcome::Lost;
    };
    let status = r.status().as_u16();
    let Ok(text) = r.text() else {
        return Outcome::Lost;
    };
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    match status {
        202 if body["data"]["anchorId"].is_string() => {
            Outcome::Accepted(body["data"]["anchorId"].as_str().unwrap().to_string())
        }
        202 if body["data"]["status"] == "processing" => Outcome::Processing,
        // A 5xx from a half-started server, or a 429: try again later.
        s if s >= 500 || s == 429 => Outcome::Lost,
        s => panic!("write {w:?}: unexpected {s}: {text}"),
    }
}

#[derive(Default)]
struct Book {
    /// key → (write, anchor id)
    accepted: BTreeMap<String, (Write, String)>,
    /// Writes whose first request was cut short after claiming its key.
    processing: BTreeMap<String, Write>,
    /// Writes with no answer yet: retried after the restart.
    lost: Vec<Write>,
    /// Keys that were ever lost (counted for the report).
    retried: BTreeSet<String>,
    /// Keys that ever answered "processing" (counted for the report).
    cut_short: BTreeSet<String>,
}

impl Book {
    fn record(&mut self, w: Write, outcome: Outcome) {
        match outcome {
            Outcome::Accepted(anchor) => {
                self.processing.remove(&w.key);
                if let Some((_, before)) = self.accepted.get(&w.key) {
                    assert_eq!(before, &anchor, "key {} answered two anchors", w.key);
                }
                self.accepted.insert(w.key.clone(), (w, anchor));
            }
            Outcome::Processing => {
                self.cut_short.insert(w.key.clone());
                self.processing.insert(w.key.clone(), w);
            }
            Outcome::Lost => {
                self.retried.insert(w.key.clone());
                self.lost.push(w);
            }
        }
    }
}

/// GET that waits out 429s (the public log routes are limited per client).
fn get_patiently(api: &Api, path: &str) -> Reply {
    loop {
        let r = api.get(path);
        if r.status != 429 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn sigkill_at_random_moments_loses_nothing_and_duplicates_nothing() {
    let dir = fresh_state_dir("crash-shards");
    let seed = now_ms() | 1;
    eprintln!("crash test: {} cycles, seed {seed}", cycles());
    let mut rng = Rng(seed);
    let rx = Receiver::start(&[]);

    let mut server = Wrangler::start_sharded(&dir);
    let api = Api::new(server.base_url.clone());
    // A fresh state: the first tenant goes to shard 0, the second to 1.
    let tenants: Vec<Tenant> = (0..2)
        .map(|_| new_tenant_on_plan(&api, "enterprise"))
        .collect();
    for t in &tenants {
        let r = create_webhook(&api, &t.jwt, &rx.url("/hook"), &["delta.verified"], "crash");
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let book = Arc::new(Mutex::new(Book::default()));
    let counter = Arc::new(Mutex::new(0u64));

    for cycle in 0..cycles() {
        let api = Api::new(server.base_url.clone());
        // Retry what was lost, first.
        let lost: Vec<Write> = std::mem::take(&mut book.lock().unwrap().lost);
        for w in lost {
            let outcome = send(&api, &tenants[w.tenant], &w);
            book.lock().unwrap().record(w, outcome);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..tenants.len())
            .map(|i| {
                let (api, stop, book, counter) =
                    (api.clone(), stop.clone(), book.clone(), counter.clone());
                let tenant = tenants[i].clone();
                let mut rng = Rng(seed.wrapping_add(cycle * 7 + i as u64 + 1));
                std::thread::spawn(move || {
                    for _ in 0..WRITES_PER_CYCLE_MAX {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let n = {
                            let mut c = counter.lock().unwrap();
                            *c += 1;
                            *c
                        };
                        let amount = rng.below(2000) as i64 - 900;
                        let w = Write {
                            tenant: i,
                            key: format!("crash-{seed}-{n}"),
                            customer: format!("cus_{}", n % 5),
                            amount: if amount == 0 { 1 } else { amount },
                        };
                        let outcome = send(&api, &tenant, &w);
                        let lost = matches!(outcome, Outcome::Lost);
                        book.lock().unwrap().record(w, outcome);
                        if lost {
                            // The server is down (killed): stop until the
                            // restart rather than pile up refused writes.
                            break;
                        }
                    }
                })
            })
            .collect();
        // Kill at a random moment: emits and sequencer rounds in flight.
        std::thread::sleep(Duration::from_millis(500 + rng.below(3500)));
        server.kill_hard();
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        server = Wrangler::restart_sharded(&dir);
    }

    // Settle: retry every lost or cut-short write until each has its answer.
    // A cut-short key answers "processing" until its lease ends; after it
    // the retry replays the committed write's answer or performs the write
    // once, so a careful client is never left without an answer.
    let api = Api::new(server.base_url.clone());
    let settle_started = Instant::now();
    let deadline = settle_started + IDEMPOTENCY_LEASE + Duration::from_secs(90);
    loop {
        let pending: Vec<Write> = {
            let mut b = book.lock().unwrap();
            let mut p = std::mem::take(&mut b.lost);
            p.extend(b.processing.values().cloned());
            p
        };
        if pending.is_empty() || Instant::now() > deadline {
            break;
        }
        for w in pending {
            let outcome = send(&api, &tenants[w.tenant], &w);
            let mut b = book.lock().unwrap();
            b.record(w, outcome);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let book = book.lock().unwrap();
    assert!(
        book.lost.is_empty(),
        "writes never answered: {:?}",
        book.lost
    );
    assert!(
        book.processing.is_empty(),
        "writes still \"processing\" {} s after the restart (lease {} s): {:?}",
        settle_started.elapsed().as_secs(),
        IDEMPOTENCY_LEASE.as_secs(),
        book.processing.keys().collect::<Vec<_>>()
    );
    assert!(!book.accepted.is_empty(), "nothing was accepted");
    eprintln!(
        "crash test: {} cycles, {} writes accepted, {} retried after no answer, {} answered \"processing\" first, 0 unresolved; settled in {} s",
        cycles(),
        book.accepted.len(),
        book.retried.len(),
        book.cut_short.len(),
        settle_started.elapsed().as_secs()
    );

    // Every accepted delta becomes ANCHORED (the sweep re-rings what a
    // crash left queued).
    let mut polls = 0u32;
    for (w, anchor) in book.accepted.values() {
        let k = api.keyed(&tenants[w.tenant].test_key);
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let d = k.delta_status(anchor);
            assert_eq!(d.status, 200, "{}", d.text);
            if d.body["data"]["status"] == "ANCHORED" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{anchor} never anchored: {}",
                d.text
            );
            polls += 1;
            if polls.is_multiple_of(10) {
                sweep(&api, now_ms() + 120_000);
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    // Ledgers: each accepted anchor once, no reference id twice, the
    // balance the sum of what is there, and what is there = exactly the
    // accepted writes.
    let customers: BTreeSet<(usize, String)> = book
        .accepted
        .values()
        .map(|(w, _)| (w.tenant, w.customer.clone()))
        .collect();
    for (tenant, customer) in &customers {
        let k = api.keyed(&tenants[*tenant].test_key);
        let mut listed: Vec<Value> = Vec::new();
        let balance = loop {
            let r = k.derive(customer, &format!("limit=100&offset={}", listed.len()));
            assert_eq!(r.status, 200, "{}", r.text);
            let page = r.body["data"]["deltas"].as_array().unwrap().clone();
            if page.is_empty() {
                break r.body["data"]["computedBalance"].clone();
            }
            listed.extend(page);
        };
        let mut refs = BTreeSet::new();
        let mut anchors = BTreeSet::new();
        let mut sum = 0i64;
        for d in &listed {
            assert_eq!(d["verified"], true, "{d}");
            let r = d["referenceId"].as_str().unwrap().to_string();
            assert!(refs.insert(r.clone()), "reference {r} twice in {customer}");
            assert!(anchors.insert(d["anchorId"].as_str().unwrap().to_string()));
            let (w, a) = book
                .accepted
                .get(&r)
                .unwrap_or_else(|| panic!("{r} is in the ledger but was never accepted"));
            assert_eq!(d["anchorId"].as_str(), Some(a.as_str()), "{r}");
            assert_eq!(d["delta"].as_i64(), Some(w.amount), "{d}");
            sum += w.amount;
        }
        for (w, anchor) in book.accepted.values() {
            if w.tenant == *tenant && &w.customer == customer {
                assert!(
                    anchors.contains(anchor),
                    "accepted {anchor} missing from {customer}"
                );
            }
        }
        assert_eq!(balance.as_i64(), Some(sum), "{customer}");
    }

    // Every shard's log: no leaf twice, every head signed and consistent
    // with the next (and so with every later one).
    let logs = api.get("/api/v1/logs").body["data"]["logs"]
        .as_array()
        .unwrap()
        .clone();
    for log in logs.iter().filter(|l| l["environment"] == "sandbox") {
        let name = log["name"].as_str().unwrap();
        let key = log["verifierKey"].as_str().unwrap();
        let mut heads: Vec<Value> = Vec::new();
        loop {
            let from = heads
                .last()
                .map_or(0, |h| h["treeSize"].as_u64().unwrap() + 1);
            let r = get_patiently(
                &api,
                &format!("/api/v1/log/{name}/heads?from={from}&limit=100"),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            let page = r.body["data"]["heads"].as_array().unwrap().clone();
            if page.is_empty() {
                break;
            }
            heads.extend(page);
        }
        assert!(heads.len() > 1, "{name} grew");
        for pair in heads.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (m, n) = (
                a["treeSize"].as_u64().unwrap(),
                b["treeSize"].as_u64().unwrap(),
            );
            assert!(m < n, "{name}: heads out of order {m} {n}");
            let proof: Vec<Hash32> = if m == 0 {
                Vec::new()
            } else {
                let r = get_patiently(
                    &api,
                    &format!("/api/v1/log/{name}/proof/consistency?from={m}&to={n}"),
                );
                assert_eq!(r.status, 200, "{}", r.text);
                r.body["data"]["consistencyProof"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| Hash32::parse(h.as_str().unwrap()).unwrap())
                    .collect()
            };
            verify_consistency_between_heads(
                a["note"].as_str().unwrap(),
                b["note"].as_str().unwrap(),
                &proof,
                key,
            )
            .unwrap_or_else(|e| panic!("{name}: {m} -> {n}: {e:?}"));
        }
        let size = heads.last().unwrap()["treeSize"].as_u64().unwrap();
        let mut items = BTreeSet::new();
        for i in 0..size {
            let r = api.get(&format!("/dev/log/leaf?env={name}&index={i}"));
            assert_eq!(r.status, 200, "{}", r.text);
            let item = r.body["data"]["itemHash"].as_str().unwrap().to_string();
            assert!(
                items.insert(item.clone()),
                "{name}: {item} appended twice (leaf {i})"
            );
        }
    }

    // Webhooks: each accepted delta's delta.verified at least once, every
    // copy with the same delivery id, naming the log of its tenant's shard
    // (tenant i is on shard i: sandbox, sandbox-1).
    let log_of_anchor: BTreeMap<&str, &str> = book
        .accepted
        .values()
        .map(|(w, a)| (a.as_str(), ["sandbox", "sandbox-1"][w.tenant]))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let mut ids: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in rx.received() {
            let body = r.json();
            if body["event"] != "delta.verified" {
                continue;
            }
            if let Some(anchor) = body["data"]["anchorId"].as_str() {
                if let Some(log) = log_of_anchor.get(anchor) {
                    assert_eq!(body["data"]["log"]["name"], *log, "{body}");
                }
                ids.entry(anchor.to_string())
                    .or_default()
                    .insert(body["id"].as_str().unwrap_or_default().to_string());
            }
        }
        for (anchor, delivery_ids) in &ids {
            assert_eq!(
                delivery_ids.len(),
                1,
                "{anchor}: delivery ids {delivery_ids:?}"
            );
        }
        let missing: Vec<&String> = book
            .accepted
            .values()
            .map(|(_, a)| a)
            .filter(|a| !ids.contains_key(*a))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "delta.verified never arrived for {} anchors, e.g. {:?}",
            missing.len(),
            missing.first()
        );
        sweep(&api, now_ms() + 120_000);
        std::thread::sleep(Duration::from_secs(2));
    }
    server.stop();
}
