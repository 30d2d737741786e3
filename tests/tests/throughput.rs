//! Issue 27: verification keeps up, fairly, and the API pushes back
//! instead of growing an unbounded backlog. Each test runs its own
//! servers: the sequencer is held off (DEV_MODE `EMIT_PROFILE_STOP=
//! sequencer-off`) while a backlog is queued, then the same state is
//! served again with it on. Asserted on state (log positions, counts,
//! answers), never on time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::{Api, Keyed};
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::DELTA;
use bvs_tests::tenant::{get_jwt, new_tenant_on_plan, Tenant};
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const SEQUENCER_OFF: (&str, &str) = ("EMIT_PROFILE_STOP", "sequencer-off");
/// `Wrangler::start_with_vars`' layout, for a restart.
const ONE_SHARD: [(&str, &str); 2] = [
    ("LEDGER_SHARDS_SANDBOX", "1"),
    ("LEDGER_SHARDS_PRODUCTION", "1"),
];
/// worker/src/sequencer/budget.rs `ROUND_ITEMS_MAX`.
const ROUND_ITEMS_MAX: u64 = 1_000;
/// A bound, not a measurement: the drain of a few thousand deltas on a
/// loaded machine.
const WAIT: Duration = Duration::from_secs(600);

fn batch(customer: &str, tag: &str) -> Vec<Value> {
    (0..100)
        .map(|j| json!({"customerId": customer, "delta": 1, "reason": format!("{tag} {j}")}))
        .collect()
}

/// `(pendingDeltas, totalDeltas)` of a customer (0s before its first delta).
fn counts(k: &Keyed, customer: &str) -> (u64, u64) {
    let r = k.customer(customer);
    if r.status == 404 {
        return (0, 0);
    }
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    (
        d["pendingDeltas"].as_u64().unwrap(),
        d["totalDeltas"].as_u64().unwrap(),
    )
}

/// The sandbox row of `GET /dashboard/usage`.
fn sandbox_usage(api: &Api, t: &Tenant) -> Value {
    let r = get_jwt(api, "/dashboard/usage", &t.jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["environment"] == "sandbox")
        .unwrap()
        .clone()
}

/// Rings every shard's sequencer through the sweep (as if a minute later:
/// what is queued is stale).
fn ring(api: &Api) {
    sweep(api, now_ms() + 120_000);
}

#[test]
fn a_backlog_past_the_plan_bound_is_refused_with_429_and_nothing_is_written() {
    let dir = fresh_state_dir("backpressure");
    let bound = ("BACKLOG_MAX", "300");
    let server = Wrangler::start_with_vars(&dir, &[bound, SEQUENCER_OFF]);
    let api = Api::new(server.base_url.clone());
    let (t, other) = (
        new_tenant_on_plan(&api, "enterprise"),
        new_tenant_on_plan(&api, "enterprise"),
    );
    let k = api.keyed(&t.test_key);
    for b in 0..3 {
        let r = k.batch(&batch("cus_bp", &format!("b{b}")));
        assert_eq!(r.status, 202, "{}", r.text);
    }
    // The bound is reached: the next batch, and a single emit, are refused
    // whole, in the spec's envelope, with Retry-After.
    let refused = k.batch(&batch("cus_bp", "b3"));
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert_eq!(refused.body["statusCode"], 429);
    assert_eq!(refused.body["error"], "Too Many Requests");
    assert_eq!(refused.body["code"], "verification_backlog");
    assert!(refused.message().contains("300"), "{}", refused.text);
    let retry: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let single = k.post(
        DELTA,
        &json!({"customerId": "cus_bp", "delta": 1, "reason": "one"}),
    );
    assert_eq!(single.status, 429, "{}", single.text);
    assert_eq!(single.body["code"], "verification_backlog");
    // Nothing of them was written or counted.
    assert_eq!(counts(&k, "cus_bp"), (300, 0));
    let usage = sandbox_usage(&api, &t);
    assert_eq!(usage["used"], 300, "{usage}");
    assert_eq!(usage["backlog"], 300, "{usage}");
    assert_eq!(usage["backlogMax"], 300, "{usage}");
    // The bound is each tenant's: another tenant on the shard emits.
    let o = api.keyed(&other.test_key);
    assert_eq!(o.batch(&batch("cus_other", "o")).status, 202);
    server.stop();

    // Verified, the backlog is released and emits are accepted again.
    let server = Wrangler::restart_with(&dir, &[ONE_SHARD[0], ONE_SHARD[1], bound]);
    let api = Api::new(server.base_url.clone());
    let k = api.keyed(&t.test_key);
    ring(&api);
    eventually(WAIT, "the backlog to be verified", || {
        (counts(&k, "cus_bp") == (0, 300)).then_some(())
    });
    let usage = sandbox_usage(&api, &t);
    assert_eq!(usage["backlog"], 0, "{usage}");
    let again = k.batch(&batch("cus_bp", "b4"));
    assert_eq!(again.status, 202, "{}", again.text);
    assert_eq!(sandbox_usage(&api, &t)["used"], 400);
}

