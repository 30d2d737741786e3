//! A signed statement on its own (`bvs-verify statement`): its key, its
//! signature and form, and what it says.

use super::{item_hash, verify, CheckpointRef, Statement};
use crate::hash::Hash32;
use crate::note::VerifierKey;
use crate::pinpoint::EntryId;
use crate::verify::{Check, VerificationReport};

/// The checks `bvs-verify statement` prints: the key, the signature and
/// form, what the statement says, and the root when one is pinned.
pub fn statement_report(
    signed: &str,
    verifier_key: &str,
    pinned_root: Option<&Hash32>,
) -> VerificationReport {
    let mut checks = Vec::new();
    match VerifierKey::parse(verifier_key) {
        Ok(k) => push(
            &mut checks,
            "counterpartyKey",
            true,
            format!("Ed25519 key {}+{:08x}", k.name, k.id),
        ),
        Err(e) => push(&mut checks, "counterpartyKey", false, e.to_string()),
    }
    match verify(signed, verifier_key) {
        Err(e) => push(&mut checks, "signature", false, e.to_string()),
        Ok(statement) => {
            push(
                &mut checks,
                "signature",
                true,
                format!(
                    "the {} statement is signed by the counterparty key; log item {}",
                    statement.kind(),
                    item_hash(signed)
                ),
            );
            if let Some(c) = says(&mut checks, &statement) {
                checkpoint_checks(&mut checks, c, pinned_root);
            }
        }
    }
    VerificationReport {
        ok: checks.iter().all(|c| c.ok),
        checks,
    }
}

fn push(checks: &mut Vec<Check>, name: &str, ok: bool, detail: String) {
    checks.push(Check {
        name: name.to_owned(),
        ok,
        detail,
    });
}

/// What the statement says, as a check named by its kind; the checkpoint
/// it names, if any (a key binding names none).
fn says<'s>(checks: &mut Vec<Check>, statement: &'s Statement) -> Option<&'s CheckpointRef> {
    match statement {
        Statement::Key(b) => {
            push(
                checks,
                "keyBinding",
                true,
                format!(
                    "ledger {} of log {} has this key (self-signed)",
                    b.ledger,
                    b.origin.as_str()
                ),
            );
            None
        }
        Statement::Balance(b) => {
            push(
                checks,
                "agreed",
                true,
                format!(
                    "the customer agrees: period {} ends at balance {} after {} deltas",
                    b.checkpoint.period, b.balance, b.checkpoint.deltas
                ),
            );
            Some(&b.checkpoint)
        }
        Statement::Dispute(d) => {
            push(
                checks,
                "disputed",
                true,
                format!(
                    "the customer disputes period {}: first divergent delta {} ({} {}) after {} agreed deltas at balance {}",
                    d.checkpoint.period,
                    d.kind.as_str(),
                    d.delta.field(),
                    match &d.delta {
                        EntryId::ItemHash(h) => h.to_hex(),
                        EntryId::AnchorId(s) | EntryId::ReferenceId(s) => s.clone(),
                    },
                    d.after,
                    d.agreed
                ),
            );
            Some(&d.checkpoint)
        }
    }
}

/// The checkpoint a statement names, and the pinned root against it.
fn checkpoint_checks(checks: &mut Vec<Check>, c: &CheckpointRef, pinned_root: Option<&Hash32>) {
    push(
        checks,
        "checkpoint",
        true,
        format!(
            "log {}, ledger {}, merkleRoot {}",
            c.origin.as_str(),
            c.ledger,
            c.root
        ),
    );
    if let Some(root) = pinned_root {
        let ok = root.ct_eq(&c.root);
        push(
            checks,
            "pinnedRoot",
            ok,
            if ok {
                "the statement names the pinned merkleRoot".to_owned()
            } else {
                format!("the statement names {}, not the pinned {root}", c.root)
            },
        );
    }
}
