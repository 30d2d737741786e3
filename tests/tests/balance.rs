//! Balance API through `wrangler dev`: emit, verification, status, derive,
//! compare, customers, facts, idempotency, validation and isolation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::client::Reply;
use bvs_tests::ledger::{Delta, COMPARE, CUSTOMERS, DELTA, FACTS, WAIT};
use bvs_tests::log::hash;
use bvs_tests::tenant::{create_key, new_tenant, new_tenant_on_plan, provision_production};
use bvs_tests::{api, eventually};
use reqwest::Method;
use serde_json::{json, Value};

/// A delta of `amount` (a raw JSON number token) for `customer`.
fn delta(customer: &str, amount: &str) -> Delta {
    Delta::new(customer, amount, "test")
}

#[test]
fn an_emitted_delta_is_queued_then_anchored_with_a_tx_hash() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let r = k.post(
        DELTA,
        &json!({"customerId": "cus_1", "delta": 12.5, "reason": "top-up", "referenceId": "inv-7", "metadata": {"plan": "pro"}}),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["success"], true);
    let d = &r.body["data"];
    assert_eq!(d["status"], "QUEUED");
    assert_eq!(d["customerId"], "cus_1");
    assert_eq!(d["delta"], json!(12.5));
    assert_eq!(d["receiptId"], d["itemsRoot"]);
    assert_eq!(d["itemHashes"].as_array().unwrap().len(), 1);
    assert!(d["anchorId"].as_str().unwrap().starts_with("anc_"));
    assert!(d["estimatedVerifiedDeltas"].as_u64().unwrap() >= 1);
    assert!(d["receivedAt"].as_str().unwrap().ends_with('Z'));
    assert!(!d["message"].as_str().unwrap().is_empty());

    let anchored = k.wait_anchored(d["anchorId"].as_str().unwrap());
    assert_eq!(anchored["customerId"], "cus_1");
    assert_eq!(anchored["receiptId"], d["receiptId"]);
    assert_eq!(anchored["txHash"].as_str().unwrap().len(), 64);
    assert!(anchored["blockTimestamp"].is_string());
}

/// `estimatedVerifiedDeltas` is the customer's verified and queued deltas,
/// the new one included, with and without an Idempotency-Key (issue 16:
/// without a key the delta's own insert counts them), and on an
/// Enterprise key whose emits index their root with the key's read.
#[test]
fn the_estimate_counts_the_customers_deltas_with_the_new_one() {
    let api = api();
    let tenants = [
        ("free", new_tenant(&api)),
        ("enterprise", new_tenant_on_plan(&api, "enterprise")),
    ];
    for (plan, t) in &tenants {
        let k = api.keyed(&t.test_key);
        let estimate = |d: &Value| d["estimatedVerifiedDeltas"].as_u64().unwrap();
        let first = k.emit(&delta("cus_est", "1"));
        assert_eq!(estimate(&first), 1, "{plan}: {first}");
        k.wait_anchored(first["anchorId"].as_str().unwrap());
        let second = k.emit(&delta("cus_est", "2"));
        assert_eq!(estimate(&second), 2, "{plan}: one verified, one queued");
        let keyed = k.send(
            k.req(Method::POST, DELTA)
                .header("idempotency-key", format!("est-{plan}"))
                .header("content-type", "application/json")
                .body(delta("cus_est", "3").to_json()),
        );
        assert_eq!(keyed.status, 202, "{}", keyed.text);
        assert_eq!(estimate(&keyed.body["data"]), 3, "{plan}: {}", keyed.text);
        let other = k.emit(&delta("cus_est_other", "1"));
        assert_eq!(estimate(&other), 1, "{plan}: another customer's own count");
    }
}

#[test]
fn a_single_delta_items_root_is_the_rfc9162_root_of_its_item_hash() {
    let api = api();
    let t = new_tenant(&api);
    let d = api.keyed(&t.test_key).emit(&delta("cus_root", "1"));
    let root = bvs_core::merkle::root(&[hash(&d["itemHashes"][0])]);
    assert_eq!(d["itemsRoot"], root.to_hex());
}

