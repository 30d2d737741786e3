//! Idempotency-Key on every POST the SDKs send (issue 29), beyond emit and
//! batch: a checkpoint, a fact, an invitation, a counterparty key's
//! registration and a signed statement, each retried with its key, replay
//! the first answer (`idempotent-replayed: true`) and make no second
//! object; the same key with another body is 409 and never runs.

use bvs_core::agreement::{
    counterparty_key, sign, BalanceStatement, CheckpointRef, KeyBinding, Origin, Statement,
};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::Period;
use bvs_tests::api;
use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use reqwest::Method;
use serde_json::{json, Value};

const SEED: [u8; 32] = [11; 32];
const NAME: &str = "customer";

/// POSTs `body` to `path` with `Idempotency-Key: key` (and the API key,
/// when given).
fn post_keyed(api: &Api, api_key: Option<&str>, path: &str, key: &str, body: &Value) -> Reply {
    let mut rb = api
        .req(Method::POST, path)
        .header("idempotency-key", key)
        .json(body);
    if let Some(k) = api_key {
        rb = rb.header("x-api-key", k);
    }
    api.send(rb)
}

/// The retry replays the first answer, marked as such.
fn assert_replayed(first: &Reply, again: &Reply) {
    assert_eq!(again.status, first.status, "{}", again.text);
    assert_eq!(again.body, first.body, "the first answer is replayed");
    assert_eq!(
        again
            .headers
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true"),
        "{:?}",
        again.headers
    );
}

#[test]
fn every_post_the_sdks_send_replays_under_its_idempotency_key() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let key = Some(t.test_key.as_str());
    let customer = "cus_idem_writes";
    let mut last = Value::Null;
    for amount in [40, 2] {
        last = k.emit(&Delta::new(customer, amount, "idempotent writes"));
    }
    k.wait_anchored(last["anchorId"].as_str().unwrap());

    // A checkpoint: the retry replays it, and there is one checkpoint.
    let body = json!({ "customerId": customer });
    let path = "/api/v1/balance/checkpoint";
    let first = post_keyed(&api, key, path, "cp-1", &body);
    assert_eq!(first.status, 202, "{}", first.text);
    let again = post_keyed(&api, key, path, "cp-1", &body);
    assert_replayed(&first, &again);
    let listed = k.checkpoints(&format!("customerId={customer}"));
    assert_eq!(
        listed.body["data"]["pagination"]["total"], 1,
        "{}",
        listed.text
    );
    let other = post_keyed(
        &api,
        key,
        path,
        "cp-1",
        &json!({ "customerId": "cus_other" }),
    );
    assert_eq!(other.status, 409, "{}", other.text);
    assert_eq!(
        other.body["code"], "idempotency_key_reused",
        "{}",
        other.text
    );
    let cp_id = first.body["data"]["checkpointId"]
        .as_str()
        .unwrap()
        .to_string();
    let committed = k.wait_committed(&cp_id);

    // A fact: the retry replays "queued", not "already recorded".
    let path = "/api/v1/facts";
    let body = json!({ "content": "an idempotent fact" });
    let first = post_keyed(&api, key, path, "fact-1", &body);
    assert_eq!(first.status, 202, "{}", first.text);
    let again = post_keyed(&api, key, path, "fact-1", &body);
    assert_replayed(&first, &again);
    let unkeyed = k.submit_fact(&body);
    assert_ne!(
        unkeyed.body["data"]["message"], first.body["data"]["message"],
        "{}",
        unkeyed.text
    );

    // An invitation: the retry gets the same token; a new key a new one.
    let path = format!("/api/v1/balance/customers/{customer}/invitations");
    let first = post_keyed(&api, key, &path, "inv-1", &json!({}));
    assert_eq!(first.status, 201, "{}", first.text);
    let again = post_keyed(&api, key, &path, "inv-1", &json!({}));
    assert_replayed(&first, &again);
    let fresh = post_keyed(&api, key, &path, "inv-2", &json!({}));
    assert_ne!(fresh.body["data"]["token"], first.body["data"]["token"]);
    let token = first.body["data"]["token"].as_str().unwrap().to_string();
    let origin = first.body["data"]["origin"].as_str().unwrap().to_string();
    let ledger = Hash32::parse(first.body["data"]["ledgerId"].as_str().unwrap()).unwrap();

    // The key registration (public, single-use token): the retry replays
    // its 201 instead of "already used".
    let counterparty = counterparty_key(NAME, &SEED).unwrap();
    let binding = Statement::Key(
        KeyBinding::new(Origin::parse(&origin).unwrap(), ledger, &counterparty).unwrap(),
    );
    let body = json!({ "token": token, "statement": sign(&binding, NAME, &SEED).unwrap() });
    let path = "/api/v1/agreement/keys";
    let first = post_keyed(&api, None, path, "reg-1", &body);
    assert_eq!(first.status, 201, "{}", first.text);
    let again = post_keyed(&api, None, path, "reg-1", &body);
    assert_replayed(&first, &again);
    let unkeyed = api.post(path, &body);
    assert_eq!(unkeyed.status, 410, "{}", unkeyed.text);

    // A balance statement (public): the retry replays its 201.
    let reference = CheckpointRef {
        origin: Origin::parse(&origin).unwrap(),
        ledger,
        period: Period::parse(committed["period"].as_str().unwrap()).unwrap(),
        root: Hash32::parse(committed["merkleRoot"].as_str().unwrap()).unwrap(),
        deltas: 2,
    };
    let agree = Statement::Balance(BalanceStatement {
        checkpoint: reference,
        balance: Amount::from_int(42).unwrap(),
    });
    let body = json!({ "statement": sign(&agree, NAME, &SEED).unwrap() });
    let path = "/api/v1/agreement/statements";
    let first = post_keyed(&api, None, path, "stmt-1", &body);
    assert_eq!(first.status, 201, "{}", first.text);
    let again = post_keyed(&api, None, path, "stmt-1", &body);
    assert_replayed(&first, &again);
    let unkeyed = api.post(path, &body);
    assert_eq!(unkeyed.status, 200, "{}", unkeyed.text);
}
