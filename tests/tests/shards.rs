//! Issue 15: ledgers sharded across D1 databases, one signed log per shard,
//! a published log list. On a `wrangler dev` with wrangler.toml's shards (2
//! per environment), new tenants land on the emptiest shard, so two fresh
//! tenants cover both sandbox shards. Each one emits, derives, checkpoints,
//! fetches a receipt, and the receipt and public answers verify with
//! `bvs-verify` against the key the log list publishes for its log, and a
//! shard-1 receipt in the browser (tests/browser/verify_shard.mjs) against
//! that key pinned. Invitation tokens name their shard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::OnceLock;

use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::{new_tenant, new_tenant_on_plan};
use bvs_tests::{bvs_verify_bin, fresh_state_dir, run_browser, run_ok, Wrangler};
use serde_json::{json, Value};

static SERVER: OnceLock<Wrangler> = OnceLock::new();

fn api() -> Api {
    let w = SERVER.get_or_init(|| Wrangler::start_sharded(&fresh_state_dir("shards")));
    Api::new(w.base_url.clone())
}

fn cli(args: &[&str], dir: &std::path::Path) -> String {
    run_ok(
        Command::new(bvs_verify_bin()).args(args).current_dir(dir),
        &format!("bvs-verify {args:?}"),
    )
}

