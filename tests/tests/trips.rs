//! No hot route creeps back over its storage round trips (issue 16): each
//! route of the shared sample (`bvs_tests::trips`, the one
//! `bench/fastpath.sh` prints) is sent three times, one at a time, on this
//! binary's own quiet server, and the median of its sequential D1 round
//! trips (`d1Trips` of the DEV_MODE request log line) must not exceed the
//! route's pinned count. The goal is at most 3 for every hot route; the
//! pins are what the routes make now.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::trips;

bvs_tests::own_server!("trips");

/// The most sequential D1 round trips each route of the sample may make,
/// and what they are.
const PINNED: &[(&str, u64, &str)] = &[
    ("emit", 2, "the key; one write batch"),
    ("batch emit (10)", 2, "the key; one write batch"),
    (
        "derive from genesis",
        2,
        "the key; ledger, page and windows",
    ),
    (
        "derive from an itemsRoot",
        2,
        "the key; ledger, start, page, windows",
    ),
    (
        "derive from an anchorId",
        2,
        "the key; ledger, start, page, windows",
    ),
    (
        "receipt",
        3,
        "the key; everything listed; stored hashes + record",
    ),
    (
        "receipt ?period=",
        3,
        "the key; everything listed; stored hashes + record",
    ),
    (
        "receipt with an agreement side",
        3,
        "the same, its key and statements included",
    ),
    (
        "public verify: submission",
        3,
        "root index; lookup batch; stored hashes",
    ),
    (
        "public verify: receipt",
        3,
        "root index; lookup batch; stored hashes",
    ),
    (
        "public verify: checkpoint",
        3,
        "root index; lookup batch with the agreement side; stored hashes",
    ),
    ("compare", 2, "the key; the ledger"),
    (
        "delta status",
        2,
        "the key; the delta, its tree head and its submission's deltas",
    ),
];

/// The most D1 calls, concurrent ones included, of the emits: the key's
/// read (which indexes the proof roots once the key holds a lease of its
/// rate limit: issue 16 for a single emit, issue 42 for a batch) and the
/// write batch.
const PINNED_CALLS: &[(&str, u64)] = &[("emit", 2), ("batch emit (10)", 2)];

#[test]
fn no_hot_route_makes_more_sequential_d1_round_trips_than_pinned() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let probes = trips::prepare(&k, "cus_trips");
    let mut report = Vec::new();
    let mut over = Vec::new();
    for p in &probes {
        let (_, pinned, what) = PINNED
            .iter()
            .find(|(name, _, _)| *name == p.name)
            .unwrap_or_else(|| panic!("no pinned round trips for {}", p.name));
        let t = trips::measure(&k, &server().log_path, p, 3);
        let line = format!(
            "{}: {} sequential (pinned {pinned}: {what}), {} D1 calls, {} Durable Object calls",
            p.name, t.d1_trips, t.d1_calls, t.do_calls
        );
        if t.d1_trips > *pinned {
            over.push(line.clone());
        }
        let calls = PINNED_CALLS.iter().find(|(name, _)| *name == p.name);
        if calls.is_some_and(|(_, most)| t.d1_calls > *most) {
            over.push(format!(
                "{line} (at most {} D1 calls)",
                calls.map_or(0, |c| c.1)
            ));
        }
        report.push(line);
    }
    assert_eq!(
        report.len(),
        PINNED.len(),
        "every pinned route was measured"
    );
    assert!(
        over.is_empty(),
        "over their pinned round trips:\n{}\n\nall:\n{}",
        over.join("\n"),
        report.join("\n")
    );
    eprintln!("{}", report.join("\n"));
}

/// The deployed-shape model (issue 42, bench/README.md "deployed
/// shape"): with DEV_MODE `DEPLOYED_LATENCY_MS`, every D1 round trip
/// waits that long, so a single emit's two sequential round trips take at
/// least twice it (a lower bound: a slow machine only adds), and the
/// delta is still verified through the delayed queue and sequencer.
#[test]
fn the_deployed_shape_adds_its_latency_to_every_round_trip() {
    const MS: u64 = 150;
    let dir = bvs_tests::fresh_state_dir("deployed-shape");
    let server =
        bvs_tests::Wrangler::start_with_vars(&dir, &[("DEPLOYED_LATENCY_MS", &MS.to_string())]);
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let started = std::time::Instant::now();
    let r = k.post(
        bvs_tests::ledger::DELTA,
        &serde_json::json!({"customerId": "cus_shape", "delta": 1, "reason": "deployed shape"}),
    );
    let took = started.elapsed();
    assert_eq!(r.status, 202, "{}", r.text);
    assert!(
        took >= std::time::Duration::from_millis(2 * MS),
        "an emit took {took:?} with {MS} ms per round trip"
    );
    k.wait_anchored(r.body["data"]["anchorId"].as_str().unwrap());
    server.stop();
}

/// A deployed Worker's limits held in every DEV_MODE run (issue 42,
/// `worker/src/limits.rs`): every other test runs under Workers Paid's
/// published limits and fails loudly past one. Here DEV_MODE
/// `LIMIT_D1_QUERIES` lowers the queries per invocation so that a real
/// batch emit passes it: the request fails with a 500 naming the limit,
/// a request without D1 still answers, and nothing was written.
#[test]
fn a_request_past_a_deployed_workers_limit_fails_loudly_and_writes_nothing() {
    let dir = bvs_tests::fresh_state_dir("limits");
    let server = bvs_tests::Wrangler::start(&dir);
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    server.stop();

    let server = bvs_tests::Wrangler::start_with_vars(&dir, &[("LIMIT_D1_QUERIES", "3")]);
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let items: Vec<_> = (0..20)
        .map(|i| serde_json::json!({"customerId": "cus_limits", "delta": i + 1, "reason": "past a limit"}))
        .collect();
    let r = api.keyed(&t.test_key).batch(&items);
    assert_eq!(r.status, 500, "{}", r.text);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("a deployed Worker would fail here")
            && message.contains("past 3 queries per invocation"),
        "{message}"
    );
    assert_eq!(api.get("/health").status, 200);
    server.stop();

    let server = bvs_tests::Wrangler::start(&dir);
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let k = api.keyed(&t.test_key);
    assert_eq!(
        k.derive("cus_limits", "").status,
        404,
        "nothing was written"
    );
    k.batch_anchored(&items);
    server.stop();
}