#[test]
fn money_is_exact_end_to_end() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit(&delta("cus_exact", "0.1"));
    k.emit_anchored(&delta("cus_exact", "0.2"));
    let r = k.derive("cus_exact", "");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["computedBalance"], json!(0.3));
    // The JSON number token itself is the plain shortest form.
    assert!(r.text.contains("\"computedBalance\":0.3"), "{}", r.text);

    k.emit_anchored(&delta("cus_tiny", "0.000000000000000001"));
    let r = k.derive("cus_tiny", "startingBalance=1000000000");
    assert!(
        r.text
            .contains("\"computedBalance\":1000000000.000000000000000001"),
        "{}",
        r.text
    );
}

#[test]
fn a_billion_times_a_thousand_deltas_is_exact() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let mut last = String::new();
    for _ in 0..10 {
        let items: Vec<Value> = (0..100)
            .map(|_| json!({"customerId": "cus_big", "delta": 1_000_000_000, "reason": "big"}))
            .collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
        last = r.body["data"]["results"][99]["anchorId"]
            .as_str()
            .unwrap()
            .to_string();
    }
    k.wait_anchored(&last);
    let r = k.derive("cus_big", "limit=1");
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text.contains("\"computedBalance\":1000000000000"),
        "{}",
        r.text
    );
    assert_eq!(r.body["data"]["deltasCount"], 1000);
    assert!(
        r.body["data"]["_hint"]["startingCheckpoint"].is_string(),
        "1,000 deltas carry a _hint"
    );
}

#[test]
fn derive_paginates_and_resumes_from_either_checkpoint_type() {
    let api = api();
    let t = new_tenant_on_plan(&api, "pilot");
    let k = api.keyed(&t.test_key);
    let mut anchors = Vec::new();
    for i in 1..=5 {
        anchors.push(k.emit(&delta("cus_page", &i.to_string())));
    }
    k.wait_anchored(anchors[4]["anchorId"].as_str().unwrap());

    let full = k.derive("cus_page", "limit=2&offset=1&startingBalance=100");
    assert_eq!(full.status, 200, "{}", full.text);
    let d = &full.body["data"];
    assert_eq!(
        d["computedBalance"],
        json!(115),
        "all deltas count, whatever the page"
    );
    assert_eq!(d["startingBalance"], json!(100));
    assert_eq!(d["startingCheckpoint"], "genesis");
    assert_eq!(d["deltasCount"], 5);
    assert_eq!(
        d["pagination"],
        json!({"total": 5, "limit": 2, "offset": 1})
    );
    let page: Vec<&Value> = d["deltas"].as_array().unwrap().iter().collect();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0]["delta"], json!(2));
    assert_eq!(page[1]["delta"], json!(3));
    for p in &page {
        assert_eq!(p["verified"], true);
        assert_eq!(p["dataPurged"], false);
        assert_eq!(p["reason"], "test");
        assert_eq!(p["referenceId"], Value::Null);
        assert_eq!(p["receiptId"], p["itemsRoot"]);
        assert!(p["window"].as_str().unwrap().len() == 7);
        assert!(p["declaredTimestamp"].is_string() && p["blockTimestamp"].is_string());
    }
    assert_eq!(d["latestCheckpoint"], anchors[4]["itemsRoot"]);
    assert_eq!(d["latestReceiptId"], d["latestCheckpoint"]);
    assert_eq!(window_deltas(d), 5);
    assert!(d["verificationProof"]["itemsRoot"].is_string());
    assert!(d.get("_hint").is_none());

    // Resume after the 2nd delta, by itemsRoot and by anchorId.
    let root2 = anchors[1]["itemsRoot"].as_str().unwrap();
    let by_root = k.derive(
        "cus_page",
        &format!("startingCheckpoint={root2}&startingBalance=3"),
    );
    assert_eq!(by_root.status, 200, "{}", by_root.text);
    assert_eq!(by_root.body["data"]["computedBalance"], json!(15));
    assert_eq!(by_root.body["data"]["deltasCount"], 3);
    assert_eq!(by_root.body["data"]["deltas"][0]["delta"], json!(3));
    assert_eq!(by_root.body["data"]["startingCheckpointType"], "itemsRoot");
    assert_eq!(
        window_deltas(&by_root.body["data"]),
        3,
        "window summaries cover only the replayed deltas"
    );

    let anchor2 = anchors[1]["anchorId"].as_str().unwrap();
    let by_anchor = k.derive(
        "cus_page",
        &format!("startingCheckpoint={anchor2}&startingCheckpointType=anchorId&startingBalance=3"),
    );
    assert_eq!(by_anchor.status, 200, "{}", by_anchor.text);
    assert_eq!(by_anchor.body["data"]["computedBalance"], json!(15));
    assert_eq!(by_anchor.body["data"]["startingCheckpointType"], "anchorId");
}

