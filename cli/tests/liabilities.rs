//! `bvs-verify liabilities`: a customer's proof that its balance is counted
//! in a vendor's liabilities statement, checked offline (docs/liabilities.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::liabilities::sample::{self, Sample};
use bvs_core::types::Period;
use bvs_core::Amount;
use std::path::PathBuf;
use std::process::{Command, Output};

fn statement() -> Sample {
    let balances = [
        ("cust_a", Amount::parse("42.1").unwrap()),
        ("cust_b", Amount::parse("1234525.79").unwrap()),
        ("cust_c", Amount::parse("-5").unwrap()),
        ("cust_d", Amount::parse("0").unwrap()),
    ];
    sample::build(
        "bvs.example/log/sandbox",
        &[0x42; 32],
        "ten_cli",
        Period::parse("2026-11").unwrap(),
        &balances,
        [0x11; 32],
        2,
        4,
    )
    .unwrap()
}

fn file(label: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bvs-liabilities-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("proof.json");
    std::fs::write(&path, text).unwrap();
    path
}

fn bvs_verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bvs-verify"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_customers_proof_verifies_with_the_pinned_key_and_its_balance() {
    let s = statement();
    for c in &s.customers {
        let path = file(&c.customer_id, &c.document.to_json());
        let balance = c.balance.to_string();
        let o = bvs_verify(&[
            "liabilities",
            path.to_str().unwrap(),
            "--key",
            &s.public_key,
            "--balance",
            &balance,
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}");
        assert!(out.contains("PASS  liabilities.path"), "{out}");
        assert!(out.contains("PASS  log.inclusion"), "{out}");
        assert!(out.contains("\nVERIFIED: "), "{out}");
        if c.customer_id == "cust_a" {
            assert!(
                out.contains(
                    "your balance of 42.1 is counted in a total of 1234567.89 owed to 4 customers \
                     on 2026-11-30"
                ),
                "{out}"
            );
        }
        if c.customer_id == "cust_c" {
            assert!(out.contains("PASS  receivables.path"), "{out}");
        }
    }
}

#[test]
fn another_balance_a_tampered_sum_or_no_pinned_key_is_not_verified() {
    let s = statement();
    let a = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_a")
        .unwrap();
    let path = file("a", &a.document.to_json());
    let p = path.to_str().unwrap();

    let o = bvs_verify(&[
        "liabilities",
        p,
        "--key",
        &s.public_key,
        "--balance",
        "42.2",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("First failure: balance"), "{out}");

    let mut tampered = a.document.clone();
    tampered.liabilities.path[0].sum = Amount::parse("1234520").unwrap();
    let bad = file("tampered", &tampered.to_json());
    let o = bvs_verify(&["liabilities", bad.to_str().unwrap(), "--key", &s.public_key]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  liabilities.path"), "{out}");

    let o = bvs_verify(&["liabilities", p]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  log.publicKey"), "{out}");
    let o = bvs_verify(&["liabilities", p, "--allow-unpinned", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["ok"], true);

    let o = bvs_verify(&["liabilities", p, "--key", &s.public_key, "--balance", "x"]);
    assert_eq!(o.status.code(), Some(2));
}
