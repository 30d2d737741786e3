//! Pinpointing compare (issue 19): `POST /api/v1/balance/compare` with the
//! caller's own list of deltas names the first missing, extra or changed
//! one, the balance both agree on before it and the difference after it,
//! at 10 deltas and at the 10,000-entry limit. Its own binary, so its own
//! `wrangler dev`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::{Keyed, Reply};
use bvs_tests::ledger::COMPARE;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{api, eventually};
use serde_json::{json, Value};

const BATCH: usize = 100;

/// One seeded delta as the service answered it.
#[derive(Clone)]
struct Seeded {
    item_hash: String,
    anchor_id: String,
    reference_id: String,
    amount: i64,
}

fn amount_of(k: usize) -> i64 {
    (k as i64 % 97) - 40 + i64::from(k % 97 == 40)
}

/// Seeds `n` deltas on `customer` in order (sequential batches, so ledger
/// order is submission order) and waits until all are verified.
fn seed(k: &Keyed<'_>, customer: &str, n: usize) -> Vec<Seeded> {
    let mut out = Vec::with_capacity(n);
    for start in (0..n).step_by(BATCH) {
        let items: Vec<Value> = (start..n.min(start + BATCH))
            .map(|i| json!({"customerId": customer, "delta": amount_of(i), "reason": "pinpoint seed", "referenceId": format!("ref-{i}")}))
            .collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
        for (j, res) in r.body["data"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            out.push(Seeded {
                item_hash: res["itemHash"].as_str().unwrap().to_string(),
                anchor_id: res["anchorId"].as_str().unwrap().to_string(),
                reference_id: format!("ref-{}", start + j),
                amount: amount_of(start + j),
            });
        }
    }
    eventually(
        Duration::from_secs(600),
        "the seeded deltas to verify",
        || {
            let r = k.customer(customer);
            (r.body["data"]["totalDeltas"] == n as u64).then_some(())
        },
    );
    out
}

/// The caller's copy: each entry named by a rotating kind of id.
fn copy(seeded: &[Seeded]) -> Vec<Value> {
    seeded
        .iter()
        .enumerate()
        .map(|(k, d)| match k % 3 {
            0 => json!({"itemHash": d.item_hash, "amount": d.amount}),
            1 => json!({"anchorId": d.anchor_id, "amount": d.amount}),
            _ => json!({"referenceId": d.reference_id, "amount": d.amount}),
        })
        .collect()
}

fn compare(k: &Keyed<'_>, customer: &str, deltas: &[Value], extra: Value) -> Reply {
    let mut body =
        json!({"customerId": customer, "yourBalance": 0, "theirBalance": 0, "deltas": deltas});
    for (name, v) in extra.as_object().unwrap() {
        body[name] = v.clone();
    }
    k.post(COMPARE, &body)
}

fn sum(seeded: &[Seeded]) -> i64 {
    seeded.iter().map(|d| d.amount).sum()
}