/// The deltas a derive answer's window summaries count.
fn window_deltas(d: &Value) -> u64 {
    d["windowSummaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["deltasCount"].as_u64().unwrap())
        .sum()
}

#[test]
fn derive_rejects_bad_checkpoints_and_parameters() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit_anchored(&delta("cus_bad", "1"));
    for (query, status, field) in [
        (
            format!("startingCheckpoint={}", "ab".repeat(32)),
            404,
            "startingCheckpoint",
        ),
        (
            "startingCheckpoint=x&startingCheckpointType=blockHash".to_string(),
            400,
            "startingCheckpointType",
        ),
        ("limit=1001".to_string(), 400, "limit"),
        ("startingBalance=abc".to_string(), 400, "startingBalance"),
    ] {
        let r = k.derive("cus_bad", &query);
        assert_eq!(r.status, status, "{query}: {}", r.text);
        assert!(r.message().contains(field));
    }
    assert_eq!(k.derive("nobody", "").status, 404);
}

#[test]
fn compare_reports_all_four_match_combinations() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit_anchored(&delta("cus_cmp", "10"));
    let cmp = |yours: i64, theirs: i64| {
        k.post(
            COMPARE,
            &json!({"customerId": "cus_cmp", "yourBalance": yours, "theirBalance": theirs, "startingBalance": 5}),
        )
    };
    let both = cmp(15, 15);
    assert_eq!(both.status, 200, "{}", both.text);
    assert_eq!(both.body["data"]["computedBalance"], json!(15));
    assert_eq!(both.body["data"]["matchesYours"], true);
    assert_eq!(both.body["data"]["matchesTheirs"], true);
    assert!(both.body["data"].get("discrepancy").is_none());

    let theirs_off = cmp(15, 14);
    assert_eq!(theirs_off.body["data"]["matchesYours"], true);
    assert_eq!(theirs_off.body["data"]["matchesTheirs"], false);
    assert_eq!(theirs_off.body["data"]["discrepancy"]["who"], "theirs");
    assert!(theirs_off.body["data"]["discrepancy"]["resolution"].is_string());

    let yours_off = cmp(16, 15);
    assert_eq!(yours_off.body["data"]["matchesYours"], false);
    assert_eq!(yours_off.body["data"]["matchesTheirs"], true);
    assert_eq!(yours_off.body["data"]["discrepancy"]["who"], "yours");

    let neither = cmp(1, 2);
    assert_eq!(neither.body["data"]["matchesYours"], false);
    assert_eq!(neither.body["data"]["matchesTheirs"], false);
    assert!(
        neither.body["data"]["discrepancy"]["resolution"]
            .as_str()
            .unwrap()
            .len()
            > 10
    );

    let missing = k.post(COMPARE, &json!({"theirBalance": 1}));
    assert_eq!(missing.status, 400);
    assert!(missing.message().contains("yourBalance"));
}

