//! Conditions (issue 43, docs/balance.md "Conditions") through `wrangler
//! dev`: a debit below its floor (its own, or the tenant's default for the
//! asset) ends FAILED with `failure.code` `balance_below_floor`, is counted
//! in no balance, its month's quota is given back, `verification.failed`
//! is delivered, and its refusal is a log item the customer's receipt and
//! derive list and `bvs-verify` checks (and fails once tampered); of two
//! debits racing with the same `expectedSequence` exactly one is VERIFIED;
//! bad conditions are 400s naming the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::api;
use bvs_tests::client::Keyed;
use bvs_tests::eventually;
use bvs_tests::ledger::{DELTA, WAIT};
use bvs_tests::receiver::{wait_event, Receiver};
use bvs_tests::tenant::{create_webhook, new_tenant_on_plan};
use serde_json::{json, Value};

/// `bvs-verify receipt` over a saved receipt, against the log's key.
fn cli_receipt(text: &str, name: &str) -> (bool, String) {
    bvs_tests::bvs_verify_saved("receipt", text, name, &bvs_tests::log::log_key(&api()))
}

fn emit(k: &Keyed<'_>, body: Value) -> String {
    let r = k.post(DELTA, &body);
    assert_eq!(r.status, 202, "{}", r.text);
    r.body["data"]["anchorId"].as_str().unwrap().to_string()
}

/// Polls a delta until it leaves QUEUED; returns its status `data`.
fn settled(k: &Keyed<'_>, anchor: &str) -> Value {
    eventually(WAIT, "the delta to be sequenced", || {
        let r = k.delta_status(anchor);
        assert_eq!(r.status, 200, "{}", r.text);
        let d = r.body["data"].clone();
        (d["status"] != "QUEUED").then_some(d)
    })
}

