//! A receipt (`GET /api/v1/balance/receipt/...`): its key, signed head,
//! roots, deltas and balance.

use super::VerificationReport;
use super::UNKNOWN_SCHEME;
use super::{key_check, read_document, same, scheme_check, Detail, DocumentError, KeyWords};
use crate::derive::DerivedDelta;
use crate::hash::Hash32;
use crate::item::item_hash;
use crate::merkle::{self, HashScheme};
use crate::note::{self, TreeHead};
use crate::receipt::{ProvenItem, ProvenRefusal, Receipt};

/// Most deltas a receipt may list for verification; bounds browser work. // spec: silent; 100k deltas verify in well under a second natively
pub const RECEIPT_DELTAS_MAX: usize = 100_000;

/// Verifies a receipt given as JSON text (amounts are read exactly from
/// the text, never through a float).
pub fn verify_receipt_json(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    verify_receipt_text(text, false, trusted_public_key)
}

/// Reads a receipt from `text` (see [`read_document`]) and verifies it; a
/// text that is not a receipt is one failed `parse` check.
fn verify_receipt_text(
    text: &str,
    envelope: bool,
    trusted_public_key: Option<&str>,
) -> VerificationReport {
    match read_document(text, envelope, "a receipt", Receipt::from_json) {
        Ok(receipt) => verify_receipt(&receipt, trusted_public_key),
        Err(e) => VerificationReport::failure("parse", e.to_string()),
    }
}

/// Verifies everything a receipt claims:
/// the key (pinned or not), the signed tree head, the log's hash scheme
/// (refused when unknown), each delta's itemHash
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
    let key = key_check(
        &mut report,
        "publicKey".into(),
        &receipt.proof.public_key,
        trusted_public_key,
        &KEY_WORDS,
    );
    let head = head_check(&mut report, receipt, key);
    let scheme = scheme_check(&mut report, "hashScheme".into(), &receipt.proof.hash_scheme);
    roots_checks(&mut report, receipt);
    count_check(&mut report, receipt);
    for (i, d) in receipt.deltas.iter().enumerate() {
        delta_checks(&mut report, receipt, i, d, head.as_ref(), scheme);
    }
    balance_check(&mut report, receipt);
    for (i, r) in receipt.refusals.iter().enumerate() {
        refusal_checks(&mut report, receipt, i, r, head.as_ref(), scheme);
    }
    report
}

/// Step 1, which key (see [`key_check`]).
const KEY_WORDS: KeyWords = KeyWords {
    same: "receipt names the trusted key",
    other: [
        "receipt names key ",
        ", the trusted key is ",
        "; checking against the trusted key",
    ],
    unpinned:
        "not pinned: using the key inside the receipt; compare it with the log's published key",
};

/// Step 2, the signed tree head, under `key`.
fn head_check(report: &mut VerificationReport, receipt: &Receipt, key: &str) -> Option<TreeHead> {
    match note::verify_tree_head(&receipt.proof.tree_head, key) {
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
    }
}

/// Step 3, the roots over the listed itemHashes.
fn roots_checks(report: &mut VerificationReport, receipt: &Receipt) {
    let n = receipt.deltas.len();
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
}

/// Step 4, the counts of deltas and proofs.
fn count_check(report: &mut VerificationReport, receipt: &Receipt) {
    let n = receipt.deltas.len();
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
}

