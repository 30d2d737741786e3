//! Issue 27: a log kept as stored hashes (before tiles) is migrated to
//! C2SP tlog-tiles by its sequencer, a few tiles per step, across
//! invocations (DEV_MODE `TILES_MIGRATE_STEPS=1`: one step per run, the
//! run rings the next), keeping every published root: each inclusion and
//! consistency proof answered before the migration is answered byte for
//! byte the same after it, and new heads prove consistent with the old.
//! The pre-tiles log is made by the DEV_MODE fixture that writes stored
//! hashes as a Worker from before tiles did (`/dev/log/grow`, `legacy`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::log::{check_consistency, log_key};
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{dev_var, eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

fn grow_legacy(api: &Api, n: u64) {
    let r = api.post("/dev/log/grow", &json!({"n": n, "legacy": true}));
    assert_eq!(r.status, 200, "{}", r.text);
}

/// The sandbox log's shard as `GET /admin/shards` reports it.
fn shard(api: &Api) -> Value {
    let r = api.send(
        api.req(reqwest::Method::GET, "/admin/shards")
            .bearer_auth(dev_var("ADMIN_TOKEN")),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["log"] == "sandbox")
        .unwrap()
        .clone()
}

fn head_sizes(api: &Api) -> Vec<u64> {
    let r = api.get("/api/v1/log/sandbox/heads?limit=100");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["heads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["treeSize"].as_u64().unwrap())
        .collect()
}

fn item_at(api: &Api, index: u64) -> String {
    let r = api.get(&format!("/dev/log/leaf?env=sandbox&index={index}"));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["itemHash"].as_str().unwrap().to_string()
}

/// Every inclusion proof of `leaves` into every head, and every
/// consistency proof between two heads: the answers' exact text.
fn answers(api: &Api, sizes: &[u64], leaves: &[u64]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for &n in sizes {
        for &leaf in leaves.iter().filter(|l| **l < n) {
            let path = format!(
                "/api/v1/log/sandbox/proof/inclusion?itemHash={}&treeSize={n}",
                item_at(api, leaf)
            );
            let r = api.get(&path);
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            out.push((path, r.text));
        }
        for &m in sizes.iter().filter(|m| **m <= n) {
            let path = format!("/api/v1/log/sandbox/proof/consistency?from={m}&to={n}");
            let r = api.get(&path);
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            out.push((path, r.text));
        }
    }
    out
}

fn unchanged(api: &Api, before: &[(String, String)]) {
    for (path, text) in before {
        let r = api.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        assert_eq!(
            &r.text, text,
            "{path} answers otherwise after the migration"
        );
    }
}

/// Emits a delta and waits until the log has appended it (the migration
/// first, over as many runs as it takes).
fn append_one(api: &Api, key: &str, reason: &str) {
    api.keyed(key)
        .emit_anchored(&Delta::new("cus_migrated", 1, reason));
    let s = shard(api);
    assert_eq!(s["tilesSize"], s["treeSize"], "{s}");
}

#[test]
fn a_pre_tiles_log_is_migrated_resumably_and_keeps_every_published_root() {
    let server = Wrangler::start_with_vars(
        &fresh_state_dir("tiles-migration"),
        &[("TILES_MIGRATE_STEPS", "1")],
    );
    let api = Api::new(server.base_url.clone());
    let t = new_tenant_on_plan(&api, "enterprise");
    for n in [700, 700, 3700, 1, 1] {
        grow_legacy(&api, n);
    }
    let sizes = head_sizes(&api);
    assert_eq!(sizes, vec![0, 700, 1400, 5100, 5101, 5102]);
    let s = shard(&api);
    assert_eq!(
        (s["treeSize"].as_u64(), s["tilesSize"].as_u64()),
        (Some(5102), Some(0)),
        "{s}"
    );
    // Answered from the stored hashes before the migration.
    let leaves = [0, 255, 256, 699, 700, 1399, 4095, 5101];
    let before = answers(&api, &sizes, &leaves);

    // The first delta runs the migration (21 tiles, 8 a step, one step a
    // run: three runs), then is appended over tiles.
    append_one(&api, &t.test_key, "first");
    let log = std::fs::read_to_string(&server.log_path).unwrap();
    let steps = log.matches("tiles migration: ").count();
    assert!(steps >= 3, "{steps} migration steps logged");
    unchanged(&api, &before);
    let key = log_key(&api);
    let now = *head_sizes(&api).last().unwrap();
    assert_eq!(now, 5103);
    for m in &sizes[1..] {
        check_consistency(&api, &key, *m, now);
    }

    // A Worker from before tiles appends meanwhile (a deploy's overlap):
    // the tiles no longer cover the head, and the next run migrates the
    // difference before it appends.
    grow_legacy(&api, 300);
    assert_eq!(shard(&api)["tilesSize"], 5103);
    let sizes = head_sizes(&api);
    let before = answers(&api, &sizes[sizes.len() - 3..], &[5100, 5102, 5200, 5402]);
    append_one(&api, &t.test_key, "second");
    unchanged(&api, &before);
    let last = *head_sizes(&api).last().unwrap();
    assert_eq!(last, 5404);
    for m in [700, 5102, 5103, 5403] {
        check_consistency(&api, &key, m, last);
    }
    // And a receipt of the appended deltas verifies end to end.
    let r = api.keyed(&t.test_key).receipt("cus_migrated", "");
    assert_eq!(r.status, 200, "{}", r.text);
    bvs_tests::log::check_receipt(&r, &key);
    eventually(Duration::from_secs(5), "nothing left queued", || {
        (shard(&api)["queuedDeltas"] == 0).then_some(())
    });
}