#[test]
fn a_debit_below_its_floor_is_refused_uncounted_and_proven() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let rx = Receiver::start(&[]);
    let hook = create_webhook(
        &api,
        &t.jwt,
        &rx.url("/events"),
        &["verification.failed"],
        "refusals",
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let k = api.keyed(&t.test_key);
    let c = "cus_floor";
    let credit = emit(
        &k,
        json!({"customerId": c, "delta": 10, "asset": "USD/2", "reason": "top-up"}),
    );
    k.wait_anchored(&credit);
    let used = || bvs_tests::tenant::sandbox_used(&api, &t.jwt);
    let used_before = used();

    // 10 − 12 would be −2: refused. 10 − 4 stays ≥ 0: counted.
    let floor = json!({"balanceAtLeast": 0});
    let refused = emit(
        &k,
        json!({"customerId": c, "delta": -12, "asset": "USD/2", "reason": "spend", "conditions": floor}),
    );
    let status = settled(&k, &refused);
    assert_eq!(status["status"], "FAILED", "{status}");
    assert_eq!(status["failure"]["code"], "balance_below_floor", "{status}");
    assert_eq!(status["conditions"]["balanceAtLeast"], json!(0), "{status}");
    assert!(status["ledgerSeq"].is_null(), "{status}");
    let ok = emit(
        &k,
        json!({"customerId": c, "delta": -4, "asset": "USD/2", "reason": "spend", "conditions": floor}),
    );
    k.wait_anchored(&ok);

    // Counted nowhere: derive's balance and count, and the customer's.
    let d = k.derive(c, "asset=USD/2");
    assert_eq!(d.status, 200, "{}", d.text);
    assert_eq!(d.body["data"]["computedBalance"], json!(6), "{}", d.text);
    assert_eq!(d.body["data"]["pagination"]["total"], 2, "{}", d.text);
    let refusals = d.body["data"]["refusals"].as_array().unwrap();
    assert_eq!(refusals.len(), 1, "{}", d.text);
    assert_eq!(refusals[0]["anchorId"], refused.as_str());
    assert_eq!(refusals[0]["sequence"], 1);
    assert_eq!(refusals[0]["balance"], json!(10));
    let customer = k.customer(c);
    let balances = customer.body["data"]["balances"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        balances[0]["computedBalance"],
        json!(6),
        "{}",
        customer.text
    );
    assert_eq!(balances[0]["deltasCount"], 2);
    // The default asset of a tenant that never set a floor is untouched.
    assert!(k.derive(c, "").body["data"].get("refusals").is_none());

    // The quota charged for it is given back (two more emitted, one
    // counted).
    assert_eq!(used(), used_before + 1);

    // `verification.failed`, signed, with the failure.
    let got = wait_event(&api, &rx, "verification.failed");
    let data = &got.json()["data"];
    assert_eq!(data["anchorId"], refused.as_str(), "{data}");
    assert_eq!(data["failure"]["code"], "balance_below_floor");
    assert_eq!(data["status"], "FAILED");

    // The receipt lists the refusal with its proof; bvs-verify checks it.
    let r = k.receipt(c, "asset=USD/2");
    assert_eq!(r.status, 200, "{}", r.text);
    let receipt = &r.body["data"];
    assert_eq!(receipt["finalBalance"], json!(6), "{}", r.text);
    assert_eq!(receipt["deltasCount"], 2);
    assert_eq!(receipt["startingSequence"], 0);
    let listed = receipt["refusals"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["code"], "balance_below_floor");
    assert!(
        listed[0]["inclusionProof"].as_array().is_some(),
        "{}",
        r.text
    );
    let hashes: Vec<&Value> = receipt["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["itemHash"])
        .collect();
    assert!(
        !hashes.contains(&&listed[0]["itemHash"]),
        "a refused delta is listed as counted"
    );
    let (ok, text) = cli_receipt(&r.text, "conditions-receipt");
    assert!(ok, "{text}");
    assert!(text.contains("refusals[0]"), "{text}");
    // A moved balance, or a refusal claimed where the floor was not met,
    // fails.
    let moved = r.text.replacen("\"balance\":10", "\"balance\":11", 1);
    assert_ne!(moved, r.text);
    let (ok, text) = cli_receipt(&moved, "conditions-moved");
    assert!(!ok, "a moved balance must fail: {text}");
    let mut counted: Value = serde_json::from_str(&r.text).unwrap();
    counted["data"]["refusals"][0]["sequence"] = json!(2);
    let (ok, text) = cli_receipt(&counted.to_string(), "conditions-seq");
    assert!(!ok, "a moved sequence must fail: {text}");
}

#[test]
fn a_tenant_default_floor_binds_debits_without_their_own() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let put = |asset: &str, body: Value| {
        k.send(
            k.req(
                reqwest::Method::PUT,
                &format!("/api/v1/balance/assets/{asset}"),
            )
            .json(&body),
        )
    };
    // An unknown code needs its precision; a floor too precise is a 400.
    let r = put("PTS", json!({"balanceAtLeast": 0}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.problem_fields(), ["asset"], "{}", r.text);
    let r = put("PTS", json!({"balanceAtLeast": 0.5, "precision": 0}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.problem_fields(), ["balanceAtLeast"], "{}", r.text);
    let r = put("PTS", json!({"balanceAtLeast": -5, "precision": 0}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["asset"], "PTS/0");
    assert_eq!(r.body["data"]["balanceAtLeast"], json!(-5));
    let listed = k.get("/api/v1/balance/assets");
    assert_eq!(
        listed.body["data"]["assets"][0]["balanceAtLeast"],
        json!(-5),
        "{}",
        listed.text
    );

    let c = "cus_default_floor";
    let a = emit(
        &k,
        json!({"customerId": c, "delta": 3, "asset": "PTS/0", "reason": "grant"}),
    );
    k.wait_anchored(&a);
    // 3 − 9 = −6 < −5: refused by the tenant's floor; 3 − 8 = −5 is not.
    let refused = emit(
        &k,
        json!({"customerId": c, "delta": -9, "asset": "PTS/0", "reason": "use"}),
    );
    let s = settled(&k, &refused);
    assert_eq!(s["status"], "FAILED", "{s}");
    assert_eq!(s["failure"]["code"], "balance_below_floor");
    let b = emit(
        &k,
        json!({"customerId": c, "delta": -8, "asset": "PTS/0", "reason": "use"}),
    );
    k.wait_anchored(&b);
    // A debit's own floor wins over the tenant's.
    let own = emit(
        &k,
        json!({"customerId": c, "delta": -100, "asset": "PTS/0", "reason": "overdraft",
               "conditions": {"balanceAtLeast": -1000}}),
    );
    k.wait_anchored(&own);
    let r = k.receipt(c, "asset=PTS/0");
    assert_eq!(r.body["data"]["finalBalance"], json!(-105), "{}", r.text);
    assert_eq!(
        r.body["data"]["refusals"][0]["tenantDefault"], true,
        "{}",
        r.text
    );
    let (ok, text) = cli_receipt(&r.text, "conditions-default");
    assert!(ok, "{text}");
    // The default asset's floor, named `default`; null clears it.
    let r = put("default", json!({"balanceAtLeast": 0}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["asset"], "default");
    let plain = emit(&k, json!({"customerId": c, "delta": -1, "reason": "plain"}));
    assert_eq!(settled(&k, &plain)["status"], "FAILED");
    let r = put("default", json!({"balanceAtLeast": null}));
    assert_eq!(r.status, 200, "{}", r.text);
    let plain = emit(&k, json!({"customerId": c, "delta": -1, "reason": "plain"}));
    k.wait_anchored(&plain);
}

#[test]
fn of_two_debits_racing_on_one_expected_sequence_exactly_one_is_verified() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let c = "cus_lock";
    let a = emit(
        &k,
        json!({"customerId": c, "delta": 100, "reason": "top-up"}),
    );
    k.wait_anchored(&a);
    let seq = k.derive(c, "").body["data"]["pagination"]["total"]
        .as_u64()
        .unwrap();
    assert_eq!(seq, 1);
    // Two writers read sequence 1 and debit at once (here: in one batch,
    // so one round sees both, and apart, racing).
    let lock = json!({"expectedSequence": seq});
    let batch = k.batch(&[
        json!({"customerId": c, "delta": -30, "reason": "writer a", "conditions": lock}),
        json!({"customerId": c, "delta": -50, "reason": "writer b", "conditions": lock}),
    ]);
    assert_eq!(batch.status, 202, "{}", batch.text);
    let anchors: Vec<String> = batch.body["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["anchorId"].as_str().unwrap().to_string())
        .collect();
    let statuses: Vec<Value> = anchors.iter().map(|a| settled(&k, a)).collect();
    let verified = statuses
        .iter()
        .filter(|s| s["status"] == "ANCHORED")
        .count();
    assert_eq!(verified, 1, "{statuses:?}");
    let failed = statuses.iter().find(|s| s["status"] == "FAILED").unwrap();
    assert_eq!(failed["failure"]["code"], "sequence_mismatch", "{failed}");
    // Racing apart: both emitted before either is sequenced.
    let seq = 2;
    let lock = json!({"expectedSequence": seq});
    let x = emit(
        &k,
        json!({"customerId": c, "delta": -1, "reason": "x", "conditions": lock}),
    );
    let y = emit(
        &k,
        json!({"customerId": c, "delta": -2, "reason": "y", "conditions": lock}),
    );
    let both = [settled(&k, &x), settled(&k, &y)];
    assert_eq!(
        both.iter().filter(|s| s["status"] == "ANCHORED").count(),
        1,
        "{both:?}"
    );
    let d = k.derive(c, "");
    assert_eq!(d.body["data"]["pagination"]["total"], 3, "{}", d.text);
    assert_eq!(
        d.body["data"]["refusals"].as_array().unwrap().len(),
        2,
        "{}",
        d.text
    );
    let r = k.receipt(c, "");
    let (ok, text) = cli_receipt(&r.text, "conditions-lock");
    assert!(ok, "{text}");
}

#[test]
fn bad_conditions_are_refused_with_the_field_named() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let base = |conditions: Value| json!({"customerId": "cus_bad", "delta": -1, "asset": "USD/2", "reason": "x", "conditions": conditions});
    for (conditions, field) in [
        (json!("floor"), "conditions"),
        (json!({"balanceAtLeast": "0"}), "conditions.balanceAtLeast"),
        (
            json!({"balanceAtLeast": 0.001}),
            "conditions.balanceAtLeast",
        ),
        (
            json!({"expectedSequence": -1}),
            "conditions.expectedSequence",
        ),
        (
            json!({"expectedSequence": 1.5}),
            "conditions.expectedSequence",
        ),
        (json!({"balanceAtleast": 0}), "conditions.balanceAtleast"),
    ] {
        let r = k.post(DELTA, &base(conditions.clone()));
        assert_eq!(r.status, 400, "{conditions}: {}", r.text);
        assert_eq!(r.problem_fields(), [field], "{conditions}: {}", r.text);
    }
    let r = k.batch(&[base(json!({"expectedSequence": "x"})), base(json!({}))]);
    assert_eq!(r.status, 202, "{}", r.text);
    let first = &r.body["data"]["results"][0];
    assert_eq!(first["status"], "FAILED", "{}", r.text);
    assert!(
        first
            .to_string()
            .contains("deltas[0].conditions.expectedSequence"),
        "{}",
        r.text
    );
    // An empty object asks nothing: the item hash is today's.
    let plain = k.post(
        DELTA,
        &json!({"customerId": "cus_bad", "delta": 1, "reason": "x", "conditions": {}}),
    );
    assert_eq!(plain.status, 202, "{}", plain.text);
}
