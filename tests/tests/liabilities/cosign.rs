//! Co-signing inclusion (issue 31 part D, docs/liabilities.md §11): the
//! customer who agrees to its period co-signs, in the same request, that
//! its balance is counted in the period's published liabilities
//! statement. A co-signature for another balance or statement is refused
//! naming `liabilities`, and then nothing is written, the balance
//! statement included.

use bvs_core::agreement::{
    counterparty_key, item_hash, sign, sign_inclusion, Inclusion, KeyBinding, Origin, Statement,
};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::Period;
use bvs_tests::client::{Api, Keyed};
use serde_json::{json, Value};

const SEED: [u8; 32] = [0x24; 32];
const NAME: &str = "customer";

/// The customer `customer` (whose checkpoint has merkleRoot `root` and
/// whose proof is `doc`) registers a key, then agrees to its period and
/// co-signs its inclusion in one step.
pub fn cosign_inclusion(api: &Api, k: &Keyed<'_>, customer: &str, root: &str, doc: &str) {
    let inv = k.post(
        &format!("/api/v1/balance/customers/{customer}/invitations"),
        &json!({}),
    );
    assert_eq!(inv.status, 201, "{}", inv.text);
    let token = inv.body["data"]["token"].as_str().unwrap();
    let origin = Origin::parse(inv.body["data"]["origin"].as_str().unwrap()).unwrap();
    let ledger = Hash32::parse(inv.body["data"]["ledgerId"].as_str().unwrap()).unwrap();
    let key = counterparty_key(NAME, &SEED).unwrap();
    let binding = Statement::Key(KeyBinding::new(origin.clone(), ledger, &key).unwrap());
    let reg = api.post(
        "/api/v1/agreement/keys",
        &json!({ "token": token, "statement": sign(&binding, NAME, &SEED).unwrap() }),
    );
    assert_eq!(reg.status, 201, "{}", reg.text);

    // What the customer signs: the period's balance statement (from the
    // public answer) and its inclusion, from its proof.
    let answer = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(answer.status, 200, "{}", answer.text);
    let text = answer.body["data"]["agreement"]["balanceStatement"]
        .as_str()
        .unwrap();
    let agree = sign(&Statement::parse(text).unwrap(), NAME, &SEED).unwrap();
    let doc: Value = serde_json::from_str(doc).unwrap();
    let inclusion = Inclusion {
        origin,
        ledger,
        period: Period::parse(doc["statement"]["period"].as_str().unwrap()).unwrap(),
        statement: Hash32::parse(doc["statementHash"].as_str().unwrap()).unwrap(),
        balance: Amount::parse(&doc["customer"]["balance"].to_string()).unwrap(),
    };
    let submit = |inclusion: &Inclusion| {
        api.post(
            "/api/v1/agreement/statements",
            &json!({
                "statement": agree,
                "liabilities": sign_inclusion(inclusion, NAME, &SEED).unwrap(),
            }),
        )
    };

    // Another balance, or another statement: refused naming the field and
    // the reason, and nothing is written (the agreement neither).
    let mut more = inclusion.clone();
    more.balance = more
        .balance
        .checked_add(Amount::parse("0.01").unwrap())
        .unwrap();
    let mut other = inclusion.clone();
    other.statement = Hash32::digest(b"another statement");
    for (bad, reason) in [(&more, "balance_mismatch"), (&other, "statement_mismatch")] {
        let r = submit(bad);
        assert_eq!(r.status, 422, "{}", r.text);
        assert_eq!(r.body["code"], "statement_rejected", "{}", r.text);
        assert!(r.message().starts_with("liabilities:"), "{}", r.text);
        assert!(r.message().contains(&format!("({reason})")), "{}", r.text);
    }
    let none = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(
        none.body["data"]["agreement"]["statements"],
        json!([]),
        "{}",
        none.text
    );

    // Both in one step: recorded together, each its own log item.
    let both = submit(&inclusion);
    assert_eq!(both.status, 201, "{}", both.text);
    let data = &both.body["data"];
    assert_eq!(data["kind"], "balance", "{}", both.text);
    let cosigned = &data["liabilities"];
    assert_eq!(cosigned["kind"], "liabilities", "{}", both.text);
    assert_eq!(cosigned["statementHash"], doc["statementHash"]);
    assert_eq!(cosigned["counterpartyKey"], json!(key));
    let signed = sign_inclusion(&inclusion, NAME, &SEED).unwrap();
    let hash = item_hash(&signed).to_hex();
    assert_eq!(cosigned["itemHash"], json!(hash));
    assert_eq!(cosigned["statement"], json!(signed));
    // Sent again: the same answer, nothing new.
    let again = submit(&inclusion);
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["data"]["liabilities"]["itemHash"], json!(hash));
    // The co-signature is in the log, provable like any fact.
    k.wait_fact_verified(&hash);
    k.wait_fact_verified(data["itemHash"].as_str().unwrap());
}
