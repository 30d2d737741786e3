//! Who checks a proof, and the check that the proof is for that
//! checker's own ledger (issue 40).

use super::super::statement::ledger_id;
use super::ProofDocument;
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::json;
use crate::types::CustomerId;
use crate::verify::{self, VerificationReport};

/// Who checks a proof (issue 40): a proof passes only for the ledger of
/// the customer checking it, so a vendor that left one customer out of
/// the total cannot hand it another customer's leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker<'a> {
    /// The customer by the vendor's name for it (its receipts and
    /// derive answers carry it): the ledger id is recomputed from it and
    /// the statement's tenantId.
    Customer(&'a CustomerId),
    /// The customer by its ledger id, when that is what it holds: the
    /// agreement page, whose co-signing key is bound to that ledger.
    Ledger(&'a Hash32),
}

/// The checker's own ledger (recomputed from its customerId and the
/// statement's tenantId, or given), against the proof's: one comparison
/// whoever checks.
fn ledger_detail(doc: &ProofDocument, checker: Checker<'_>) -> verify::Detail {
    let s = &doc.statement;
    let (want, whose) = match checker {
        Checker::Customer(c) => {
            if let Some(named) = doc.customer_id.as_deref().filter(|n| *n != c.as_str()) {
                return Err(format!(
                    "the proof is for customerId {}, you are {}",
                    json::quoted(named),
                    json::quoted(c.as_str())
                ));
            }
            (
                ledger_id(s.tenant_id(), c.as_str()),
                format!(" ({} at {})", json::quoted(c.as_str()), s.tenant_id()),
            )
        }
        Checker::Ledger(l) => (*l, String::new()),
    };
    verify::same("ledgerId", &doc.ledger_id, &want)
        .map(|d| format!("{d}, your ledger{whose}"))
        .map_err(|e| format!("{e}: the proof is not for your ledger"))
}

/// The proof's ledger against the checker's own, and the balance against
/// the customer's own when given.
pub(super) fn ledger_checks(
    report: &mut VerificationReport,
    doc: &ProofDocument,
    checker: Checker<'_>,
    expected_balance: Option<Amount>,
) {
    report.result("customer.ledgerId", ledger_detail(doc, checker));
    if let Some(want) = expected_balance {
        report.result(
            "balance",
            if want == doc.balance {
                Ok(format!("{want}, as expected"))
            } else {
                Err(format!(
                    "the proof is for a balance of {}, yours is {want}",
                    doc.balance
                ))
            },
        );
    }
}
