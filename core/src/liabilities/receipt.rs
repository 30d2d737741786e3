//! A liabilities proof tied to a period's receipt (docs/liabilities.md
//! §10): the proof is for the receipt's customer, period and closing
//! balance, and passes on its own.

use super::proof::{verify_proof, Checker, ProofDocument};
use crate::json;
use crate::receipt::Receipt;
use crate::verify::{self, VerificationReport};

/// Whether the receipt document (`{success, statusCode, data}` or its
/// `data`) carries a `liabilities` proof.
pub fn receipt_carries_proof(receipt_text: &str) -> bool {
    json::parse(receipt_text).is_ok_and(|v| {
        matches!(
            verify::unwrap_envelope(&v).as_object().and_then(|o| o.get("liabilities")),
            Some(p) if !matches!(p, json::Value::Null)
        )
    })
}

/// The proof to tie: `proof_text` when given, else the receipt's own.
fn read_proof(
    receipt_text: &str,
    proof_text: Option<&str>,
) -> Result<ProofDocument, verify::DocumentError> {
    match proof_text {
        Some(text) => {
            verify::read_document(text, true, "a liabilities proof", ProofDocument::from_json)
        }
        None => verify::read_document(receipt_text, true, "a receipt's liabilities", |v| {
            match v.as_object().and_then(|o| o.get("liabilities")) {
                Some(p) if !matches!(p, json::Value::Null) => ProofDocument::from_json(p),
                _ => Err(crate::error::FieldError::new(
                    "liabilities",
                    "is missing: the receipt carries no liabilities proof",
                )),
            }
        }),
    }
}

/// Checks a liabilities proof against a receipt: `proof_text` when given
/// (a proof document saved apart), else the receipt's own `liabilities`.
/// Every check of [`verify_proof`] with the receipt's `finalBalance` as
/// the expected balance, then `receipt`: the proof names the receipt's
/// customerId and its statement the receipt's period. Check names are
/// prefixed `liabilities.`.
pub fn verify_receipt_proof(
    receipt_text: &str,
    proof_text: Option<&str>,
    trusted_public_key: Option<&str>,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let receipt = match verify::read_document(receipt_text, true, "a receipt", Receipt::from_json) {
        Ok(r) => r,
        Err(e) => return VerificationReport::failure("liabilities.parse", e.to_string()),
    };
    let doc = match read_proof(receipt_text, proof_text) {
        Ok(d) => d,
        Err(e) => return VerificationReport::failure("liabilities.parse", e.to_string()),
    };
    // The receipt's customer is the one checking: its receipt's items are
    // its own, so the proof must be for that customer's ledger.
    let checker = match crate::types::CustomerId::parse(&receipt.customer_id) {
        Ok(c) => c,
        Err(e) => return VerificationReport::failure("liabilities.parse", e.to_string()),
    };
    let inner = verify_proof(
        &doc,
        Checker::Customer(&checker),
        trusted_public_key,
        Some(receipt.final_balance),
    );
    for c in inner.checks {
        report.push(format!("liabilities.{}", c.name), c.ok, c.detail);
    }
    report.result("liabilities.receipt", tie(&doc, &receipt));
    report
}

/// The proof names the receipt's customer, and its statement the
/// receipt's period, asset and finalBalance.
fn tie(doc: &ProofDocument, receipt: &Receipt) -> verify::Detail {
    let period = doc.statement.period.to_string();
    let same_customer = doc
        .customer_id
        .as_deref()
        .is_none_or(|c| c == receipt.customer_id);
    if !same_customer {
        Err(format!(
            "the proof is for customerId {:?}, the receipt for {:?}",
            doc.customer_id.as_deref().unwrap_or(""),
            receipt.customer_id
        ))
    } else if receipt.period.as_deref() != Some(period.as_str()) {
        Err(format!(
            "the proof's statement is for period {period}, the receipt for {}",
            receipt
                .period
                .as_deref()
                .unwrap_or("no period (a whole-history receipt)")
        ))
    } else if doc.statement.asset != receipt.asset {
        let name = |a: &crate::types::Asset| match a.is_default() {
            true => "the default asset".to_string(),
            false => a.key(),
        };
        Err(format!(
            "the proof's statement sums {}, the receipt is of {}",
            name(&doc.statement.asset),
            name(&receipt.asset)
        ))
    } else if doc.balance != receipt.final_balance {
        Err(format!(
            "the proof's balance {} is not the receipt's finalBalance {}",
            doc.balance, receipt.final_balance
        ))
    } else {
        Ok(format!(
            "the proof is for this receipt's customer, period {period} and finalBalance {}",
            receipt.final_balance
        ))
    }
}
