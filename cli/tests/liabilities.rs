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
            "--customer",
            &c.customer_id,
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
        "--customer",
        "cust_a",
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
    let o = bvs_verify(&[
        "liabilities",
        bad.to_str().unwrap(),
        "--customer",
        "cust_a",
        "--key",
        &s.public_key,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  liabilities.path"), "{out}");

    let o = bvs_verify(&["liabilities", p, "--customer", "cust_a"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  log.publicKey"), "{out}");
    let o = bvs_verify(&[
        "liabilities",
        p,
        "--customer",
        "cust_a",
        "--allow-unpinned",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["ok"], true);

    let o = bvs_verify(&[
        "liabilities",
        p,
        "--customer",
        "cust_a",
        "--key",
        &s.public_key,
        "--balance",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 40: who checks is required, and another customer's proof (here
/// with its customerId taken out, as a vendor would hand it) fails for
/// the customer checking it, by customerId or by ledger id.
#[test]
fn another_customers_proof_fails_and_who_checks_is_required() {
    let s = statement();
    let a = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_a")
        .unwrap();
    let b = s
        .customers
        .iter()
        .find(|c| c.customer_id != "cust_a")
        .unwrap();
    let mut unnamed = a.document.clone();
    unnamed.customer_id = None;
    let path = file("unnamed", &unnamed.to_json());
    let p = path.to_str().unwrap();
    let run = |who: &[&str]| {
        let mut args = vec!["liabilities", p, "--key", &s.public_key];
        args.extend_from_slice(who);
        let o = bvs_verify(&args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, out) = run(&["--customer", &b.customer_id]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAIL  customer.ledgerId"), "{out}");
    let other_ledger = b.document.ledger_id.to_hex();
    let (code, out) = run(&["--ledger", &other_ledger]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAIL  customer.ledgerId"), "{out}");
    let (code, out) = run(&["--customer", "cust_a"]);
    assert_eq!(code, Some(0), "{out}");
    let own_ledger = a.document.ledger_id.to_hex();
    let (code, out) = run(&["--ledger", &own_ledger]);
    assert_eq!(code, Some(0), "{out}");
    let (code, _) = run(&[]);
    assert_eq!(code, Some(2));
}

/// A receipt skeleton for `customer`, `period` and `final_balance` (its own
/// checks fail: it has no deltas or log; only the `liabilities.*` checks
/// are looked at), with `embedded` as its `liabilities` field if given.
fn receipt(customer: &str, period: &str, final_balance: &str, embedded: Option<&str>) -> String {
    let zero = "0".repeat(64);
    let tail = embedded
        .map(|d| format!(",\"liabilities\":{d}"))
        .unwrap_or_default();
    format!(
        "{{\"customerId\":\"{customer}\",\"period\":\"{period}\",\"generatedAt\":\"2026-12-01T00:00:00.000Z\",\
         \"deltasCount\":0,\"startingBalance\":0,\"finalBalance\":{final_balance},\
         \"itemsRoot\":\"{zero}\",\"receiptId\":\"{zero}\",\"proofRoot\":\"{zero}\",\"deltas\":[],\
         \"verification\":{{\"message\":\"m\",\"proofRoot\":\"{zero}\",\"verifyUrl\":\"u\",\"itemHashes\":[]}},\
         \"proof\":{{\"hashScheme\":\"h\",\"treeHead\":\"t\",\"publicKey\":\"k\",\"items\":[]}}{tail}}}"
    )
}

fn check<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {report}"))
}

#[test]
fn receipt_ties_a_liabilities_proof_to_its_final_balance() {
    let s = statement();
    let a = &s.customers[0];
    let doc = a.document.to_json();
    let proof = file("receipt-proof", &doc);
    let run = |receipt_text: &str, with_file: bool| -> serde_json::Value {
        let path = file(&format!("receipt-{}", receipt_text.len()), receipt_text)
            .with_file_name("receipt.json");
        std::fs::write(&path, receipt_text).unwrap();
        let mut args = vec![
            "receipt",
            path.to_str().unwrap(),
            "--key",
            &s.public_key,
            "--json",
        ];
        if with_file {
            args.extend(["--liabilities", proof.to_str().unwrap()]);
        }
        let o = bvs_verify(&args);
        assert_eq!(o.status.code(), Some(1), "the skeleton's own checks fail");
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let balance = a.balance.to_string();
    // The proof given apart, and carried by the receipt: both pass.
    for (text, with_file) in [
        (receipt(&a.customer_id, "2026-11", &balance, None), true),
        (
            receipt(&a.customer_id, "2026-11", &balance, Some(&doc)),
            false,
        ),
    ] {
        let r = run(&text, with_file);
        assert_eq!(check(&r, "liabilities.receipt")["ok"], true, "{r}");
        assert_eq!(check(&r, "liabilities.balance")["ok"], true, "{r}");
    }
    // Another finalBalance, another period, another customer: each fails.
    for (text, why) in [
        (
            receipt(&a.customer_id, "2026-11", "42.2", None),
            "finalBalance",
        ),
        (receipt(&a.customer_id, "2026-10", &balance, None), "period"),
        (
            receipt("cust_other", "2026-11", &balance, None),
            "customerId",
        ),
    ] {
        let r = run(&text, true);
        let c = check(&r, "liabilities.receipt");
        assert_eq!(c["ok"], false, "{r}");
        assert!(c["detail"].as_str().unwrap().contains(why), "{c}");
    }
    // A receipt without a proof and without --liabilities: no such checks.
    let r = run(&receipt(&a.customer_id, "2026-11", &balance, None), false);
    assert!(!r.to_string().contains("liabilities."), "{r}");
}