#[test]
fn the_log_list_names_every_shard_with_its_own_origin_and_key() {
    let api = api();
    let logs = api.log_list();
    let names: Vec<&str> = logs.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["sandbox", "sandbox-1", "production", "production-1"],
        "{logs:?}"
    );
    let origins: BTreeSet<&str> = logs.iter().map(|l| l["origin"].as_str().unwrap()).collect();
    assert_eq!(origins.len(), 4, "one origin per log: {origins:?}");
    for l in &logs {
        let name = l["name"].as_str().unwrap();
        let origin = l["origin"].as_str().unwrap();
        let key = l["verifierKey"].as_str().unwrap();
        assert!(
            key.starts_with(&format!("{origin}+")),
            "the key names its log: {l}"
        );
        assert_eq!(l["algorithm"], "ed25519");
        // The list's URLs answer, and the log's checkpoint is signed for
        // its own origin.
        let checkpoint = api.get(&format!("/api/v1/log/{name}/checkpoint"));
        assert_eq!(checkpoint.status, 200, "{}", checkpoint.text);
        assert_eq!(checkpoint.text.lines().next(), Some(origin));
        assert!(l["checkpointUrl"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/api/v1/log/{name}/checkpoint")));
        let k = api.get(&format!("/api/v1/log/{name}/key"));
        assert_eq!(k.body["data"]["verifierKey"], l["verifierKey"]);
    }
    assert_eq!(logs[1]["shard"], 1);
    assert_eq!(logs[1]["environment"], "sandbox");
    // A shard the service does not have is not found; nor is a bad name.
    for bad in [
        "sandbox-2",
        "sandbox-0",
        "sandbox-01",
        "staging",
        "sandbox-",
    ] {
        let r = api.get(&format!("/api/v1/log/{bad}/checkpoint"));
        assert_eq!(r.status, 404, "{bad}: {}", r.text);
    }
}

#[test]
fn a_tenant_on_each_shard_emits_derives_checkpoints_and_its_receipt_verifies_against_the_listed_key(
) {
    let api = api();
    let logs = api.log_list();
    let dir = std::env::temp_dir().join(format!("bvs-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut shards_seen = BTreeSet::new();
    // The emptiest shard takes each new tenant: two fresh tenants cover both
    // sandbox shards whatever the other test in this binary created.
    let mut n = 0;
    while shards_seen.len() < 2 {
        n += 1;
        assert!(n <= 6, "six tenants never covered both shards");
        let t = new_tenant(&api);
        let k = api.keyed(&t.test_key);
        for (i, amount) in [10.5, -2.25].into_iter().enumerate() {
            let d = Delta::new("cus_shard", amount, "shard test").reference_id(&format!("r{i}"));
            k.emit_anchored(&d);
        }
        let derived = k.derive("cus_shard", "");
        assert_eq!(derived.status, 200, "{}", derived.text);
        assert_eq!(
            derived.body["data"]["computedBalance"],
            json!(8.25),
            "{}",
            derived.text
        );

        let c = k.checkpoint(&json!({"customerId": "cus_shard"}));
        assert_eq!(c.status, 202, "{}", c.text);
        let committed = k.wait_committed(c.body["data"]["checkpointId"].as_str().unwrap());

        let r = k.receipt("cus_shard", "");
        assert_eq!(r.status, 200, "{}", r.text);
        let log = &r.body["data"]["log"];
        let shard = log["shard"].as_u64().unwrap();
        let listed = logs
            .iter()
            .find(|l| l["name"] == log["name"])
            .unwrap_or_else(|| panic!("the receipt's log is listed: {log}"));
        assert_eq!(listed["environment"], "sandbox");
        assert_eq!(listed["origin"], log["origin"]);
        let key = listed["verifierKey"].as_str().unwrap();
        assert_eq!(r.body["data"]["proof"]["publicKey"], listed["verifierKey"]);
        assert!(r.body["data"]["proof"]["treeHead"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}\n", log["origin"].as_str().unwrap())));

        let file = dir.join(format!("receipt-{n}.json"));
        std::fs::write(&file, &r.text).unwrap();
        let out = cli(&["receipt", file.to_str().unwrap(), "--key", key], &dir);
        assert!(out.contains("VERIFIED"), "{out}");
        assert!(!out.contains("FAIL"), "{out}");
        // The CLI names the log the receipt is proven in.
        assert!(
            out.contains(&format!("Log: {}", log["origin"].as_str().unwrap())),
            "{out}"
        );

        // The public answers (receipt root and checkpoint root) come from
        // the same shard and verify against the same listed key.
        for root in [
            r.body["data"]["itemsRoot"].as_str().unwrap(),
            committed["merkleRoot"].as_str().unwrap(),
        ] {
            let answer = api.get(&format!("/api/v1/verify/{root}"));
            assert_eq!(answer.status, 200, "{}", answer.text);
            assert_eq!(
                answer.body["data"]["verification"]["log"]["name"],
                log["name"]
            );
            let file = dir.join(format!("answer-{n}-{root}.json"));
            std::fs::write(&file, &answer.text).unwrap();
            let out = cli(
                &[
                    "public",
                    file.to_str().unwrap(),
                    "--root",
                    root,
                    "--key",
                    key,
                ],
                &dir,
            );
            assert!(out.contains("VERIFIED"), "{out}");
        }
        // The other shard's key does not verify this receipt.
        let other = logs
            .iter()
            .find(|l| l["environment"] == "sandbox" && l["name"] != log["name"])
            .unwrap();
        let status = Command::new(bvs_verify_bin())
            .args([
                "receipt",
                file.to_str().unwrap(),
                "--key",
                other["verifierKey"].as_str().unwrap(),
            ])
            .output()
            .unwrap()
            .status;
        assert_eq!(status.code(), Some(1), "another shard's key must fail");
        // The item is in this shard's log, by its own route.
        let item = r.body["data"]["deltas"][0]["itemHash"].as_str().unwrap();
        let name = log["name"].as_str().unwrap();
        let inclusion = api.get(&format!(
            "/api/v1/log/{name}/proof/inclusion?itemHash={item}"
        ));
        assert_eq!(inclusion.status, 200, "{}", inclusion.text);
        shards_seen.insert(shard);
    }
    assert_eq!(shards_seen, BTreeSet::from([0, 1]));
}

/// The `d1Calls` of the request log line with this `Request-Id` (DEV_MODE).
fn d1_calls(request_id: &str) -> Option<u64> {
    let log = std::fs::read_to_string(&SERVER.get().unwrap().log_path).unwrap();
    log.lines()
        .filter_map(|l| {
            l.find('{')
                .and_then(|i| serde_json::from_str::<Value>(&l[i..]).ok())
        })
        .find(|v| v["requestId"] == request_id)
        .and_then(|v| v["d1Calls"].as_u64())
}

/// Opens `token` (`POST /api/v1/agreement/invitation`) `n` times, all at
/// once when `at_once`, else one at a time, and returns the D1 round trips
/// each open made (its own: the counters are per request, however many
/// requests the isolate runs at the same time).
fn d1_calls_to_open(api: &Api, token: &str, n: usize, at_once: bool) -> Vec<u64> {
    let ids: Vec<String> = (0..n)
        .map(|i| format!("open-{}-{i}-{}", &token[..12], bvs_tests::nanos()))
        .collect();
    let open = |id: &String| {
        let r = api.send(
            api.req(reqwest::Method::POST, "/api/v1/agreement/invitation")
                .header("request-id", id)
                .json(&json!({ "token": token })),
        );
        assert_eq!(r.status, 200, "{}", r.text);
    };
    if at_once {
        std::thread::scope(|s| {
            for id in &ids {
                s.spawn(move || open(id));
            }
        });
    } else {
        ids.iter().for_each(open);
    }
    ids.iter()
        .map(|id| {
            bvs_tests::eventually(
                std::time::Duration::from_secs(10),
                "the request log line",
                || d1_calls(id),
            )
        })
        .collect()
}

#[test]
fn an_invitation_names_its_shard_and_opens_with_one_read_of_that_shard() {
    let api = api();
    let logs = api.log_list();
    let origin_of = |shard: u64| {
        logs.iter()
            .find(|l| l["environment"] == "sandbox" && l["shard"] == shard)
            .unwrap()["origin"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Fresh tenants until one invitation on each sandbox shard.
    let mut tokens: BTreeMap<u64, String> = BTreeMap::new();
    let mut n = 0;
    while tokens.len() < 2 {
        n += 1;
        assert!(n <= 6, "six tenants never covered both shards");
        let t = new_tenant(&api);
        let k = api.keyed(&t.test_key);
        k.emit(&Delta::new("cus_invited", "5", "invitation test"));
        let inv = k.post(
            "/api/v1/balance/customers/cus_invited/invitations",
            &json!({}),
        );
        assert_eq!(inv.status, 201, "{}", inv.text);
        let origin = inv.body["data"]["origin"].as_str().unwrap();
        let shard = (0..2).find(|s| origin_of(*s) == origin).unwrap();
        let token = inv.body["data"]["token"].as_str().unwrap().to_string();
        // The token names its environment and shard.
        assert!(token.starts_with(&format!("inv_test_{shard}_")), "{token}");
        tokens.insert(shard, token);
    }
    for (shard, token) in &tokens {
        // Opening reads the one shard the token names: one D1 round trip
        // (before, a shard-1 token read shard 0 first: two).
        assert_eq!(
            d1_calls_to_open(&api, token, 5, false),
            [1; 5],
            "opening a shard-{shard} invitation"
        );
        let opened = api.post("/api/v1/agreement/invitation", &json!({ "token": token }));
        assert_eq!(opened.body["data"]["origin"], json!(origin_of(*shard)));
    }
    // A token naming a shard this service does not have, or naming the
    // wrong shard, is not one it issued; no database is read for the first.
    let shard1 = &tokens[&1];
    let random = &shard1["inv_test_1_".len()..];
    for bad in [
        format!("inv_test_7_{random}"),
        format!("inv_test_0_{random}"),
    ] {
        let r = api.post("/api/v1/agreement/invitation", &json!({ "token": bad }));
        assert_eq!(r.status, 410, "{bad}: {}", r.text);
        assert_eq!(r.body["code"], "invitation_invalid", "{}", r.text);
    }
}

#[test]
fn requests_at_once_count_only_their_own_round_trips() {
    // Before, the counters were the isolate's: requests that overlapped
    // (these opens, and the other tests' requests and queue batches) saw
    // each other's D1 calls, and a shard test's count came out 3, not 1.
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit(&Delta::new("cus_at_once", "5", "round trips at once"));
    let inv = k.post(
        "/api/v1/balance/customers/cus_at_once/invitations",
        &json!({}),
    );
    assert_eq!(inv.status, 201, "{}", inv.text);
    let token = inv.body["data"]["token"].as_str().unwrap();
    assert_eq!(d1_calls_to_open(&api, token, 8, true), [1; 8]);
}

#[test]
fn a_shard_1_receipt_verifies_in_the_browser_against_the_listed_key_pinned() {
    let root_dir = bvs_tests::verifier_built();
    let api = api();
    let logs = api.log_list();
    // Fresh tenants until one is placed on sandbox shard 1.
    let mut n = 0;
    let (receipt, root) = loop {
        n += 1;
        assert!(n <= 6, "six tenants never landed on shard 1");
        let t = new_tenant(&api);
        let k = api.keyed(&t.test_key);
        for amount in ["1250.75", "-0.25"] {
            k.emit_anchored(&Delta::new("cus_shard_page", amount, "invoice"));
        }
        let r = k.receipt("cus_shard_page", "");
        assert_eq!(r.status, 200, "{}", r.text);
        if r.body["data"]["log"]["shard"] == 1 {
            let root = r.body["data"]["itemsRoot"].as_str().unwrap().to_string();
            break (r, root);
        }
    };
    let listed = |shard: u64| {
        logs.iter()
            .find(|l| l["environment"] == "sandbox" && l["shard"] == shard)
            .unwrap()
    };
    let (one, zero) = (listed(1), listed(0));
    let key = one["verifierKey"].as_str().unwrap();
    let origin = one["origin"].as_str().unwrap();
    assert_eq!(receipt.body["data"]["log"]["origin"], json!(origin));
    let proof = &receipt.body["data"]["proof"];
    let note = proof["treeHead"].as_str().unwrap();
    let served_key = proof["publicKey"].as_str().unwrap();
    assert_eq!(served_key, key, "the receipt names the listed key");
    // Swapped: the same head re-signed by another key for the same origin,
    // and the receipt naming that key.
    let head = bvs_core::note::verify_tree_head(note, key).unwrap();
    let seed = [7u8; 32];
    let forged_note = bvs_core::note::sign_tree_head(origin, head.size, &head.root, &seed).unwrap();
    let forged_key = bvs_core::note::public_key_string(origin, &seed).unwrap();
    let quoted = |s: &str| serde_json::to_string(s).unwrap();
    assert!(receipt.text.contains(&quoted(note)));
    let forged = receipt
        .text
        .replace(&quoted(note), &quoted(&forged_note))
        .replace(&quoted(key), &quoted(&forged_key));
    // The receipt naming shard 0's (real) key instead.
    let swapped = receipt
        .text
        .replace(&quoted(key), &quoted(zero["verifierKey"].as_str().unwrap()));
    assert!(forged != receipt.text && swapped != receipt.text);
    let log_keys: serde_json::Map<String, Value> = logs
        .iter()
        .map(|l| {
            (
                l["origin"].as_str().unwrap().to_string(),
                l["verifierKey"].clone(),
            )
        })
        .collect();
    let artifacts = root_dir.join("tests/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let case = artifacts.join("verify-shard-case.json");
    let body = json!({
        "base": api.base, "root": root, "origin": origin, "key": key, "logKeys": log_keys,
        "receipt": receipt.text, "forged": forged, "swapped": swapped,
    });
    std::fs::write(&case, body.to_string()).unwrap();
    let stdout = run_browser("verify_shard.mjs", &[&case]);
    assert!(stdout.contains("5 passed, 0 failed"), "{stdout}");
}

/// Issue 16: a submission's proof-root index row is written after the emit
/// answers (and again by the sequencer), so the public verify route must
/// find a root asked for at once, on whichever shard issued it.
#[test]
fn a_just_submitted_root_verifies_at_once_on_every_shard() {
    let api = api();
    let mut shards_seen = BTreeSet::new();
    let mut n = 0;
    while shards_seen.len() < 2 {
        n += 1;
        assert!(n <= 6, "six tenants never covered both shards");
        let t = new_tenant(&api);
        let k = api.keyed(&t.test_key);
        let emitted = k.post(
            bvs_tests::ledger::DELTA,
            &json!({"customerId": "cus_fresh", "delta": 3, "reason": "fresh root"}),
        );
        assert_eq!(emitted.status, 202, "{}", emitted.text);
        let root = emitted.body["data"]["itemsRoot"].as_str().unwrap();
        let answer = api.get(&format!("/api/v1/verify/{root}"));
        assert_eq!(answer.status, 200, "{}", answer.text);
        let shard = answer.body["data"]["verification"]["log"]["shard"]
            .as_u64()
            .unwrap();
        shards_seen.insert(shard);
    }
}

/// Issue 16: under a live lease of its key's rate limit in the isolate (an
/// Enterprise key used within the last second), a single emit writes its
/// proof-root index row in the same control-database batch as the key's
/// read: two D1 round trips in all (the key with the index row, the
/// write), and its root still verifies at once, on whichever shard.
#[test]
fn an_emit_under_a_leased_key_indexes_its_root_with_the_key_read() {
    let api = api();
    let mut shards_seen = BTreeSet::new();
    let mut fewest = u64::MAX;
    let mut n = 0;
    while shards_seen.len() < 2 {
        n += 1;
        assert!(n <= 6, "six tenants never covered both shards");
        let t = new_tenant_on_plan(&api, "enterprise");
        let k = api.keyed(&t.test_key);
        // The three emits go back to back, so the second and third are
        // sent while the first one's lease (`auth::limit::LEASE_MS`) is
        // live; their roots and log lines are read after.
        let emitted: Vec<(String, String)> = (0..3)
            .map(|i| {
                let id = format!("emit-leased-{n}-{i}-{}", bvs_tests::nanos());
                let emitted = api.send(
                    k.req(reqwest::Method::POST, bvs_tests::ledger::DELTA)
                        .header("request-id", &id)
                        .json(&json!({"customerId": "cus_leased", "delta": 1, "reason": "leased"})),
                );
                assert_eq!(emitted.status, 202, "{}", emitted.text);
                let root = emitted.body["data"]["itemsRoot"]
                    .as_str()
                    .unwrap()
                    .to_string();
                (id, root)
            })
            .collect();
        for (id, root) in &emitted {
            let answer = api.get(&format!("/api/v1/verify/{root}"));
            assert_eq!(answer.status, 200, "{}", answer.text);
            shards_seen.insert(
                answer.body["data"]["verification"]["log"]["shard"]
                    .as_u64()
                    .unwrap(),
            );
            let calls = bvs_tests::eventually(
                std::time::Duration::from_secs(10),
                "the request log line",
                || d1_calls(id),
            );
            fewest = fewest.min(calls);
        }
    }
    assert_eq!(
        fewest, 2,
        "the key's read with the index row, then the write"
    );
}
