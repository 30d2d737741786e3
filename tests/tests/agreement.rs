//! Two-party agreement over HTTP (issue 19): a vendor's invitation, the
//! customer's counterparty key registered through it (single use), signed
//! balance and dispute statements about a committed checkpoint, each
//! refused with a named reason when tampered, recorded in the log as an
//! item, shown in the public verify answer and told to the vendor by a
//! `checkpoint.cosigned` / `checkpoint.disputed` webhook.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Idempotency-Key on every POST the SDKs send (issue 29): its own file,
// in this binary's wrangler dev.
#[path = "agreement/idempotent_writes.rs"]
mod idempotent_writes;

use bvs_core::agreement::{
    counterparty_key, item_hash, sign, BalanceStatement, CheckpointRef, Dispute, KeyBinding,
    Origin, Statement,
};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::pinpoint::{DivergenceKind, EntryId};
use bvs_core::types::Period;
use bvs_tests::api;
use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::Delta;
use bvs_tests::receiver::{wait_event, Receiver};
use bvs_tests::tenant::{agreement_webhook, new_tenant_on_plan};
use serde_json::{json, Value};

const SEED: [u8; 32] = [7; 32];
const OTHER_SEED: [u8; 32] = [9; 32];
const NAME: &str = "customer";

fn post(api: &Api, path: &str, body: &Value) -> Reply {
    api.post(path, body)
}

/// 422 `statement_rejected` whose message names `reason`.
fn assert_rejected(r: &Reply, reason: &str) {
    assert_eq!(r.status, 422, "{}", r.text);
    assert_eq!(r.body["code"], "statement_rejected", "{}", r.text);
    assert!(
        r.message().contains(&format!("({reason})")),
        "expected reason {reason}: {}",
        r.text
    );
}

