//! Retention is fair (issue 14): the purge goes round the tenants from a
//! stored cursor, a slice of its budget each, so a tenant with a backlog
//! never starves the tenants after it. Driven with a tiny budget through
//! the DEV_MODE route `POST /dev/retention` (the daily cron runs the same
//! purge with the full budget). The bound: docs/retention.md.
//!
//! This binary runs its own `wrangler dev`: its cursor and tenants are its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::client::{Api, Keyed};
use bvs_tests::cron::now_ms;
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::{new_tenant, patch_jwt};
use serde_json::{json, Value};

bvs_tests::own_server!("retention_fair");

const DAY_MS: u64 = 86_400_000;

/// One retention run with `rows_max` rows at `time_ms`; its report.
fn run(api: &Api, rows_max: u64, time_ms: u64) -> Value {
    let r = api.post(
        "/dev/retention",
        &json!({"rowsMax": rows_max, "time": time_ms}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

/// How many of the customer's deltas are purged.
fn purged(k: &Keyed, customer: &str) -> usize {
    let r = k.derive(customer, "");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["dataPurged"] == true)
        .count()
}

#[test]
fn a_tiny_budget_reaches_every_tenant_in_turn() {
    let api = api();
    const TENANTS: usize = 4;
    const DELTAS: usize = 6;
    // rowsMax 2: a slice of one row per tenant visit, two visits per run.
    const ROWS_MAX: u64 = 2;
    let tenants: Vec<_> = (0..TENANTS).map(|_| new_tenant(&api)).collect();
    for t in &tenants {
        let k = api.keyed(&t.test_key);
        let mut last = Value::Null;
        for i in 0..DELTAS {
            last = k.emit(&Delta::new("cus_fair", 1, &format!("reason {i}")));
        }
        k.wait_anchored(last["anchorId"].as_str().unwrap());
        let r = patch_jwt(
            &api,
            "/dashboard/tenant/retention",
            &t.jwt,
            &json!({"dataRetentionDays": 7}),
        );
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let later = now_ms() + 8 * DAY_MS;
    let keyed: Vec<_> = tenants.iter().map(|t| api.keyed(&t.test_key)).collect();
    // Wait until every delta of every tenant is anchored (purge takes
    // verified rows only).
    for k in &keyed {
        bvs_tests::eventually(
            std::time::Duration::from_secs(60),
            "every delta verified",
            || {
                let r = k.derive("cus_fair", "");
                (r.body["data"]["deltasCount"] == DELTAS).then_some(())
            },
        );
    }

    // Two runs of two visits reach all four tenants: none waits for the
    // others' backlog. (The old purge spent every run on the lowest id.)
    for _ in 0..2 {
        let report = run(&api, ROWS_MAX, later);
        assert_eq!(report["complete"], false, "{report}");
    }
    for (i, k) in keyed.iter().enumerate() {
        assert_eq!(purged(k, "cus_fair"), 1, "tenant {i} after two runs");
    }

    // The bound (docs/retention.md): ceil(R / slice) * ceil(T / visits per
    // run) = 6 * 2 = 12 runs for R = 6 rows each; two are done.
    for _ in 2..12 {
        run(&api, ROWS_MAX, later);
    }
    for (i, k) in keyed.iter().enumerate() {
        assert_eq!(
            purged(k, "cus_fair"),
            DELTAS,
            "tenant {i} after twelve runs"
        );
    }
    let report = run(&api, 1000, later);
    assert_eq!(report["complete"], true, "{report}");
}
