//! `bvs-verify receipt` on a co-signed receipt (issue 19): the customer's
//! key binding and statements it carries are checked offline, and
//! tampering with a statement, the binding or the balance fails with a
//! named reason and exit status 1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::agreement::sample::SampleLog;
use std::process::{Command, Output};

const LOG_SEED: [u8; 32] = [9; 32];
const CUSTOMER_SEED: [u8; 32] = [0x42; 32];
const OTHER_SEED: [u8; 32] = [0x43; 32];
const LOG: SampleLog<'static> = SampleLog {
    origin: "bvs.example/log/sandbox",
    seed: &LOG_SEED,
    t0_ms: 1_795_323_400_123,
};

fn envelope(data: &str) -> String {
    format!(r#"{{"success":true,"statusCode":200,"data":{data}}}"#)
}

/// Runs `bvs-verify receipt` on `text` saved to a file: (exit code, stdout).
fn check(label: &str, text: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("bvs-cosigned-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("receipt.json");
    std::fs::write(&path, text).unwrap();
    let o: Output = Command::new(env!("CARGO_BIN_EXE_bvs-verify"))
        .args([
            "receipt",
            path.to_str().unwrap(),
            "--key",
            &LOG.public_key().unwrap(),
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn cosigned_json() -> String {
    envelope(&serde_json::to_string(&LOG.cosigned(&CUSTOMER_SEED).unwrap()).unwrap())
}

#[test]
fn a_cosigned_receipt_verifies_offline_with_its_agreement_side() {
    let (code, out) = check("ok", &cosigned_json());
    assert_eq!(code, 0, "{out}");
    for line in [
        "PASS  agreement.checkpoint",
        "PASS  agreement.key",
        "PASS  agreement.statements[0]",
        "PASS  agreement.statements[1]",
        "agreed by the customer's key customer+6246b44f",
        "disputed by the customer's key customer+6246b44f",
        "VERIFIED",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
}

#[test]
fn a_tampered_statement_fails_with_invalid_signature() {
    let text = cosigned_json();
    let forged = text.replacen("balance 122.095\\n\\n", "balance 122.096\\n\\n", 1);
    assert_ne!(forged, text);
    let (code, out) = check("statement", &forged);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  agreement.statements[0]  invalid_signature:"),
        "{out}"
    );
    assert!(out.contains("NOT VERIFIED"), "{out}");
}

#[test]
fn a_swapped_key_binding_fails() {
    // The binding and statements re-signed by another key, shown with the
    // log's proof of the real binding: the log holds another item.
    let real = LOG.cosigned(&CUSTOMER_SEED).unwrap();
    let other = LOG.cosigned(&OTHER_SEED).unwrap();
    let mut r = real.clone();
    let (a, o) = (r.agreement.as_mut().unwrap(), other.agreement.unwrap());
    a.counterparty_key = o.counterparty_key;
    a.key_statement = o.key_statement;
    a.statements[0].statement = o.statements[0].statement.clone();
    let (code, out) = check("binding", &envelope(&serde_json::to_string(&r).unwrap()));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  agreement.key") && out.contains("item_hash_mismatch:"),
        "{out}"
    );
    // A binding's text changed.
    let text = cosigned_json().replacen(
        "bvs-agreement/v1 key\\norigin bvs.example/log/sandbox",
        "bvs-agreement/v1 key\\norigin bvs.example/log/other",
        1,
    );
    let (code, out) = check("binding-text", &text);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  agreement.key") && out.contains("invalid_signature:"),
        "{out}"
    );
}

#[test]
fn a_tampered_balance_fails_with_balance_mismatch() {
    let mut r = LOG.cosigned(&CUSTOMER_SEED).unwrap();
    let forged = bvs_core::Amount::parse("122.096").unwrap();
    r.final_balance = forged;
    let a = r.agreement.as_mut().unwrap();
    a.balance = forged;
    a.balance_statement = a.balance_statement.replace("122.095", "122.096");
    let (code, out) = check("balance", &envelope(&serde_json::to_string(&r).unwrap()));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  finalBalance"), "{out}");
    assert!(
        out.contains("FAIL  agreement.statements[0]  balance_mismatch:"),
        "{out}"
    );
}