#[test]
fn a_customer_registers_a_key_agrees_and_disputes_and_tampering_is_named() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let rx = Receiver::start(&[]);
    let hook = agreement_webhook(&api, &t.jwt, &rx.url("/agree"), "agreement");
    let secret = hook.body["data"]["secret"].as_str().unwrap().to_string();

    let customer = "cus_agree";
    let mut last = Value::Null;
    for amount in [100, -30, 5] {
        last = k.emit(&Delta::new(customer, amount, "agreement test"));
    }
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let cp = k.checkpoint(&json!({ "customerId": customer }));
    assert_eq!(cp.status, 202, "{}", cp.text);
    let cp_id = cp.body["data"]["checkpointId"]
        .as_str()
        .unwrap()
        .to_string();
    let committed = k.wait_committed(&cp_id);
    let root = committed["merkleRoot"].as_str().unwrap().to_string();
    let period = committed["period"].as_str().unwrap().to_string();
    assert_eq!(committed["deltaCount"], 3);

    // The vendor invites; the token is in the URL's fragment.
    let inv = k.post(
        &format!("/api/v1/balance/customers/{customer}/invitations"),
        &json!({}),
    );
    assert_eq!(inv.status, 201, "{}", inv.text);
    let url = inv.body["data"]["invitationUrl"].as_str().unwrap();
    let token = inv.body["data"]["token"].as_str().unwrap().to_string();
    assert!(url.ends_with(&format!("/agree#{token}")), "{url}");
    assert!(token.starts_with("inv_test_"), "{token}");
    assert_eq!(
        k.post("/api/v1/balance/customers/nobody/invitations", &json!({}))
            .status,
        404
    );

    // The customer opens it (public) and builds its key statement.
    let opened = post(
        &api,
        "/api/v1/agreement/invitation",
        &json!({ "token": token }),
    );
    assert_eq!(opened.status, 200, "{}", opened.text);
    let origin = opened.body["data"]["origin"].as_str().unwrap().to_string();
    let ledger_id = opened.body["data"]["ledgerId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(ledger_id, inv.body["data"]["ledgerId"]);
    let ledger = Hash32::parse(&ledger_id).unwrap();
    let key = counterparty_key(NAME, &SEED).unwrap();
    let binding = |origin: &str, ledger: Hash32, key: &str| {
        Statement::Key(KeyBinding::new(Origin::parse(origin).unwrap(), ledger, key).unwrap())
    };
    let register = |statement: &str, token: &str| {
        post(
            &api,
            "/api/v1/agreement/keys",
            &json!({ "token": token, "statement": statement }),
        )
    };

    // Tampered key statements are refused by name and keep the token live.
    let other_key = counterparty_key(NAME, &OTHER_SEED).unwrap();
    let by_other = sign(&binding(&origin, ledger, &key), NAME, &OTHER_SEED).unwrap();
    assert_rejected(&register(&by_other, &token), "no_signature_by_key");
    let other_ledger = Hash32::digest(b"another ledger");
    let wrong_ledger = sign(&binding(&origin, other_ledger, &key), NAME, &SEED).unwrap();
    assert_rejected(&register(&wrong_ledger, &token), "ledger_mismatch");
    let wrong_origin = sign(&binding("example.org/elsewhere", ledger, &key), NAME, &SEED).unwrap();
    assert_rejected(&register(&wrong_origin, &token), "origin_mismatch");
    let good = sign(&binding(&origin, ledger, &key), NAME, &SEED).unwrap();
    let edited = good.replacen(
        &format!("ledger {ledger_id}"),
        &format!("ledger {}", other_ledger.to_hex()),
        1,
    );
    assert_rejected(&register(&edited, &token), "invalid_signature");
    let bad_token = register(&good, "inv_test_nope");
    assert_eq!(bad_token.status, 410, "{}", bad_token.text);
    assert_eq!(bad_token.body["code"], "invitation_invalid");

    // The real registration uses the invitation up.
    let reg = register(&good, &token);
    assert_eq!(reg.status, 201, "{}", reg.text);
    assert_eq!(reg.body["data"]["counterpartyKey"], json!(key));
    assert_eq!(
        reg.body["data"]["itemHash"],
        json!(item_hash(&good).to_hex())
    );
    let again = register(&good, &token);
    assert_eq!(again.status, 410, "{}", again.text);
    let _ = other_key;

    // The binding is a log item: provable through the facts routes.
    k.wait_fact_verified(&item_hash(&good).to_hex());

    // The public answer for the checkpoint says what to sign.
    let verify = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(verify.status, 200, "{}", verify.text);
    let agreement = &verify.body["data"]["agreement"];
    assert_eq!(agreement["counterpartyKey"], json!(key));
    assert_eq!(agreement["balance"], json!(75));
    assert_eq!(agreement["deltaCount"], 3);
    let reference = CheckpointRef {
        origin: Origin::parse(&origin).unwrap(),
        ledger,
        period: Period::parse(&period).unwrap(),
        root: Hash32::parse(&root).unwrap(),
        deltas: 3,
    };
    let balance_of = |units: i64, reference: CheckpointRef| {
        Statement::Balance(BalanceStatement {
            checkpoint: reference,
            balance: Amount::from_int(units).unwrap(),
        })
    };
    assert_eq!(
        agreement["balanceStatement"],
        json!(balance_of(75, reference.clone()).to_text())
    );

    let submit = |statement: &str| {
        post(
            &api,
            "/api/v1/agreement/statements",
            &json!({ "statement": statement }),
        )
    };
    // Tampered balance statements, each refused by name.
    let signed = |s: &Statement| sign(s, NAME, &SEED).unwrap();
    assert_rejected(
        &submit(&signed(&balance_of(76, reference.clone()))),
        "balance_mismatch",
    );
    let mut fewer = reference.clone();
    fewer.deltas = 2;
    assert_rejected(&submit(&signed(&balance_of(75, fewer))), "deltas_mismatch");
    let mut earlier = reference.clone();
    earlier.period = Period::parse("2020-01").unwrap();
    assert_rejected(
        &submit(&signed(&balance_of(75, earlier))),
        "period_mismatch",
    );
    let by_other = sign(&balance_of(75, reference.clone()), NAME, &OTHER_SEED).unwrap();
    assert_rejected(&submit(&by_other), "no_signature_by_key");
    let agree = signed(&balance_of(75, reference.clone()));
    let edited = agree.replacen("balance 75\n", "balance 74\n", 1);
    assert_rejected(&submit(&edited), "invalid_signature");
    assert_rejected(&submit(&good), "wrong_kind");
    let mut elsewhere = reference.clone();
    elsewhere.root = Hash32::digest(b"no such checkpoint");
    assert_eq!(submit(&signed(&balance_of(75, elsewhere))).status, 404);

    // The customer agrees: recorded once, in the log, in the public answer,
    // and told to the vendor.
    let r = submit(&agree);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["kind"], "balance");
    assert_eq!(r.body["data"]["checkpointId"], json!(cp_id));
    assert_eq!(submit(&agree).status, 200);
    let got = wait_event(&api, &rx, "checkpoint.cosigned");
    assert!(got.signature_is_valid(&secret));
    let data = &got.json()["data"];
    assert_eq!(data["checkpointId"], json!(cp_id));
    assert_eq!(data["balance"], json!(75));
    assert_eq!(data["counterpartyKey"], json!(key));
    assert_eq!(data["statement"], json!(agree));
    k.wait_fact_verified(&item_hash(&agree).to_hex());
    let verify = api.get(&format!("/api/v1/verify/{root}"));
    let statements = verify.body["data"]["agreement"]["statements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(statements.len(), 1, "{statements:?}");
    assert_eq!(statements[0]["kind"], "balance");
    assert_eq!(statements[0]["statement"], json!(agree));
    assert_eq!(statements[0]["itemHash"], json!(item_hash(&agree).to_hex()));

    // A dispute naming the first divergent delta is recorded the same way.
    let first = k.derive(customer, "limit=1");
    let first_hash = first.body["data"]["deltas"][0]["itemHash"]
        .as_str()
        .unwrap()
        .to_string();
    let dispute = signed(&Statement::Dispute(Dispute {
        checkpoint: reference.clone(),
        kind: DivergenceKind::Changed,
        after: 0,
        delta: EntryId::ItemHash(Hash32::parse(&first_hash).unwrap()),
        agreed: Amount::ZERO,
    }));
    let r = submit(&dispute);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["kind"], "dispute");
    let got = wait_event(&api, &rx, "checkpoint.disputed");
    assert_eq!(got.json()["data"]["statement"], json!(dispute));
    let verify = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(
        verify.body["data"]["agreement"]["statements"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The receipt of the checkpoint's period carries the key binding and
    // both statements with their inclusion proofs, once they are in the
    // log, and bvs-verify checks them offline.
    k.wait_fact_verified(&item_hash(&dispute).to_hex());
    let receipt = k.receipt(customer, &format!("period={period}"));
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let a = &receipt.body["data"]["agreement"];
    assert_eq!(a["checkpointId"], json!(cp_id), "{}", receipt.text);
    assert_eq!(a["merkleRoot"], json!(root));
    assert_eq!(a["ledgerId"], json!(ledger_id));
    assert_eq!(a["balance"], json!(75));
    assert_eq!(a["counterpartyKey"], json!(key));
    assert_eq!(a["keyStatement"], json!(good));
    assert_eq!(a["keyProof"]["itemHash"], json!(item_hash(&good).to_hex()));
    let listed: Vec<(&str, &str)> = a["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap(),
                s["statement"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [("balance", agree.as_str()), ("dispute", dispute.as_str())]
    );
    assert!(a["statements"][0]["leafIndex"].is_u64());
    assert!(a["statements"][0]["inclusionProof"].is_array());
    // The whole history is the same deltas here: the same checkpoint.
    let whole = k.receipt(customer, "");
    assert_eq!(
        whole.body["data"]["agreement"]["checkpointId"],
        json!(cp_id)
    );
    // A customer without a checkpoint: no agreement side.
    let plain = "cus_agree_none";
    let last = k.emit(&Delta::new(plain, 1, "no checkpoint"));
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let r = k.receipt(plain, "");
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["data"].get("agreement").is_none(), "{}", r.text);

    let dir = bvs_tests::fresh_state_dir("agreement-receipt");
    let saved = dir.join("receipt.json");
    std::fs::write(&saved, &receipt.text).unwrap();
    let log = bvs_tests::log::log_key(&api);
    let cli = |file: &std::path::Path| {
        let out = std::process::Command::new(bvs_tests::bvs_verify_bin())
            .args(["receipt", file.to_str().unwrap(), "--key", &log])
            .output()
            .expect("run bvs-verify");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (ok, text) = cli(&saved);
    assert!(ok, "{text}");
    for check in [
        "PASS  agreement.checkpoint",
        "PASS  agreement.key",
        "PASS  agreement.statements[0]",
        "PASS  agreement.statements[1]",
    ] {
        assert!(text.contains(check), "{text}");
    }
    let tampered = dir.join("tampered.json");
    assert!(receipt.text.contains("balance 75\\n\\n"));
    std::fs::write(
        &tampered,
        receipt
            .text
            .replacen("balance 75\\n\\n", "balance 76\\n\\n", 1),
    )
    .unwrap();
    let (ok, text) = cli(&tampered);
    assert!(!ok, "{text}");
    assert!(
        text.contains("FAIL  agreement.statements[0]") && text.contains("invalid_signature"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A named asset's checkpoint (issue 43) is agreed on its own balance:
/// its root covers that asset's deltas only, the public answer asks the
/// customer to sign that asset's closing balance (not the default one's),
/// a statement of another balance is refused, and the asset's receipt
/// carries the agreement side, which `bvs-verify receipt` checks.
#[test]
fn a_named_assets_checkpoint_is_agreed_on_its_own_balance() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let customer = "cus_agree_usd";
    k.batch_anchored(&[
        json!({"customerId": customer, "delta": 1000, "reason": "plain"}),
        json!({"customerId": customer, "delta": 12.5, "asset": "USD/2", "reason": "top-up"}),
        json!({"customerId": customer, "delta": -2.5, "asset": "USD/2", "reason": "spend"}),
    ]);
    let cp = k.checkpoint(&json!({ "customerId": customer, "asset": "USD/2" }));
    assert_eq!(cp.status, 202, "{}", cp.text);
    let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
    let root = committed["merkleRoot"].as_str().unwrap().to_string();
    let period = committed["period"].as_str().unwrap().to_string();
    assert_eq!(committed["deltaCount"], 2);

    let inv = k.post(
        &format!("/api/v1/balance/customers/{customer}/invitations"),
        &json!({}),
    );
    assert_eq!(inv.status, 201, "{}", inv.text);
    let token = inv.body["data"]["token"].as_str().unwrap().to_string();
    let opened = post(
        &api,
        "/api/v1/agreement/invitation",
        &json!({ "token": token }),
    );
    assert_eq!(opened.status, 200, "{}", opened.text);
    let origin = opened.body["data"]["origin"].as_str().unwrap().to_string();
    let ledger = Hash32::parse(opened.body["data"]["ledgerId"].as_str().unwrap()).unwrap();
    let key = counterparty_key(NAME, &SEED).unwrap();
    let binding =
        Statement::Key(KeyBinding::new(Origin::parse(&origin).unwrap(), ledger, &key).unwrap());
    let good = sign(&binding, NAME, &SEED).unwrap();
    let reg = post(
        &api,
        "/api/v1/agreement/keys",
        &json!({ "token": token, "statement": good }),
    );
    assert_eq!(reg.status, 201, "{}", reg.text);
    k.wait_fact_verified(&item_hash(&good).to_hex());

    // The answer asks for the USD/2 closing balance.
    let verify = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(verify.status, 200, "{}", verify.text);
    let agreement = &verify.body["data"]["agreement"];
    assert_eq!(agreement["balance"], json!(10), "{}", verify.text);
    assert_eq!(agreement["deltaCount"], 2);
    let reference = CheckpointRef {
        origin: Origin::parse(&origin).unwrap(),
        ledger,
        period: Period::parse(&period).unwrap(),
        root: Hash32::parse(&root).unwrap(),
        deltas: 2,
    };
    let balance_of = |text: &str| {
        let s = Statement::Balance(BalanceStatement {
            checkpoint: reference.clone(),
            balance: Amount::parse(text).unwrap(),
        });
        sign(&s, NAME, &SEED).unwrap()
    };
    let submit = |statement: &str| {
        post(
            &api,
            "/api/v1/agreement/statements",
            &json!({ "statement": statement }),
        )
    };
    assert_rejected(&submit(&balance_of("1000")), "balance_mismatch");
    let agree = balance_of("10");
    let r = submit(&agree);
    assert_eq!(r.status, 201, "{}", r.text);
    k.wait_fact_verified(&item_hash(&agree).to_hex());

    // The USD/2 receipt carries the agreement side, and it verifies.
    let receipt = bvs_tests::eventually(bvs_tests::ledger::WAIT, "the receipt's agreement", || {
        let r = k.receipt(customer, "asset=USD/2");
        assert_eq!(r.status, 200, "{}", r.text);
        let statements = r.body["data"]["agreement"]["statements"]
            .as_array()
            .map_or(0, Vec::len);
        (statements == 1).then_some(r)
    });
    assert_eq!(
        receipt.body["data"]["agreement"]["balance"],
        json!(10),
        "{}",
        receipt.text
    );
    let log = bvs_tests::log::log_key(&api);
    let (ok, text) = bvs_tests::bvs_verify_saved("receipt", &receipt.text, "agreement-usd", &log);
    assert!(ok, "{text}");
    assert!(text.contains("agreement.statements[0]"), "{text}");
}
