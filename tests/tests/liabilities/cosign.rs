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
const OTHER_SEED: [u8; 32] = [0x25; 32];
const NAME: &str = "customer";

/// What a customer with a registered key signs for its checkpoint `root`
/// and proof `doc`: its balance statement, and its inclusion.
struct Signer {
    key: String,
    seed: [u8; 32],
    agree: String,
    inclusion: Inclusion,
}

impl Signer {
    /// Registers a key for `customer` through an invitation, and reads
    /// what to sign.
    fn register(
        api: &Api,
        k: &Keyed<'_>,
        (customer, root, doc): (&str, &str, &str),
        seed: [u8; 32],
    ) -> Signer {
        let inv = k.post(
            &format!("/api/v1/balance/customers/{customer}/invitations"),
            &json!({}),
        );
        assert_eq!(inv.status, 201, "{}", inv.text);
        let token = inv.body["data"]["token"].as_str().unwrap();
        let origin = Origin::parse(inv.body["data"]["origin"].as_str().unwrap()).unwrap();
        let ledger = Hash32::parse(inv.body["data"]["ledgerId"].as_str().unwrap()).unwrap();
        let key = counterparty_key(NAME, &seed).unwrap();
        let binding = Statement::Key(KeyBinding::new(origin.clone(), ledger, &key).unwrap());
        let reg = api.post(
            "/api/v1/agreement/keys",
            &json!({ "token": token, "statement": sign(&binding, NAME, &seed).unwrap() }),
        );
        assert_eq!(reg.status, 201, "{}", reg.text);
        // The period's balance statement (from the public answer) and the
        // inclusion, from the proof.
        let answer = api.get(&format!("/api/v1/verify/{root}"));
        assert_eq!(answer.status, 200, "{}", answer.text);
        let text = answer.body["data"]["agreement"]["balanceStatement"]
            .as_str()
            .unwrap();
        let agree = sign(&Statement::parse(text).unwrap(), NAME, &seed).unwrap();
        let doc: Value = serde_json::from_str(doc).unwrap();
        let inclusion = Inclusion {
            origin,
            ledger,
            period: Period::parse(doc["statement"]["period"].as_str().unwrap()).unwrap(),
            statement: Hash32::parse(doc["statementHash"].as_str().unwrap()).unwrap(),
            balance: Amount::parse(&doc["customer"]["balance"].to_string()).unwrap(),
        };
        Signer {
            key,
            seed,
            agree,
            inclusion,
        }
    }

    fn inclusion(&self, inclusion: &Inclusion) -> String {
        sign_inclusion(inclusion, NAME, &self.seed).unwrap()
    }
}

/// The customer `customer` (whose checkpoint has merkleRoot `root` and
/// whose proof is `doc`) registers a key, then agrees to its period and
/// co-signs its inclusion in one step.
pub fn cosign_inclusion(api: &Api, k: &Keyed<'_>, customer: &str, root: &str, doc: &str) {
    let s = Signer::register(api, k, (customer, root, doc), SEED);
    let (key, agree, inclusion) = (&s.key, &s.agree, &s.inclusion);
    let doc: Value = serde_json::from_str(doc).unwrap();
    let submit = |inclusion: &Inclusion| {
        api.post(
            "/api/v1/agreement/statements",
            &json!({
                "statement": agree,
                "liabilities": s.inclusion(inclusion),
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
    let both = submit(inclusion);
    assert_eq!(both.status, 201, "{}", both.text);
    let data = &both.body["data"];
    assert_eq!(data["kind"], "balance", "{}", both.text);
    let cosigned = &data["liabilities"];
    assert_eq!(cosigned["kind"], "liabilities", "{}", both.text);
    assert_eq!(cosigned["statementHash"], doc["statementHash"]);
    assert_eq!(cosigned["counterpartyKey"], json!(key));
    let signed = s.inclusion(inclusion);
    let hash = item_hash(&signed).to_hex();
    assert_eq!(cosigned["itemHash"], json!(hash));
    assert_eq!(cosigned["statement"], json!(signed));
    // Sent again: the same answer, nothing new.
    let again = submit(inclusion);
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["data"]["liabilities"]["itemHash"], json!(hash));
    // The co-signature is in the log, provable like any fact.
    k.wait_fact_verified(&hash);
    k.wait_fact_verified(data["itemHash"].as_str().unwrap());
}

/// A customer who agreed to its period before the statement was published
/// (the usual order) sends the same balance statement again with its
/// co-signature: the agreement is answered as recorded, the co-signature
/// alone is written (201), and sent again nothing is (200).
pub fn cosign_after_agreeing(api: &Api, k: &Keyed<'_>, customer: &str, root: &str, doc: &str) {
    let s = Signer::register(api, k, (customer, root, doc), OTHER_SEED);
    let post = |body: &Value| api.post("/api/v1/agreement/statements", body);
    let agreed = post(&json!({ "statement": s.agree }));
    assert_eq!(agreed.status, 201, "{}", agreed.text);
    assert!(
        agreed.body["data"]["liabilities"].is_null(),
        "{}",
        agreed.text
    );
    let pair = json!({ "statement": s.agree, "liabilities": s.inclusion(&s.inclusion) });
    let later = post(&pair);
    assert_eq!(later.status, 201, "{}", later.text);
    assert_eq!(
        later.body["data"]["itemHash"],
        agreed.body["data"]["itemHash"]
    );
    assert_eq!(
        later.body["data"]["recordedAt"],
        agreed.body["data"]["recordedAt"]
    );
    let hash = item_hash(&s.inclusion(&s.inclusion)).to_hex();
    assert_eq!(later.body["data"]["liabilities"]["itemHash"], json!(hash));
    let again = post(&pair);
    assert_eq!(again.status, 200, "{}", again.text);
    k.wait_fact_verified(&hash);
}
