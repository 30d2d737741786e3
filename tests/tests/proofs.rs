//! Proofs anyone can check, through `wrangler dev`: checkpoints, receipts,
//! public verification and the log's own routes, all checked with `core`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::merkle;
use bvs_core::note::verify_tree_head;
use bvs_core::verify::verify_receipt_json;
use bvs_core::Hash32;
use bvs_tests::api;
use bvs_tests::client::Keyed;
use bvs_tests::cron::now_ms;
use bvs_tests::ledger::Delta;
use bvs_tests::log::{check_consistency, check_inclusion, check_receipt, hash, log_key};
use bvs_tests::tenant::new_tenant;
use serde_json::{json, Value};

/// A delta whose raw context holds the secrets public verification must
/// never show.
fn delta(customer: &str, amount: f64, reason: &str) -> Delta {
    Delta::new(customer, amount, reason)
        .reference_id("ref-secret")
        .metadata(json!({"note": "meta-secret"}))
}

/// Emits `amounts` for `customer` in order and waits until the last one is
/// anchored.
fn emit_all_anchored(k: &Keyed, customer: &str, amounts: &[f64]) {
    let emitted: Vec<Value> = amounts
        .iter()
        .map(|a| k.emit(&delta(customer, *a, "r")))
        .collect();
    k.wait_anchored(emitted.last().unwrap()["anchorId"].as_str().unwrap());
}

fn current_period() -> String {
    bvs_core::types::Period::containing(i64::try_from(now_ms()).unwrap()).to_string()
}

#[test]
fn a_checkpoint_goes_from_queued_to_committed_and_lists() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    emit_all_anchored(&k, "cus_a", &[5.0, 2.5]);
    let r = k.checkpoint(&json!({"customerId": "cus_a"}));
    assert_eq!(r.status, 202, "{}", r.text);
    let c = &r.body["data"];
    assert_eq!(c["status"], "QUEUED");
    assert_eq!(c["customerId"], "cus_a");
    assert_eq!(c["period"], current_period());
    assert_eq!(c["deltaCount"], 2);
    assert!(c["fromIndex"].as_u64().unwrap() <= c["toIndex"].as_u64().unwrap());
    assert!(c["message"]
        .as_str()
        .unwrap()
        .contains("checkpoint.verified"));
    let committed = k.wait_committed(c["checkpointId"].as_str().unwrap());
    assert_eq!(committed["merkleRoot"], c["merkleRoot"]);
    assert!(committed["createdAt"].is_string());
    assert_eq!(committed["txHash"].as_str().unwrap().len(), 64);

    let filtered = k.checkpoints(&format!("customerId=cus_a&period={}", current_period()));
    assert_eq!(filtered.body["data"]["pagination"]["total"], 1);
    let none = k.checkpoints("customerId=cus_zzz");
    assert_eq!(none.body["data"]["checkpoints"], json!([]));
    let bad = k.checkpoints("limit=101");
    assert_eq!(bad.status, 400);
}

#[test]
fn checkpoint_requests_are_validated() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit_anchored(&delta("cus_v", 1.0, "r"));
    let post = |b: Value| k.checkpoint(&b);
    let future = post(json!({"period": "2999-01"}));
    assert_eq!(future.status, 400);
    assert!(future.message().contains("period"));
    let invalid = post(json!({"period": "2026-13"}));
    assert_eq!(invalid.status, 400);
    assert!(invalid.message().contains("period"));
    let unknown = post(json!({"customerId": "nobody"}));
    assert_eq!(unknown.status, 404);
    let long = post(json!({"customerId": "c".repeat(129)}));
    assert_eq!(long.status, 400);
    assert!(long.message().contains("customerId"));
    let empty_period = post(json!({"period": "2020-01"}));
    assert_eq!(empty_period.status, 422, "{}", empty_period.text);
}