#[test]
fn a_tenants_new_delta_is_taken_by_the_next_round_whatever_another_has_queued() {
    let dir = fresh_state_dir("fairness");
    let server = Wrangler::start_with_vars(&dir, &[SEQUENCER_OFF]);
    let api = Api::new(server.base_url.clone());
    let (busy, quiet) = (
        new_tenant_on_plan(&api, "enterprise"),
        new_tenant_on_plan(&api, "enterprise"),
    );
    let b = api.keyed(&busy.test_key);
    const BATCHES: u64 = 30;
    for i in 0..BATCHES {
        let r = b.batch(&batch("cus_busy", &format!("{i:03}")));
        assert_eq!(r.status, 202, "{}", r.text);
    }
    // Queued after all of the busy tenant's deltas.
    let q = api.keyed(&quiet.test_key);
    let r = q.post(
        DELTA,
        &json!({"customerId": "cus_quiet", "delta": 7, "reason": "late"}),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
    server.stop();

    let server = Wrangler::restart_with(&dir, &ONE_SHARD);
    let api = Api::new(server.base_url.clone());
    let (b, q) = (api.keyed(&busy.test_key), api.keyed(&quiet.test_key));
    ring(&api);
    let quiet_leaf = eventually(WAIT, "the quiet delta", || {
        let d = q.delta_status(&anchor);
        (d.body["data"]["status"] == "ANCHORED")
            .then(|| d.body["data"]["leafIndex"].as_u64().unwrap())
    });
    // Taken by the first round, ahead of the 3,000 that arrived first
    // (taken in arrival order it would sit at leaf 3,000).
    assert!(quiet_leaf < ROUND_ITEMS_MAX, "leaf {quiet_leaf}");
    eventually(WAIT, "the busy backlog", || {
        (counts(&b, "cus_busy") == (0, BATCHES * 100)).then_some(())
    });
    // The busy ledger kept emit order: its sequence follows the reasons.
    let mut reasons: Vec<String> = Vec::new();
    for offset in (0..BATCHES * 100).step_by(1000) {
        let page = b.derive("cus_busy", &format!("limit=1000&offset={offset}"));
        assert_eq!(page.status, 200, "{}", page.text);
        reasons.extend(
            page.body["data"]["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["reason"].as_str().unwrap_or_default().to_string()),
        );
    }
    assert_eq!(reasons.len() as u64, BATCHES * 100);
    let mut sorted = reasons.clone();
    sorted.sort_by_key(|r| {
        let (batch, item) = r.split_once(' ').unwrap();
        (batch.to_string(), item.parse::<u32>().unwrap())
    });
    assert_eq!(reasons, sorted, "the ledger's order is not emit order");
}