/// Asserts the missing, extra and changed cases around `at` on `seeded`.
fn pinpoints_all_three(k: &Keyed<'_>, customer: &str, seeded: &[Seeded], at: usize) {
    let list = copy(seeded);
    let same = compare(k, customer, &list, json!({}));
    assert_eq!(same.status, 200, "{}", same.text);
    let p = &same.body["data"]["pinpoint"];
    assert_eq!(p["agrees"], true, "{p}");
    assert_eq!(p["comparedDeltas"], seeded.len() as u64);
    assert_eq!(p["serviceBalance"], json!(sum(seeded)));
    assert!(p.get("divergence").is_none() || p["divergence"].is_null());

    // Missing: the caller lacks delta `at`.
    let mut missing = list.clone();
    missing.remove(at);
    let r = compare(k, customer, &missing, json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"]["pinpoint"]["divergence"];
    assert_eq!(d["kind"], "missing", "{d}");
    assert_eq!(d["agreedDeltas"], at as u64);
    assert_eq!(d["agreedBalance"], json!(sum(&seeded[..at])));
    assert_eq!(d["service"]["anchorId"], json!(seeded[at].anchor_id));
    assert_eq!(d["service"]["itemHash"], json!(seeded[at].item_hash));
    assert_eq!(d["differenceAfter"], json!(-seeded[at].amount));
    assert_eq!(
        r.body["data"]["pinpoint"]["difference"],
        json!(-seeded[at].amount)
    );

    // Extra: the caller has a delta the ledger does not (the list stays
    // within the limit: the last entry is dropped, which the walk never
    // reaches).
    let mut extra = list.clone();
    extra.insert(at, json!({"referenceId": "mine-only", "amount": 7}));
    extra.pop();
    let r = compare(k, customer, &extra, json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"]["pinpoint"]["divergence"];
    assert_eq!(d["kind"], "extra", "{d}");
    assert_eq!(d["agreedDeltas"], at as u64);
    assert_eq!(d["agreedBalance"], json!(sum(&seeded[..at])));
    assert_eq!(d["callerIndex"], at as u64);
    assert_eq!(
        d["callerId"],
        json!({"by": "referenceId", "id": "mine-only"})
    );
    assert_eq!(d["differenceAfter"], json!(7));
    assert!(d.get("service").is_none() || d["service"].is_null());

    // Changed: same delta, another amount.
    let mut changed = list.clone();
    changed[at] = json!({"anchorId": seeded[at].anchor_id, "amount": seeded[at].amount + 1000});
    let r = compare(k, customer, &changed, json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"]["pinpoint"]["divergence"];
    assert_eq!(d["kind"], "changed", "{d}");
    assert_eq!(d["agreedDeltas"], at as u64);
    assert_eq!(d["agreedBalance"], json!(sum(&seeded[..at])));
    assert_eq!(d["callerAmount"], json!(seeded[at].amount + 1000));
    assert_eq!(d["service"]["amount"], json!(seeded[at].amount));
    assert_eq!(d["differenceAfter"], json!(1000));
    assert_eq!(r.body["data"]["pinpoint"]["difference"], json!(1000));
}

#[test]
fn compare_pinpoints_a_missing_an_extra_and_a_changed_delta_among_10() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let seeded = seed(&k, "cus_pin10", 10);
    pinpoints_all_three(&k, "cus_pin10", &seeded, 4);

    // The spec's fields are unchanged alongside the pinpoint.
    let r = compare(
        &k,
        "cus_pin10",
        &copy(&seeded),
        json!({"yourBalance": sum(&seeded), "startingBalance": 0}),
    );
    assert_eq!(r.body["data"]["computedBalance"], json!(sum(&seeded)));
    assert_eq!(r.body["data"]["matchesYours"], true);
    assert_eq!(r.body["data"]["matchesTheirs"], false);

    // From a delta both agree on: the walk starts after it, balances
    // carry on from the ledger's balance there plus startingBalance.
    let after = &seeded[5];
    let mut rest = copy(&seeded[6..]);
    rest.remove(2);
    let r = compare(
        &k,
        "cus_pin10",
        &rest,
        json!({"deltasAfter": after.anchor_id, "startingBalance": 100}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let p = &r.body["data"]["pinpoint"];
    assert_eq!(p["startingDeltas"], 6);
    assert_eq!(p["comparedDeltas"], 4);
    assert_eq!(p["divergence"]["kind"], "missing");
    assert_eq!(p["divergence"]["agreedDeltas"], 8);
    assert_eq!(
        p["divergence"]["agreedBalance"],
        json!(100 + sum(&seeded[..8]))
    );
    assert_eq!(
        p["divergence"]["service"]["anchorId"],
        json!(seeded[8].anchor_id)
    );
}

#[test]
fn compare_refuses_lists_it_cannot_pinpoint_naming_the_field() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let seeded = seed(&k, "cus_pinbad", 3);
    let list = copy(&seeded);

    let field_of = |r: &Reply| -> String {
        assert_eq!(r.status, 400, "{}", r.text);
        r.body["field"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| r.body["errors"][0]["field"].as_str().unwrap().to_string())
    };
    // Over the limit: 400 naming deltas.
    let long: Vec<Value> = (0..10_001)
        .map(|i| json!({"referenceId": format!("x{i}"), "amount": 1}))
        .collect();
    let r = compare(&k, "cus_pinbad", &long, json!({}));
    assert_eq!(field_of(&r), "deltas");
    assert!(r.message().contains("10000"), "{}", r.text);
    // An entry without any id, or without an amount, is named.
    let r = compare(&k, "cus_pinbad", &[json!({"amount": 1})], json!({}));
    assert_eq!(field_of(&r), "deltas[0].itemHash");
    let r = compare(
        &k,
        "cus_pinbad",
        &[list[0].clone(), json!({"anchorId": seeded[1].anchor_id})],
        json!({}),
    );
    assert_eq!(field_of(&r), "deltas[1].amount");
    // The same delta twice.
    let r = compare(
        &k,
        "cus_pinbad",
        &[list[0].clone(), list[0].clone()],
        json!({}),
    );
    assert_eq!(field_of(&r), "deltas[1]");
    // deltas without customerId.
    let r = k.post(
        COMPARE,
        &json!({"yourBalance": 0, "theirBalance": 0, "deltas": list}),
    );
    assert_eq!(field_of(&r), "customerId");
    // An unknown start is 404.
    let r = compare(&k, "cus_pinbad", &list, json!({"deltasAfter": "anc_nope"}));
    assert_eq!(r.status, 404, "{}", r.text);
    assert!(r.message().contains("deltasAfter"), "{}", r.text);
}

#[test]
fn compare_takes_derives_own_entries_back_with_delta_for_amount() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let seeded = seed(&k, "cus_echo", 3);

    // Derive's deltas, sent back as they came (`delta`, not `amount`).
    let derived = k.derive("cus_echo", "");
    assert_eq!(derived.status, 200, "{}", derived.text);
    let entries = derived.body["data"]["deltas"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 3);
    assert!(entries[0].get("amount").is_none(), "{}", derived.text);
    let r = compare(&k, "cus_echo", &entries, json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["data"]["pinpoint"]["agrees"],
        json!(true),
        "{}",
        r.text
    );

    // Both given and equal is fine; both given and unequal names `delta`.
    let mut both = entries.clone();
    both[1]["amount"] = json!(seeded[1].amount);
    let r = compare(&k, "cus_echo", &both, json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    both[1]["amount"] = json!(seeded[1].amount + 1);
    let r = compare(&k, "cus_echo", &both, json!({}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["field"], json!("deltas[1].delta"), "{}", r.text);
}

#[test]
fn compare_pinpoints_a_missing_an_extra_and_a_changed_delta_among_10000() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let seeded = seed(&k, "cus_pin10k", 10_000);
    pinpoints_all_three(&k, "cus_pin10k", &seeded, 7_001);
}
