//! Verification shared by server tests, the browser (verifier-wasm) and a
//! CLI. Nothing here panics; every failed check says precisely why.

use crate::amount::Amount;
use crate::hash::{item_hash, Hash32};
use crate::merkle::{self, ProofError};
use crate::note::{self, NoteError, TreeHead};
use crate::receipt::Receipt;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// Most deltas a receipt may list for verification; bounds browser work. // spec: silent; 100k deltas verify in well under a second natively
pub const RECEIPT_DELTAS_MAX: usize = 100_000;
/// Largest receipt JSON we parse, in bytes. // spec: silent; ~100k deltas with proofs
pub const RECEIPT_JSON_BYTES_MAX: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationReport {
    /// True only when every check passed.
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl VerificationReport {
    fn new() -> Self {
        Self {
            ok: true,
            checks: Vec::new(),
        }
    }

    fn push(&mut self, name: impl Into<String>, ok: bool, detail: impl Into<String>) {
        self.ok &= ok;
        self.checks.push(Check {
            name: name.into(),
            ok,
            detail: detail.into(),
        });
    }

    fn result(&mut self, name: impl Into<String>, r: Result<String, String>) {
        match r {
            Ok(d) => self.push(name, true, d),
            Err(d) => self.push(name, false, d),
        }
    }

    /// The first failed check, if any.
    pub fn first_failure(&self) -> Option<&Check> {
        self.checks.iter().find(|c| !c.ok)
    }
}

fn same(name: &str, got: &Hash32, want: &Hash32) -> Result<String, String> {
    if got.ct_eq(want) {
        Ok(format!("{name} is {want}"))
    } else {
        Err(format!("{name} is {got}, expected {want}"))
    }
}

/// Verifies a receipt given as JSON text (amounts are read exactly from
/// the text; a `serde_json::Value` would already have rounded them).
pub fn verify_receipt_json(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    if text.len() > RECEIPT_JSON_BYTES_MAX {
        let mut r = VerificationReport::new();
        r.push(
            "parse",
            false,
            format!("receipt is larger than {RECEIPT_JSON_BYTES_MAX} bytes"),
        );
        return r;
    }
    match serde_json::from_str::<Receipt>(text) {
        Ok(receipt) => verify_receipt(&receipt, trusted_public_key),
        Err(e) => {
            let mut r = VerificationReport::new();
            r.push("parse", false, format!("not a receipt: {e}"));
            r
        }
    }
}

/// Verifies everything a receipt claims:
/// the key (pinned or not), the signed tree head, each delta's itemHash
/// (recomputed from raw content where present), each inclusion proof into
/// the signed head, the receipt's itemsRoot/receiptId/proofRoot over the
/// listed itemHashes, the count, and the balance replayed from
/// startingBalance through each delta to finalBalance.
pub fn verify_receipt(receipt: &Receipt, trusted_public_key: Option<&str>) -> VerificationReport {
    let mut report = VerificationReport::new();
    let n = receipt.deltas.len();
    if n > RECEIPT_DELTAS_MAX {
        report.push(
            "deltasCount",
            false,
            format!("{n} deltas exceed the verifiable maximum of {RECEIPT_DELTAS_MAX}"),
        );
        return report;
    }

    // 1. Which key.
    let key = match trusted_public_key {
        Some(trusted) => {
            let same_key: bool = trusted
                .as_bytes()
                .ct_eq(receipt.proof.public_key.as_bytes())
                .into();
            report.result(
                "publicKey",
                if same_key {
                    Ok("receipt names the trusted key".into())
                } else {
                    Err(format!(
                        "receipt names key {:?}, the trusted key is {trusted:?}; checking against the trusted key",
                        receipt.proof.public_key
                    ))
                },
            );
            trusted
        }
        None => {
            report.push(
                "publicKey",
                true,
                "not pinned: using the key inside the receipt; compare it with the log's published key",
            );
            receipt.proof.public_key.as_str()
        }
    };

    // 2. Signed tree head.
    let head: Option<TreeHead> = match note::verify_tree_head(&receipt.proof.tree_head, key) {
        Ok(h) => {
            report.push(
                "treeHead",
                true,
                format!("signed by {}: size {}, root {}", h.origin, h.size, h.root),
            );
            Some(h)
        }
        Err(e) => {
            report.push("treeHead", false, e.to_string());
            None
        }
    };

    // 3. Roots over the listed itemHashes.
    let hashes: Vec<Hash32> = receipt.deltas.iter().map(|d| d.item_hash).collect();
    let root = merkle::root(&hashes);
    report.result("itemsRoot", same("itemsRoot", &receipt.items_root, &root));
    report.result("receiptId", same("receiptId", &receipt.receipt_id, &root));
    report.result("proofRoot", same("proofRoot", &receipt.proof_root, &root));
    report.result(
        "verification.proofRoot",
        same(
            "verification.proofRoot",
            &receipt.verification.proof_root,
            &root,
        ),
    );
    report.result(
        "verification.itemHashes",
        if receipt.verification.item_hashes == hashes {
            Ok(format!("lists the {n} itemHashes of the deltas in order"))
        } else {
            Err("differs from the itemHashes of the listed deltas".into())
        },
    );

    // 4. Counts.
    report.result(
        "deltasCount",
        if receipt.deltas_count == n as u64 && receipt.proof.items.len() == n {
            Ok(format!("{n} deltas, {n} proofs"))
        } else {
            Err(format!(
                "deltasCount {} but {n} deltas listed and {} proofs",
                receipt.deltas_count,
                receipt.proof.items.len()
            ))
        },
    );

    // 5. Each delta.
    for (i, d) in receipt.deltas.iter().enumerate() {
        let Some(item) = receipt.proof.items.get(i) else {
            report.push(
                format!("deltas[{i}].proof"),
                false,
                "no proof item for this delta",
            );
            continue;
        };
        let matches = item.anchor_id == d.anchor_id
            && item.item_hash.ct_eq(&d.item_hash)
            && item.delta == d.delta;
        report.result(
            format!("deltas[{i}].proofItem"),
            if matches {
                Ok("proof item names the same anchorId, itemHash and delta".into())
            } else {
                Err(format!(
                    "proof item ({}, {}, {}) differs from the delta ({}, {}, {})",
                    item.anchor_id, item.item_hash, item.delta, d.anchor_id, d.item_hash, d.delta
                ))
            },
        );
        let recomputed = match &item.raw {
            None if d.data_purged => Ok("skipped: raw data purged by retention; whoever kept it can still recompute the hash".into()),
            None => Ok("skipped: raw data not included in this receipt".into()),
            Some(raw) => {
                if raw.anchor_id != d.anchor_id || raw.customer_id != receipt.customer_id || raw.delta != d.delta {
                    Err("raw content names another anchorId, customerId or delta".into())
                } else {
                    match item_hash(raw) {
                        Ok(h) if h.ct_eq(&d.item_hash) => Ok(format!("recomputed from raw content: {h}")),
                        Ok(h) => Err(format!("raw content hashes to {h}, the receipt says {}", d.item_hash)),
                        Err(e) => Err(e.to_string()),
                    }
                }
            }
        };
        report.result(format!("deltas[{i}].itemHash"), recomputed);
        let inclusion = match &head {
            None => Err("cannot check: the tree head did not verify".to_string()),
            Some(h) => merkle::verify_inclusion(
                &item.inclusion_proof,
                item.leaf_index,
                h.size,
                &h.root,
                &d.item_hash,
            )
            .map(|()| {
                format!(
                    "leaf {} of the signed tree of size {}",
                    item.leaf_index, h.size
                )
            })
            .map_err(|e| e.to_string()),
        };
        report.result(format!("deltas[{i}].inclusion"), inclusion);
    }

    // 6. Balance.
    let replayed = receipt
        .deltas
        .iter()
        .try_fold(receipt.starting_balance, |acc, d| acc.checked_add(d.delta));
    report.result(
        "finalBalance",
        match replayed {
            Ok(b) if b == receipt.final_balance => {
                Ok(format!("{} + {n} deltas = {b}", receipt.starting_balance))
            }
            Ok(b) => Err(format!(
                "{} + {n} deltas = {b}, the receipt says {}",
                receipt.starting_balance, receipt.final_balance
            )),
            Err(e) => Err(format!("replaying the deltas: {e}")),
        },
    );
    report
}

/// A submission's `itemsRoot` (= `receiptId`) is the root over its
/// `itemHashes` in order.
///
/// # Errors
/// [`ProofError::RootMismatch`].
pub fn verify_submission(item_hashes: &[Hash32], items_root: &Hash32) -> Result<(), ProofError> {
    if merkle::root(item_hashes).ct_eq(items_root) {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadsError {
    #[error("old tree head: {0}")]
    OldHead(NoteError),
    #[error("new tree head: {0}")]
    NewHead(NoteError),
    #[error("consistency proof: {0}")]
    Proof(ProofError),
}

/// Checks two signed tree heads of the same log and the consistency proof
/// between them: the newer tree extends the older one, so no verified item
/// was rewritten or removed. Returns both heads.
///
/// # Errors
/// [`HeadsError`] naming the head or the proof check that failed.
pub fn verify_consistency_between_heads(
    old_note: &str,
    new_note: &str,
    proof: &[Hash32],
    verifier_key: &str,
) -> Result<(TreeHead, TreeHead), HeadsError> {
    let old = note::verify_tree_head(old_note, verifier_key).map_err(HeadsError::OldHead)?;
    let new = note::verify_tree_head(new_note, verifier_key).map_err(HeadsError::NewHead)?;
    merkle::verify_consistency(proof, old.size, &old.root, new.size, &new.root)
        .map_err(HeadsError::Proof)?;
    Ok((old, new))
}

/// Replays a balance (exposed for clients that verify a page of deltas).
///
/// # Errors
/// On overflow.
pub fn replay_balance(
    starting: Amount,
    deltas: &[Amount],
) -> Result<Amount, crate::amount::AmountError> {
    crate::derive::replay(starting, deltas)
}
