//! Adding a shard (issue 15; docs/deploy.md "Adding a shard"): a service
//! started with one sandbox shard is restarted on the same state with two
//! (the same migration script creates the new shard's tables). The tenant
//! placed before keeps its shard and its history; a new tenant fills the
//! new shard; and work a crash left QUEUED on the new shard is finished by
//! the every-minute sweep, which covers every shard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, fresh_state_dir, Wrangler};
use serde_json::json;

/// Attempts at leaving a delta QUEUED on shard 1 by a crash right after
/// its emit (the sequencer may win the race and anchor it first).
const CRASH_ATTEMPTS_MAX: usize = 3;

#[test]
fn adding_a_shard_moves_no_tenant_new_tenants_fill_it_and_the_sweep_covers_it() {
    let dir = fresh_state_dir("shard-growth");
    let one = [("LEDGER_SHARDS_SANDBOX", "1")];
    // Only shard 0's database is migrated at first (this binary has one
    // test: the variable is read by scripts/migrate.sh, nothing else).
    std::env::set_var("BVS_MIGRATE_SHARDS", "1");
    let server = Wrangler::start_with(&dir, &one);
    std::env::remove_var("BVS_MIGRATE_SHARDS");
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let first = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&first.test_key);
    k.emit_anchored(&Delta::new("cus_grow", "10", "before"));
    let r = k.receipt("cus_grow", "");
    assert_eq!(r.body["data"]["log"]["shard"], 0, "{}", r.text);
    server.stop();

    // Two shards now (wrangler.toml's count): migrations run again at start.
    let server = Wrangler::start_with(&dir, &[]);
    let api = bvs_tests::client::Api::new(server.base_url.clone());
    let k = api.keyed(&first.test_key);
    k.emit_anchored(&Delta::new("cus_grow", "5", "after"));
    let r = k.receipt("cus_grow", "");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["log"]["shard"], 0, "moved: {}", r.text);
    assert_eq!(r.body["data"]["finalBalance"], json!(15), "{}", r.text);

    let second = new_tenant_on_plan(&api, "enterprise");
    let k2 = api.keyed(&second.test_key);
    k2.emit_anchored(&Delta::new("cus_new", "1", "placed"));
    let r = k2.receipt("cus_new", "");
    assert_eq!(r.body["data"]["log"]["shard"], 1, "{}", r.text);

    // A crash right after an emit on shard 1: its doorbell dies with the
    // server; after the restart the sweep (run as if a minute later) re-rings
    // shard 1 and the delta anchors.
    let mut server = server;
    let mut swept = false;
    for attempt in 0..CRASH_ATTEMPTS_MAX {
        let api = bvs_tests::client::Api::new(server.base_url.clone());
        let k2 = api.keyed(&second.test_key);
        let anchor = k2.emit(&Delta::new("cus_new", "2", &format!("crash {attempt}")))["anchorId"]
            .as_str()
            .unwrap()
            .to_string();
        server.kill_hard();
        server = Wrangler::restart_with(&dir, &[]);
        let api = bvs_tests::client::Api::new(server.base_url.clone());
        let k2 = api.keyed(&second.test_key);
        let status = k2.delta_status(&anchor);
        assert_eq!(status.status, 200, "{}", status.text);
        if status.body["data"]["status"] == "ANCHORED" {
            continue; // the sequencer won the race: try again
        }
        sweep(&api, now_ms() + 120_000);
        eventually(Duration::from_secs(120), "the swept delta", || {
            (k2.delta_status(&anchor).body["data"]["status"] == "ANCHORED").then_some(())
        });
        let log = std::fs::read_to_string(&server.log_path).unwrap();
        assert!(
            log.contains("sweep sandbox-1: re-ringing"),
            "the sweep did not re-ring shard 1"
        );
        swept = true;
        break;
    }
    assert!(
        swept,
        "no crash in {CRASH_ATTEMPTS_MAX} attempts left a delta QUEUED"
    );
    server.stop();
}