#[test]
fn a_checkpoint_of_all_covers_every_customer() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let mut items = Vec::new();
    let mut last = String::new();
    for c in ["cus_x", "cus_y", "cus_z"] {
        let d = k.emit(&delta(c, 1.0, "r"));
        items.push(hash(&d["itemHashes"][0]));
        last = d["anchorId"].as_str().unwrap().to_string();
    }
    k.wait_anchored(&last);
    let r = k.checkpoint(&json!({}));
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["data"]["customerId"], "all");
    assert_eq!(r.body["data"]["deltaCount"], 3);
    assert_eq!(
        r.body["data"]["merkleRoot"],
        merkle::root(&items).to_hex(),
        "log order = emit order here"
    );
    let id = r.body["data"]["checkpointId"].as_str().unwrap().to_string();
    k.wait_committed(&id);
    let root = r.body["data"]["merkleRoot"].as_str().unwrap();
    let v = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(v.status, 200, "{}", v.text);
    let ledgers: std::collections::BTreeSet<&str> = v.body["data"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ledgerId"].as_str().unwrap())
        .collect();
    assert_eq!(ledgers.len(), 3, "every customer is covered");
}

#[test]
fn a_receipt_verifies_with_core_and_fails_after_any_tampering() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit(&delta("cus_r", 10.0, "first"));
    k.emit(&delta("cus_r", -3.25, "second"));
    let last = k.emit(&delta("cus_r", 0.5, "third"));
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let r = k.receipt("cus_r", "");
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    assert_eq!(d["deltasCount"], 3);
    assert_eq!(d["finalBalance"], json!(7.25));
    assert_eq!(d["itemsRoot"], d["receiptId"]);
    assert_eq!(d["itemsRoot"], d["proofRoot"]);
    assert_eq!(d["verification"]["proofRoot"], d["itemsRoot"]);
    assert!(d["verification"]["verifyUrl"]
        .as_str()
        .unwrap()
        .ends_with(d["itemsRoot"].as_str().unwrap()));

    let key = log_key(&api);
    let receipt_json = serde_json::to_string(&r.body["data"]).unwrap();
    // The exact server bytes verify too (no f64 round trip).
    check_receipt(&r, &key);
    assert!(verify_receipt_json(&receipt_json, Some(&key)).ok);

    // Tamper with one field at a time: every mutation fails.
    type Mutation = Box<dyn Fn(&mut Value)>;
    let mutations: Vec<(&str, Mutation)> = vec![
        (
            "delta amount",
            Box::new(|v: &mut Value| v["deltas"][1]["delta"] = json!(-3.24)),
        ),
        (
            "proof amount",
            Box::new(|v: &mut Value| v["proof"]["items"][1]["delta"] = json!(-3.24)),
        ),
        (
            "final balance",
            Box::new(|v: &mut Value| v["finalBalance"] = json!(8)),
        ),
        (
            "starting balance",
            Box::new(|v: &mut Value| v["startingBalance"] = json!(1)),
        ),
        (
            "items root",
            Box::new(|v: &mut Value| v["itemsRoot"] = json!("00".repeat(32))),
        ),
        (
            "item hash",
            Box::new(|v: &mut Value| v["proof"]["items"][0]["itemHash"] = json!("11".repeat(32))),
        ),
        (
            "leaf index",
            Box::new(|v: &mut Value| {
                let i = v["proof"]["items"][0]["leafIndex"].as_u64().unwrap();
                v["proof"]["items"][0]["leafIndex"] = json!(i + 1);
            }),
        ),
        (
            "inclusion path",
            Box::new(|v: &mut Value| {
                v["proof"]["items"][2]["inclusionProof"][0] = json!("22".repeat(32))
            }),
        ),
        (
            "raw reason",
            Box::new(|v: &mut Value| v["proof"]["items"][0]["raw"]["reason"] = json!("forged")),
        ),
        (
            "tree head",
            Box::new(|v: &mut Value| {
                let note = v["proof"]["treeHead"]
                    .as_str()
                    .unwrap()
                    .replacen('\n', "\n1", 1);
                v["proof"]["treeHead"] = json!(note);
            }),
        ),
        (
            "public key",
            Box::new(|v: &mut Value| v["proof"]["publicKey"] = json!("someone+00000000+AQ==")),
        ),
    ];
    for (name, mutate) in mutations {
        let mut v: Value = r.body["data"].clone();
        mutate(&mut v);
        let report = verify_receipt_json(&serde_json::to_string(&v).unwrap(), Some(&key));
        assert!(!report.ok, "tampering with the {name} went unnoticed");
    }
}

