//! docs/agreement.md's worked example is the statement core signs: the
//! text, the key and the log item hash shown there are recomputed here.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::agreement::{
    counterparty_key, item_hash, sign, verify, BalanceStatement, CheckpointRef, Origin, Statement,
};
use bvs_core::types::Period;
use bvs_core::{Amount, Hash32};

#[test]
fn the_worked_example_in_the_doc_is_what_core_signs() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/agreement.md"))
        .unwrap();
    let start = doc
        .find("```text\nbvs-agreement/v1 balance\norigin")
        .unwrap()
        + "```text\n".len();
    let len = doc[start..].find("```").unwrap();
    let shown = &doc[start..start + len];

    let seed = [0x42; 32];
    let statement = Statement::Balance(BalanceStatement {
        checkpoint: CheckpointRef {
            origin: Origin::parse("bvs.example/log/sandbox").unwrap(),
            ledger: Hash32::digest(b"bvs-ledger-v1\ntenant_1\ncust_1"),
            period: Period::parse("2026-11").unwrap(),
            root: Hash32::digest(b"root"),
            deltas: 42,
        },
        balance: Amount::parse("112.045").unwrap(),
    });
    let signed = sign(&statement, "customer", &seed).unwrap();
    assert_eq!(shown, signed);
    let key = counterparty_key("customer", &seed).unwrap();
    assert!(doc.contains(&format!("`{key}`")), "{key}");
    assert_eq!(verify(shown, &key).unwrap(), statement);
    let hash = item_hash(&signed).to_hex();
    assert!(doc.contains(&format!("{hash}  statement.txt")), "{hash}");
}