/// Step 5, delta `i`: its proof item, its itemHash (from raw content when
/// present) and its inclusion into the signed head.
fn delta_checks(
    report: &mut VerificationReport,
    receipt: &Receipt,
    i: usize,
    d: &DerivedDelta,
    head: Option<&TreeHead>,
    scheme: Option<HashScheme>,
) {
    let Some(item) = receipt.proof.items.get(i) else {
        report.push(
            format!("deltas[{i}].proof"),
            false,
            "no proof item for this delta",
        );
        return;
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
    report.result(
        format!("deltas[{i}].itemHash"),
        recomputed_hash(receipt, item, d),
    );
    let inclusion = match (head, scheme) {
        (None, _) => Err("cannot check: the tree head did not verify".to_string()),
        (_, None) => Err(UNKNOWN_SCHEME.to_string()),
        (Some(h), Some(scheme)) => scheme
            .verify_inclusion(
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

/// A delta's itemHash recomputed from the raw content its proof item
/// carries, or why it was skipped.
fn recomputed_hash(receipt: &Receipt, item: &ProvenItem, d: &DerivedDelta) -> Detail {
    match &item.raw {
        None if d.data_purged => Ok(
            "skipped: raw data purged by retention; whoever kept it can still recompute the hash"
                .into(),
        ),
        None => Ok("skipped: raw data not included in this receipt".into()),
        Some(raw) => {
            if raw.anchor_id != d.anchor_id
                || raw.customer_id != receipt.customer_id
                || raw.delta != d.delta
            {
                Err("raw content names another anchorId, customerId or delta".into())
            } else if raw.asset != receipt.asset {
                Err("raw content names another asset than the receipt".into())
            } else {
                match item_hash(raw) {
                    Ok(h) if h.ct_eq(&d.item_hash) => {
                        Ok(format!("recomputed from raw content: {h}"))
                    }
                    Ok(h) => Err(format!(
                        "raw content hashes to {h}, the receipt says {}",
                        d.item_hash
                    )),
                    Err(e) => Err(e.to_string()),
                }
            }
        }
    }
}

/// Step 6, the balance replayed from startingBalance through each delta.
fn balance_check(report: &mut VerificationReport, receipt: &Receipt) {
    let n = receipt.deltas.len();
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
}

/// Reads a receipt saved from the API (the whole answer or its `data`),
/// as [`verify_receipt_document`] does before checking it.
///
/// # Errors
/// Too large, not JSON, or the first field that is not a receipt's.
pub fn read_receipt_document(text: &str) -> Result<Receipt, DocumentError> {
    read_document(text, true, "a receipt", Receipt::from_json)
}

/// As [`verify_receipt_json`], for the receipt route's whole answer
/// (`{success, statusCode, data: <receipt>}`) or its `data` alone.
pub fn verify_receipt_document(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    verify_receipt_text(text, true, trusted_public_key)
}

/// Step 7, refusal `i` (issue 43): its item recomputed from its fields and
/// the receipt's customer and asset, its inclusion into the signed head,
/// its condition failing at the position it names, that position being
/// the receipt's own running balance there, and the refused delta counted
/// nowhere in the receipt.
fn refusal_checks(
    report: &mut VerificationReport,
    receipt: &Receipt,
    i: usize,
    r: &ProvenRefusal,
    head: Option<&TreeHead>,
    scheme: Option<HashScheme>,
) {
    let name = |what: &str| format!("refusals[{i}].{what}");
    let item = r.refusal(&receipt.customer_id, &receipt.asset);
    report.result(
        name("refusalHash"),
        match &item {
            None => Err("code and condition do not go together".into()),
            Some(item) if item.hash().ct_eq(&r.refusal_hash) => {
                Ok(format!("recomputed: {}", r.refusal_hash))
            }
            Some(item) => Err(format!("the refusal hashes to {}", item.hash())),
        },
    );
    let inclusion = match (head, scheme) {
        (Some(h), Some(scheme)) => scheme
            .verify_inclusion(
                &r.inclusion_proof,
                r.leaf_index,
                h.size,
                &h.root,
                &r.refusal_hash,
            )
            .map(|()| format!("leaf {} of the signed tree", r.leaf_index))
            .map_err(|e| e.to_string()),
        _ => Err("cannot check: the tree head or hash scheme did not verify".into()),
    };
    report.result(name("inclusion"), inclusion);
    let counted = receipt
        .deltas
        .iter()
        .any(|d| d.item_hash.ct_eq(&r.item_hash));
    let justified = item.as_ref().is_some_and(|item| item.is_justified());
    report.result(
        name("position"),
        if counted {
            Err("the refused delta is counted among the deltas".into())
        } else if !justified {
            Err(format!(
                "{} at sequence {} with balance {} does not fail its condition",
                r.delta, r.sequence, r.balance
            ))
        } else {
            position_check(receipt, r)
        },
    );
}

/// The refusal's `sequence` and `balance` against the receipt's own
/// running balance (`startingBalance` after `startingSequence` deltas).
fn position_check(receipt: &Receipt, r: &ProvenRefusal) -> Detail {
    let base = match (receipt.starting_sequence, &receipt.period) {
        (Some(base), _) => base,
        (None, None) => 0,
        (None, Some(_)) => return Err("startingSequence is missing".into()),
    };
    let k = r.sequence.checked_sub(base).map(|k| k as usize);
    let Some(k) = k.filter(|k| *k <= receipt.deltas.len()) else {
        return Err(format!("sequence {} is outside the receipt", r.sequence));
    };
    let at = receipt.deltas[..k]
        .iter()
        .try_fold(receipt.starting_balance, |acc, d| acc.checked_add(d.delta));
    match at {
        Ok(b) if b == r.balance => Ok(format!(
            "refused at sequence {} with balance {b}, as the deltas before it add up",
            r.sequence
        )),
        Ok(b) => Err(format!(
            "the deltas before it add up to {b}, the refusal says {}",
            r.balance
        )),
        Err(e) => Err(e.to_string()),
    }
}