#[test]
fn every_validation_error_names_its_field() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let cases: Vec<(Value, &str)> = vec![
        (json!({"delta": 1, "reason": "r"}), "customerId"),
        (
            json!({"customerId": "bad id!", "delta": 1, "reason": "r"}),
            "customerId",
        ),
        (
            json!({"customerId": "c".repeat(129), "delta": 1, "reason": "r"}),
            "customerId",
        ),
        (json!({"customerId": "c", "reason": "r"}), "delta"),
        (
            json!({"customerId": "c", "delta": 0, "reason": "r"}),
            "delta",
        ),
        (
            json!({"customerId": "c", "delta": "5", "reason": "r"}),
            "delta",
        ),
        (
            json!({"customerId": "c", "delta": 1_000_000_001, "reason": "r"}),
            "delta",
        ),
        (json!({"customerId": "c", "delta": 1}), "reason"),
        (
            json!({"customerId": "c", "delta": 1, "reason": "r".repeat(501)}),
            "reason",
        ),
        (
            json!({"customerId": "c", "delta": 1, "reason": "r", "metadata": [1]}),
            "metadata",
        ),
        (
            json!({"customerId": "c", "delta": 1, "reason": "r", "referenceId": 5}),
            "referenceId",
        ),
        (
            json!({"customerId": "c", "delta": 1, "reason": "r", "timestamp": "yesterday"}),
            "timestamp",
        ),
    ];
    for (body, field) in cases {
        let r = k.post(DELTA, &body);
        assert_eq!(r.status, 400, "{body} → {}", r.text);
        assert_eq!(r.body["error"], "Bad Request");
        assert!(r.message().contains(field), "{body} → {}", r.text);
    }
    let many = k.post(DELTA, &json!({}));
    let msg = many.message();
    assert!(
        msg.contains("customerId") && msg.contains("delta") && msg.contains("reason"),
        "{msg}"
    );
    // 19 fractional digits are too precise.
    let r = k.post_raw(
        DELTA,
        r#"{"customerId":"c","delta":0.1234567890123456789,"reason":"r"}"#,
    );
    assert_eq!(r.status, 400);
    assert!(r.message().contains("delta"));
}

#[test]
fn a_number_beyond_f64_is_a_400_naming_its_field_not_a_malformed_body() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    for (body, field) in [
        (r#"{"customerId":"c","delta":1e400,"reason":"r"}"#, "delta"),
        (
            r#"{"customerId":"c","delta":-1E+999,"reason":"r"}"#,
            "delta",
        ),
        (
            r#"{"customerId":"c","delta":1,"reason":"r","metadata":{"x":1e400}}"#,
            "metadata",
        ),
    ] {
        let r = k.post_raw(DELTA, body);
        assert_eq!(r.status, 400, "{body} → {}", r.text);
        assert_eq!(r.body["error"], "Bad Request");
        let msg = r.message();
        assert!(msg.contains(field), "{body} → {}", r.text);
        assert!(!msg.contains("Malformed"), "{body} → {}", r.text);
    }
}

