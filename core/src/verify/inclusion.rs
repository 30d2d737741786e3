//! Inclusion: a proof answer, a submission's root, a C2SP tlog-proof file.

use super::{inclusion_detail, parse_hashes, read_document, same, scheme_check};
use super::{push_witness_checks, VerificationReport, UNKNOWN_SCHEME};
use crate::amount::Amount;
use crate::cosignature::Freshness;
use crate::hash::Hash32;
use crate::json;
use crate::merkle::{self, ProofError};
use crate::note;
use crate::policy::Policy;
use crate::tlog_proof::TlogProof;

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

/// `item_hash` is leaf `leaf_index` of the log of `tree_size` with `root`,
/// whose leaves are hashed by `hash_scheme` (the inclusion answer's
/// `hashScheme`; refused when unknown).
pub fn inclusion_report(
    item_hash: &str,
    leaf_index: u64,
    tree_size: u64,
    root: &str,
    proof: &[String],
    hash_scheme: &str,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let Some(scheme) = scheme_check(&mut report, "hashScheme".into(), hash_scheme) else {
        report.push("inclusion", false, UNKNOWN_SCHEME);
        return report;
    };
    let parsed = Hash32::parse(item_hash)
        .map_err(|e| format!("itemHash {e}"))
        .and_then(|item| Ok((item, Hash32::parse(root).map_err(|e| format!("root {e}"))?)))
        .and_then(|(item, root)| Ok((item, root, parse_hashes("proof", proof)?)));
    report.result(
        "inclusion",
        parsed.and_then(|(item, root, proof)| {
            scheme
                .verify_inclusion(
                    &proof,
                    merkle::LeafIndex(leaf_index),
                    merkle::TreeSize(tree_size),
                    &root,
                    &item,
                )
                .map(|()| {
                    format!(
                    "{item} is leaf {leaf_index} of the tree of size {tree_size} with root {root}"
                )
                })
                .map_err(|e| e.to_string())
        }),
    );
    report
}

/// One answer of `GET /api/v1/log/{env}/proof/inclusion` (enveloped or
/// not), as a report: its hash scheme (refused when unknown), its signed
/// tree head against `verifier_key`, `treeSize` against the signed size,
/// and the item's inclusion proof into the signed root.
pub fn inclusion_answer_report(text: &str, verifier_key: &str) -> VerificationReport {
    struct Answer {
        hash_scheme: String,
        item_hash: Hash32,
        leaf_index: u64,
        tree_size: u64,
        proof: Vec<Hash32>,
        tree_head: String,
    }
    let read = |v: &json::Value| -> Result<Answer, crate::error::FieldError> {
        let f = json::Fields::of(v, String::new()).map_err(|e| *e)?;
        Ok(Answer {
            hash_scheme: f.string("hashScheme").map_err(|e| *e)?.to_owned(),
            item_hash: f.hash("itemHash").map_err(|e| *e)?,
            leaf_index: f.u64("leafIndex").map_err(|e| *e)?,
            tree_size: f.u64("treeSize").map_err(|e| *e)?,
            proof: f.hashes("inclusionProof", true).map_err(|e| *e)?,
            tree_head: f.string("treeHead").map_err(|e| *e)?.to_owned(),
        })
    };
    let a = match read_document(text, true, "an inclusion proof answer", read) {
        Ok(a) => a,
        Err(e) => return VerificationReport::failure("parse", e.to_string()),
    };
    let mut report = VerificationReport::new();
    let scheme = scheme_check(&mut report, "hashScheme".into(), &a.hash_scheme);
    let head = match note::verify_tree_head(&a.tree_head, verifier_key) {
        Ok(h) => {
            report.push(
                "treeHead",
                true,
                format!("signed by {}: size {}, root {}", h.origin, h.size, h.root),
            );
            report.result(
                "treeSize",
                if h.size.0 == a.tree_size {
                    Ok(format!("treeSize {} is the signed size", h.size))
                } else {
                    Err(format!(
                        "treeSize says {}, the signed head says {}",
                        a.tree_size, h.size
                    ))
                },
            );
            Some(h)
        }
        Err(e) => {
            report.push("treeHead", false, e.to_string());
            None
        }
    };
    report.result(
        "inclusion",
        inclusion_detail(
            &a.proof,
            merkle::LeafIndex(a.leaf_index),
            head.as_ref(),
            scheme,
            &a.item_hash,
        ),
    );
    report
}

/// A submission's `itemsRoot` over its `itemHashes`, as a report.
pub fn submission_report(item_hashes: &[String], items_root: &str) -> VerificationReport {
    let mut report = VerificationReport::new();
    let parsed = parse_hashes("itemHashes", item_hashes)
        .map_err(|e| e.to_string())
        .and_then(|h| {
            Ok((
                h,
                Hash32::parse(items_root).map_err(|e| format!("itemsRoot {e}"))?,
            ))
        });
    report.result(
        "itemsRoot",
        parsed.and_then(|(hashes, want)| {
            same("the root over itemHashes", &merkle::root(&hashes), &want)
        }),
    );
    report
}

/// A C2SP tlog-proof file (`bvs-verify` exports one per receipt delta)
/// as a report: `parse`, `entry` (the itemHash its extra data names, and
/// `item` when the caller expects one), `treeHead` (the log's signature
/// with `log_key`), with a policy the witness checks (offline: a saved
/// proof's cosignatures count whatever their time), and `inclusion`.
pub fn tlog_proof_report(
    text: &str,
    log_key: &str,
    policy: Option<&Policy>,
    item: Option<&Hash32>,
) -> VerificationReport {
    let proof = match TlogProof::parse(text) {
        Ok(p) => p,
        Err(e) => return VerificationReport::failure("parse", e.to_string()),
    };
    let mut report = VerificationReport::new();
    let entry = proof.item().map_err(|e| e.to_string());
    report.result(
        "entry",
        match (&entry, item) {
            (Err(e), _) => Err(e.clone()),
            (Ok((_, got)), Some(want)) => same("the proven itemHash", got, want),
            (Ok((scheme, got)), None) => Ok(format!("itemHash {got}, leaf rule {}", scheme.rule())),
        },
    );
    let head = note::verify_tree_head(&proof.checkpoint, log_key.trim());
    report.result(
        "treeHead",
        head.as_ref()
            .map(|h| format!("signed by {}: size {}, root {}", h.origin, h.size, h.root))
            .map_err(ToString::to_string),
    );
    if let Some(policy) = policy {
        push_witness_checks(
            &mut report,
            "",
            &proof.checkpoint,
            log_key,
            policy,
            Freshness::Offline,
        );
    }
    let inclusion = match (entry, head.ok()) {
        (Ok((scheme, item)), h) => {
            inclusion_detail(&proof.proof, proof.index, h.as_ref(), Some(scheme), &item)
        }
        (Err(_), _) => Err("cannot check: no entry to prove".into()),
    };
    report.result("inclusion", inclusion);
    report
}
