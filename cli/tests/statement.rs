//! `bvs-verify statement`: a customer's signed statement, checked offline
//! against the customer's key, as saved from the service.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::agreement::{
    counterparty_key, sign, BalanceStatement, CheckpointRef, Origin, Statement,
};
use bvs_core::types::Period;
use bvs_core::{Amount, Hash32};
use std::process::{Command, Output};

const SEED: [u8; 32] = [0x42; 32];

fn checkpoint() -> CheckpointRef {
    CheckpointRef {
        origin: Origin::parse("bvs.example/log/sandbox").unwrap(),
        ledger: Hash32::digest(b"bvs-ledger-v1\ntenant_1\ncust_1"),
        period: Period::parse("2026-11").unwrap(),
        root: Hash32::digest(b"root"),
        deltas: 42,
    }
}

fn statement_file(label: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bvs-statement-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("statement.txt");
    std::fs::write(&path, text).unwrap();
    path
}

fn bvs_verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bvs-verify"))
        .args(args)
        .output()
        .unwrap()
}

fn signed_balance() -> String {
    let s = Statement::Balance(BalanceStatement {
        checkpoint: checkpoint(),
        balance: Amount::parse("112.045").unwrap(),
    });
    sign(&s, "customer", &SEED).unwrap()
}

#[test]
fn a_cosigned_balance_verifies_against_the_customer_key_and_pinned_root() {
    let path = statement_file("ok", &signed_balance());
    let key = counterparty_key("customer", &SEED).unwrap();
    let root = checkpoint().root.to_hex();
    let o = bvs_verify(&[
        "statement",
        path.to_str().unwrap(),
        "--key",
        &key,
        "--root",
        &root,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  signature"), "{out}");
    assert!(
        out.contains("ends at balance 112.045 after 42 deltas"),
        "{out}"
    );
    assert!(out.contains("PASS  pinnedRoot"), "{out}");
    let o = bvs_verify(&["cosigned", path.to_str().unwrap(), "--key", &key]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_tampered_balance_or_another_key_fails_with_the_reason() {
    let key = counterparty_key("customer", &SEED).unwrap();
    let tampered = signed_balance().replace("balance 112.045", "balance 1112.045");
    let path = statement_file("tampered", &tampered);
    let o = bvs_verify(&["statement", path.to_str().unwrap(), "--key", &key]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAIL  signature") && out.contains("does not match the statement text"),
        "{out}"
    );

    let path = statement_file("other-key", &signed_balance());
    let other = counterparty_key("customer", &[0x43; 32]).unwrap();
    let o = bvs_verify(&[
        "statement",
        path.to_str().unwrap(),
        "--key",
        &other,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert!(report["checks"][1]["detail"]
        .as_str()
        .unwrap()
        .starts_with("no signature by the counterparty key"));

    let o = bvs_verify(&["statement", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}