#[test]
fn a_batch_queues_the_good_items_and_reports_the_bad_ones() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let r = k.batch(&[
        json!({"customerId": "cus_a", "delta": 5, "reason": "ok"}),
        json!({"customerId": "cus_b", "delta": 0, "reason": "zero"}),
        json!({"customerId": "cus_a", "delta": -2.5, "reason": "ok"}),
        json!("not an object"),
    ]);
    assert_eq!(r.status, 202, "{}", r.text);
    let d = &r.body["data"];
    assert_eq!(d["totalQueued"], 2);
    assert_eq!(d["totalFailed"], 2);
    let results = d["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["status"], "QUEUED");
    assert_eq!(results[0]["index"], 0);
    assert_eq!(results[1]["status"], "FAILED");
    assert_eq!(results[1]["error"]["statusCode"], 400);
    assert!(results[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("deltas[1].delta"));
    assert_eq!(results[3]["status"], "FAILED");
    assert_eq!(
        results[0]["receiptId"], results[2]["receiptId"],
        "one submission, one root"
    );
    assert_eq!(d["_efficiency"]["uniqueCustomers"], 1);
    assert_eq!(d["_efficiency"]["totalDeltas"], 2);

    // The items root is the RFC 9162 root of the valid items, in order.
    let hashes = [hash(&results[0]["itemHash"]), hash(&results[2]["itemHash"])];
    assert_eq!(
        results[0]["itemsRoot"],
        bvs_core::merkle::root(&hashes).to_hex()
    );

    let status = k.wait_anchored(results[2]["anchorId"].as_str().unwrap());
    assert_eq!(status["deltaCount"], 2);
    assert_eq!(status["deltas"].as_array().unwrap().len(), 2);

    let too_many: Vec<Value> = (0..101)
        .map(|_| json!({"customerId": "c", "delta": 1, "reason": "r"}))
        .collect();
    let r = k.batch(&too_many);
    assert_eq!(r.status, 400);
    assert!(r.message().contains("deltas"));
    let all_bad = k.batch(&[json!({"delta": 1})]);
    assert_eq!(all_bad.status, 400);
    assert!(all_bad.message().contains("deltas[0].customerId"));
}

/// A batch's items keep every byte of their content through the set
/// insert (issue 42: a batch's delta and ledger rows go to D1 as one JSON
/// parameter each): reasons and metadata with quotes, backslashes, control
/// characters, SQL and non-ASCII text, reference ids, a named asset and
/// conditions come back from the delta status and the receipts as sent, in
/// the batch's order, and `bvs-verify` recomputes every item's hash from
/// the receipt's content.
#[test]
fn a_batch_keeps_every_byte_of_its_items_content() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let odd =
        "quote \" backslash \\ nul \u{0} tab \t newline \n \u{1f} é 𝄞 '); DROP TABLE deltas; --";
    let c = "cus_bytes";
    let items = vec![
        json!({"customerId": c, "delta": 12.25, "reason": odd, "referenceId": "ref \"1\" é",
               "metadata": {"k": odd, "n": [1, -2.50, {"deep": "\u{7f}"}]}}),
        json!({"customerId": c, "delta": 3, "asset": "USD/2", "reason": "named \u{0}"}),
        json!({"customerId": "cus_bytes_2", "delta": 1, "reason": "[\"$[0]\", null]"}),
        json!({"customerId": c, "delta": -1, "asset": "USD/2", "reason": "floored",
               "conditions": {"balanceAtLeast": 0}}),
        json!({"customerId": c, "delta": 0.5, "reason": "last", "metadata": {}}),
    ];
    let data = k.batch_anchored(&items);
    let results = data["results"].as_array().unwrap();
    assert_eq!(results.len(), items.len(), "{data}");
    for (i, (sent, got)) in items.iter().zip(results).enumerate() {
        assert_eq!(got["index"], i, "{data}");
        let status = k.delta_status(got["anchorId"].as_str().unwrap());
        assert_eq!(status.status, 200, "{}", status.text);
        let d = &status.body["data"];
        for field in ["customerId", "delta", "reason", "referenceId", "metadata"] {
            let want = sent.get(field).cloned().unwrap_or(Value::Null);
            assert_eq!(d[field], want, "item {i} {field}: {}", status.text);
        }
        assert_eq!(d["itemHash"], got["itemHash"], "{}", status.text);
        // The batch's deltas, in the batch's order.
        let order: Vec<&Value> = d["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["anchorId"])
            .collect();
        let sent_order: Vec<&Value> = results.iter().map(|r| &r["anchorId"]).collect();
        assert_eq!(order, sent_order, "{}", status.text);
    }
    // Both assets' receipts list the content as sent and verify offline,
    // each item's hash recomputed from it.
    let key = bvs_tests::log::log_key(&api);
    for (query, want) in [("", vec![0, 4]), ("asset=USD/2", vec![1, 3])] {
        let r = k.receipt(c, query);
        assert_eq!(r.status, 200, "{}", r.text);
        let reasons: Vec<&Value> = r.body["data"]["proof"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["raw"]["reason"])
            .collect();
        let sent: Vec<&Value> = want.iter().map(|i| &items[*i]["reason"]).collect();
        assert_eq!(reasons, sent, "{}", r.text);
        let name = format!("batch-bytes-receipt{}", query.len());
        let (ok, text) = bvs_tests::bvs_verify_saved("receipt", &r.text, &name, &key);
        assert!(ok, "{text}");
    }
}

#[test]
fn an_idempotency_key_replays_conflicts_and_never_duplicates() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let body = json!({"customerId": "cus_idem", "delta": 7, "reason": "once"});
    let send = |key: &str, body: &Value| {
        k.send(
            k.req(Method::POST, DELTA)
                .header("idempotency-key", key)
                .json(body),
        )
    };
    let first = send("key-1", &body);
    assert_eq!(first.status, 202, "{}", first.text);
    let again = send("key-1", &body);
    assert_eq!(again.status, 202);
    assert_eq!(again.body, first.body, "the original answer is replayed");
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    let other = send(
        "key-1",
        &json!({"customerId": "cus_idem", "delta": 8, "reason": "once"}),
    );
    assert_eq!(other.status, 409, "{}", other.text);
    assert_eq!(other.body["error"], "Conflict");

    // 20 concurrent identical requests: exactly one delta. A fresh key has
    // the whole sandbox burst (20) for them.
    let race_key = create_key(&api, &t.jwt, "test");
    let racer = api.keyed(&race_key);
    let body2 = json!({"customerId": "cus_conc", "delta": 1, "reason": "race"});
    let race = || {
        racer.send(
            racer
                .req(Method::POST, DELTA)
                .header("idempotency-key", "key-race")
                .json(&body2),
        )
    };
    let replies: Vec<Reply> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20).map(|_| s.spawn(race)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut anchors: Vec<String> = Vec::new();
    for r in &replies {
        assert_eq!(r.status, 202, "{}", r.text);
        if let Some(a) = r.body["data"]["anchorId"].as_str() {
            anchors.push(a.to_string());
        } else {
            assert_eq!(r.body["data"]["status"], "processing", "{}", r.text);
        }
    }
    anchors.dedup();
    assert_eq!(
        anchors.len(),
        1,
        "one anchorId across all replies: {anchors:?}"
    );
    eventually(WAIT, "the one delta to verify", || {
        let r = k.customer("cus_conc");
        (r.status == 200
            && r.body["data"]["totalDeltas"] == 1
            && r.body["data"]["pendingDeltas"] == 0)
            .then_some(())
    });
    let bad = send(&"k".repeat(256), &body);
    assert_eq!(bad.status, 400);
    assert!(bad.message().contains("Idempotency-Key"));
}