#[test]
fn a_period_receipt_matches_its_committed_checkpoint() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    emit_all_anchored(&k, "cus_p", &[1.0, 2.0]);
    let c = k.checkpoint(&json!({"customerId": "cus_p"}));
    let id = c.body["data"]["checkpointId"].as_str().unwrap().to_string();
    let committed = k.wait_committed(&id);
    let period = current_period();
    let r = k.receipt("cus_p", &format!("period={period}"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["period"], period);
    assert_eq!(r.body["data"]["itemsRoot"], committed["merkleRoot"]);
    let none = k.receipt("cus_p", "period=2020-01");
    assert_eq!(none.status, 404);
    let bad = k.receipt("cus_p", "period=2020-1");
    assert_eq!(bad.status, 400);
    assert!(bad.message().contains("period"));
}

/// Checks a public verify answer the way a client would.
fn check_public(v: &Value, key: &str, root: &str) {
    let ver = &v["verification"];
    let head = verify_tree_head(ver["treeHead"].as_str().unwrap(), key).unwrap();
    assert_eq!(head.size.0, ver["treeSize"].as_u64().unwrap());
    let mut items = Vec::new();
    for r in v["records"].as_array().unwrap() {
        let item = hash(&r["itemHash"]);
        check_inclusion(&r["inclusionProof"], &r["leafIndex"], &head, &item);
        items.push(item);
    }
    let items_root = merkle::root(&items).to_hex();
    assert_eq!(ver["itemsRoot"], items_root);
    if v["summary"]["kind"] == "checkpoint" {
        let leaf = &ver["checkpointLeaf"];
        assert_eq!(leaf["itemHash"], root);
        assert_eq!(items_root, root);
        check_inclusion(
            &leaf["inclusionProof"],
            &leaf["leafIndex"],
            &head,
            &Hash32::parse(root).unwrap(),
        );
    } else {
        assert_eq!(items_root, root);
    }
}

#[test]
fn public_verify_works_without_a_key_for_all_three_kinds_of_root_and_leaks_no_raw_context() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let d = k.emit(&delta("cus_pub", 4.0, "reason-secret"));
    let batch = k.batch(&[
        json!({"customerId": "cus_pub", "delta": 1, "reason": "reason-secret"}),
        json!({"customerId": "cus_pub", "delta": 2, "reason": "reason-secret"}),
    ]);
    assert_eq!(batch.status, 202);
    k.wait_anchored(
        batch.body["data"]["results"][1]["anchorId"]
            .as_str()
            .unwrap(),
    );
    let ck = k.checkpoint(&json!({"customerId": "cus_pub"}));
    let ck_id = ck.body["data"]["checkpointId"]
        .as_str()
        .unwrap()
        .to_string();
    k.wait_committed(&ck_id);
    // One more delta, so the receipt covers another set than the checkpoint
    // (over identical sets both would issue the same root).
    let extra = k.emit(&delta("cus_pub", 1.0, "reason-secret"));
    k.wait_anchored(extra["anchorId"].as_str().unwrap());
    let receipt = k.receipt("cus_pub", "");
    let key = log_key(&api);
    let roots = [
        (
            "submission",
            d["itemsRoot"].as_str().unwrap().to_string(),
            1,
        ),
        (
            "submission",
            batch.body["data"]["itemsRoot"]
                .as_str()
                .unwrap()
                .to_string(),
            2,
        ),
        (
            "receipt",
            receipt.body["data"]["itemsRoot"]
                .as_str()
                .unwrap()
                .to_string(),
            4,
        ),
        (
            "checkpoint",
            ck.body["data"]["merkleRoot"].as_str().unwrap().to_string(),
            3,
        ),
    ];
    for (kind, root, n) in roots {
        let v = api.get(&format!("/api/v1/verify/{root}"));
        assert_eq!(v.status, 200, "{kind}: {}", v.text);
        assert_eq!(v.headers.get("access-control-allow-origin").unwrap(), "*");
        let data = &v.body["data"];
        assert_eq!(data["verified"], true, "{kind}");
        assert_eq!(data["summary"]["kind"], kind);
        assert_eq!(data["summary"]["itemCount"], n);
        assert_eq!(data["records"].as_array().unwrap().len(), n);
        assert!(data["verification"]["publicLedgerUrl"]
            .as_str()
            .unwrap()
            .contains("/api/v1/log/sandbox"));
        for secret in ["reason-secret", "ref-secret", "meta-secret", "cus_pub"] {
            assert!(!v.text.contains(secret), "{kind} leaks {secret}");
        }
        check_public(data, &key, &root);
    }
    assert_eq!(api.get("/api/v1/verify/not-a-root").status, 400);
    let unknown = api.get(&format!("/api/v1/verify/{}", "ab".repeat(32)));
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["statusCode"], 404);
}