#[test]
fn customer_ledgers_list_and_detail() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit(&delta("cus_l1", "4"));
    k.emit_anchored(&delta("cus_l2", "-1.5"));
    let list = k.get(CUSTOMERS);
    assert_eq!(list.status, 200, "{}", list.text);
    let customers = list.body["data"]["customers"].as_array().unwrap();
    assert_eq!(customers.len(), 2);
    assert_eq!(list.body["data"]["pagination"]["total"], 2);
    let one = k.customer("cus_l2");
    assert_eq!(one.status, 200);
    assert_eq!(one.body["data"]["computedBalance"], json!(-1.5));
    assert_eq!(one.body["data"]["totalDeltas"], 1);
    assert_eq!(one.body["data"]["ledgerId"].as_str().unwrap().len(), 64);
    assert!(one.body["data"]["firstActivityAt"].is_string());
    // Deterministic: the same customerId always gives the same ledger id.
    assert_eq!(
        customers
            .iter()
            .find(|c| c["customerId"] == "cus_l2")
            .unwrap()["ledgerId"],
        one.body["data"]["ledgerId"]
    );
    assert_eq!(k.customer("nobody").status, 404);
}

#[test]
fn facts_are_queued_then_verified_and_deduplicated() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let content = "The contract was signed on 2026-11-01.";
    let r = k.submit_fact(&json!({"content": content, "metadata": {"doc": 1}}));
    assert_eq!(r.status, 202, "{}", r.text);
    let hash = r.body["data"]["contentHash"].as_str().unwrap().to_string();
    assert_eq!(hash, bvs_core::hash::content_hash(content).to_hex());
    assert_eq!(r.body["data"]["status"], "queued");
    let again = k.submit_fact(&json!({"content": content}));
    assert_eq!(again.body["data"]["contentHash"], hash.as_str());
    let verified = eventually(WAIT, "the fact to verify", || {
        let r = k.fact_verification(&hash);
        assert_eq!(r.status, 200);
        if r.body["data"]["verified"] == false {
            assert_eq!(r.body["data"]["status"], "pending");
        }
        (r.body["data"]["verified"] == true).then(|| r.body["data"].clone())
    });
    assert!(verified["verificationProof"]["timestamp"].is_string());
    let q = k.fact(&hash);
    assert_eq!(q.body["data"]["content"], content);
    assert_eq!(q.body["data"]["metadata"], json!({"doc": 1}));
    assert_eq!(q.body["data"]["verified"], true);
    assert_eq!(k.fact(&"0".repeat(64)).status, 404);
    assert_eq!(k.fact("nothex").status, 400);
    let huge = k.submit_fact(&json!({"content": "x".repeat(70_000)}));
    assert_eq!(huge.status, 413);
    let missing = k.submit_fact(&json!({}));
    assert_eq!(missing.status, 400);
    assert!(missing.message().contains("content"));
}

#[test]
fn tenants_never_see_each_others_ledgers() {
    let api = api();
    let a = new_tenant(&api);
    let b = new_tenant(&api);
    let (ka, kb) = (api.keyed(&a.test_key), api.keyed(&b.test_key));
    let d = ka.emit_anchored(&delta("cus_private", "3"));
    let anchor = d["anchorId"].as_str().unwrap();
    assert_eq!(kb.delta_status(anchor).status, 404);
    assert_eq!(kb.derive("cus_private", "").status, 404);
    assert_eq!(kb.customer("cus_private").status, 404);
    assert_eq!(kb.get(CUSTOMERS).body["data"]["customers"], json!([]));
    let fact = ka.submit_fact(&json!({"content": "a's secret"}));
    let hash = fact.body["data"]["contentHash"].as_str().unwrap();
    assert_eq!(kb.fact(hash).status, 404);
}

#[test]
fn balance_routes_need_a_valid_key() {
    let api = api();
    let unknown = api.keyed("pk_test_nope.nope");
    for (method, path) in [
        (Method::POST, DELTA),
        (Method::GET, "/api/v1/balance/derive/c"),
        (Method::GET, CUSTOMERS),
        (Method::POST, FACTS),
    ] {
        let r = api.send(api.req(method.clone(), path).json(&json!({})));
        assert_eq!(r.status, 401, "{path}: {}", r.text);
        let r = unknown.send(unknown.req(method, path).json(&json!({})));
        assert_eq!(r.status, 401, "{path}: {}", r.text);
    }
}

#[test]
fn test_and_live_keys_only_ever_reach_their_own_environment() {
    let api = api();
    let t = new_tenant_on_plan(&api, "pilot");
    let live_key = provision_production(&api, &t);
    let (test, live) = (api.keyed(&t.test_key), api.keyed(&live_key));
    let in_sandbox = test.emit(&delta("cus_env", "1"));
    let in_production = live.emit(&delta("cus_env", "100"));
    test.wait_anchored(in_sandbox["anchorId"].as_str().unwrap());
    live.wait_anchored(in_production["anchorId"].as_str().unwrap());

    // Each key sees only its own environment's ledger and deltas.
    assert_eq!(
        test.derive("cus_env", "").body["data"]["computedBalance"],
        json!(1)
    );
    assert_eq!(
        live.derive("cus_env", "").body["data"]["computedBalance"],
        json!(100)
    );
    let cross = test.delta_status(in_production["anchorId"].as_str().unwrap());
    assert_eq!(cross.status, 404);
    let cross = live.delta_status(in_sandbox["anchorId"].as_str().unwrap());
    assert_eq!(cross.status, 404);
    // Each environment has its own log: the production proof is in the production log.
    let v = api.get(&format!(
        "/api/v1/verify/{}",
        in_production["itemsRoot"].as_str().unwrap()
    ));
    assert_eq!(v.body["data"]["summary"]["environment"], "production");
    let v = api.get(&format!(
        "/api/v1/verify/{}",
        in_sandbox["itemsRoot"].as_str().unwrap()
    ));
    assert_eq!(v.body["data"]["summary"]["environment"], "sandbox");
}