#[test]
fn consistency_proofs_between_every_pair_of_recorded_heads_verify() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    for i in 0..4 {
        k.emit_anchored(&delta("cus_c", f64::from(i) + 1.0, "r"));
    }
    let key = log_key(&api);
    let heads = api.get("/api/v1/log/sandbox/heads?limit=100");
    assert_eq!(heads.status, 200, "{}", heads.text);
    let heads: Vec<Value> = heads.body["data"]["heads"].as_array().unwrap().clone();
    assert!(heads.len() >= 4);
    let sample: Vec<&Value> = heads.iter().rev().take(8).collect();
    for a in &sample {
        for b in &sample {
            let (m, n) = (
                a["treeSize"].as_u64().unwrap(),
                b["treeSize"].as_u64().unwrap(),
            );
            if m > n {
                continue;
            }
            check_consistency(&api, &key, m, n);
        }
    }
    let checkpoint = api.get("/api/v1/log/sandbox/checkpoint");
    assert_eq!(checkpoint.status, 200);
    assert!(checkpoint
        .headers
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    assert!(verify_tree_head(&checkpoint.text, &key).is_ok());
    assert_eq!(api.get("/api/v1/log/nowhere/checkpoint").status, 404);
    assert_eq!(
        api.get("/api/v1/log/sandbox/proof/consistency?from=5&to=2")
            .status,
        400
    );
}

#[test]
fn an_inclusion_proof_by_item_hash_verifies() {
    let api = api();
    let t = new_tenant(&api);
    let d = api
        .keyed(&t.test_key)
        .emit_anchored(&delta("cus_i", 9.0, "r"));
    let item = d["itemHashes"][0].as_str().unwrap();
    let r = api.get(&format!(
        "/api/v1/log/sandbox/proof/inclusion?itemHash={item}"
    ));
    assert_eq!(r.status, 200, "{}", r.text);
    let key = log_key(&api);
    let head = verify_tree_head(r.body["data"]["treeHead"].as_str().unwrap(), &key).unwrap();
    check_inclusion(
        &r.body["data"]["inclusionProof"],
        &r.body["data"]["leafIndex"],
        &head,
        &hash(&d["itemHashes"][0]),
    );
    assert_eq!(
        api.get(&format!(
            "/api/v1/log/sandbox/proof/inclusion?itemHash={}",
            "cd".repeat(32)
        ))
        .status,
        404
    );
    assert_eq!(api.get("/api/v1/log/sandbox/proof/inclusion").status, 400);
}

#[test]
fn a_tree_size_beyond_any_log_is_400_naming_the_field_not_500() {
    // Found by schemathesis: `from` above i64::MAX reached the database.
    let api = api();
    for (path, field) in [
        ("/api/v1/log/sandbox/heads?from=17128058222401941504", "from"),
        ("/api/v1/log/sandbox/proof/consistency?from=0&to=18446744073709551615", "to"),
        ("/api/v1/log/sandbox/proof/inclusion?itemHash=00000000000000000000000000000000000000000000000000000000000000aa&treeSize=9007199254740993", "treeSize"),
    ] {
        let r = api.get(path);
        assert_eq!(r.status, 400, "{path}: {}", r.text);
        assert!(r.message().contains(field), "{}", r.text);
    }
}
