//! A public verification answer (`GET /api/v1/verify/{proofRoot}`), one
//! page or all of them.

use super::RECEIPT_DELTAS_MAX;
use super::{
    inclusion_detail, inclusion_of, read_document, same, scheme_check, Detail, DocumentError,
};
use super::{key_check, KeyWords, VerificationReport};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::merkle;
use crate::note::{self, TreeHead};
pub use crate::receipt::LogRef;
use serde::{Deserialize, Serialize};

/// Most pages of a public verification answer checked together. // spec: silent; VERIFY_RECORDS_MAX per page keeps 1,000 pages in the same work bound as RECEIPT_DELTAS_MAX
pub const PUBLIC_PAGES_MAX: usize = 1_000;

/// Reads one page of a public verification answer saved from the API
/// (the whole answer or its `data`).
///
/// # Errors
/// Too large, not JSON, or the first field that is not an answer's.
pub fn read_public_answer_document(text: &str) -> Result<PublicAnswer, DocumentError> {
    read_document(
        text,
        true,
        "a public verification answer",
        PublicAnswer::from_json,
    )
}

// ------------------------------------------------------------------ public verification answers

/// `GET /api/v1/verify/{proofRoot}` data (docs/proofs-api.md): the worker
/// builds its answer as these types, and the verifiers read them. Fields
/// the checks do not need are kept as optional text, for display; fields
/// are declared in the order the answer lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicAnswer {
    pub verified: bool,
    pub summary: PublicSummary,
    #[serde(default)]
    pub records: Vec<PublicRecord>,
    pub verification: PublicProof,
    /// Which page of the records this is (the service always sends it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagination: Option<RecordsPagination>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicSummary {
    /// `submission`, `checkpoint` or `receipt`.
    pub kind: String,
    pub environment: String,
    pub proof_root: Hash32,
    pub item_count: u64,
    /// The records' net amount; absent when amounts are withheld (a root
    /// over several ledgers' deltas: `amounts_withheld`) and when the
    /// records are of several assets (amounts of different assets are
    /// never added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_amount: Option<Amount>,
    #[serde(default)]
    pub period: Option<String>,
    /// The ledger every record belongs to, when they all share one.
    #[serde(default)]
    pub ledger_id: Option<String>,
    #[serde(default)]
    pub first_verified_at: Option<String>,
    #[serde(default)]
    pub last_verified_at: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    /// Every kind of object the root names (`checkpoint`, `submission`,
    /// `receipt`), the one shown (`kind`) first: two objects over the
    /// same deltas share one root, and `?kind=` shows each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issued_as: Vec<String>,
    /// The root covers several ledgers' deltas (a batch's items root): no
    /// record shows its amount, ledger or itemHash (issue 40: a ledger's
    /// item hashes recompute the root its customer was given), only its
    /// log leaf hash (`logLeafHash`), and the page's `itemsRoot` is the
    /// proof root itself; `recordsCheck` says the service computed the root
    /// over the records itself when it issued it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub amounts_withheld: bool,
    /// A checkpoint's: whether the records listed (every page of them)
    /// recompute its merkleRoot, checked once by the service: `passed`,
    /// `failed`, or `pending` until checked. A withheld answer's
    /// (`amounts_withheld`): `passed`, the service computed the root over
    /// the records' item hashes itself when it issued it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_check: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicRecord {
    pub anchor_id: String,
    /// Absent in a withheld answer (`amounts_withheld`), which shows
    /// `log_leaf_hash` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_hash: Option<Hash32>,
    /// The record's leaf in the log under the answer's hash scheme
    /// (`bvs-log-v1`: SHA-256(0x00 ‖ tag ‖ itemHash)): what a withheld
    /// answer shows instead of the itemHash. No root the verify route
    /// accepts is made of log leaves (docs/hashes.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_leaf_hash: Option<Hash32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_id: Option<String>,
    /// Absent when the answer withholds amounts (`amounts_withheld`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<Amount>,
    /// The delta's asset (issue 43); absent for the default asset and
    /// when amounts are withheld.
    #[serde(default, skip_serializing_if = "crate::types::Asset::is_default")]
    pub asset: crate::types::Asset,
    /// `None` while the item is not yet in the log (QUEUED).
    #[serde(default)]
    pub leaf_index: Option<merkle::LeafIndex>,
    #[serde(default)]
    pub inclusion_proof: Vec<Hash32>,
    #[serde(default)]
    pub block_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_timestamp: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicProof {
    /// Where the log's latest checkpoint is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_ledger_url: Option<String>,
    /// How the log hashes its leaves (see [`HashScheme`](merkle::HashScheme)).
    pub hash_scheme: String,
    pub tree_head: String,
    pub tree_size: merkle::TreeSize,
    pub public_key: String,
    /// The log (shard) the answer is proven in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogRef>,
    /// Whether a quorum of the log's witnesses cosigned `tree_head`
    /// (issue 28; the cosignature lines are in the note). Set by the
    /// service; verifiers check the cosignatures themselves, so readers
    /// leave it `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<bool>,
    pub items_root: Hash32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_leaf: Option<CheckpointLeaf>,
    /// How to check the answer, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointLeaf {
    pub item_hash: Hash32,
    pub leaf_index: merkle::LeafIndex,
    pub inclusion_proof: Vec<Hash32>,
}

/// One page of a public answer's records (`?limit=&offset=`) and how many
/// there are in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsPagination {
    pub limit: u64,
    pub offset: u64,
    pub total: u64,
}

// The reading (`PublicAnswer::from_json`) is in read.rs.
mod read;

/// Verifies a public verification answer, given as the text of each page
/// (`?offset=` pages of one root, or just one), each either the whole
/// answer or its `data`: each page's signed tree head (against
/// `trusted_public_key`, or the key the page names when none is pinned),
/// each page's hash scheme (refused when unknown),
/// every record's inclusion proof into its page's head, the checkpoint's
/// own leaf, and, once every record is there, the RFC 9162 root over the
/// records' itemHashes against the proof root, the item count and the net
/// amount. `expected_root` is the root that was asked for.
pub fn verify_public_answer(
    pages: &[&str],
    expected_root: Option<&str>,
    trusted_public_key: Option<&str>,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let Some(answers) = read_pages(&mut report, pages) else {
        return report;
    };
    root_checks(&mut report, &answers, expected_root);
    let mut index = 0usize;
    for (p, a) in answers.iter().enumerate() {
        let prefix = if answers.len() == 1 {
            String::new()
        } else {
            format!("pages[{p}].")
        };
        page_checks(&mut report, &prefix, a, trusted_public_key, &mut index);
    }
    totals_checks(&mut report, &answers);
    let first = &answers[0];
    report.result(
        "verified",
        match (first.verified, report.ok) {
            (true, true) => Ok("the service says verified, and every check above agrees".into()),
            (false, _) => Err(format!(
                "the service says not verified yet (status {})",
                first.summary.status.as_deref().unwrap_or("unknown")
            )),
            (true, false) => Err("the service says verified, but a check above failed".into()),
        },
    );
    report
}

/// Reads every page, within the page and record bounds; `None` (with the
/// failed check in `report`) when one cannot be read or a bound is passed.
/// The answers returned are never empty.
fn read_pages(report: &mut VerificationReport, pages: &[&str]) -> Option<Vec<PublicAnswer>> {
    if pages.is_empty() || pages.len() > PUBLIC_PAGES_MAX {
        report.push(
            "parse",
            false,
            format!(
                "expected 1 to {PUBLIC_PAGES_MAX} pages, got {}",
                pages.len()
            ),
        );
        return None;
    }
    let mut answers = Vec::with_capacity(pages.len());
    for (p, text) in pages.iter().enumerate() {
        let name = if pages.len() == 1 {
            "parse".to_string()
        } else {
            format!("pages[{p}].parse")
        };
        match read_document(
            text,
            true,
            "a public verification answer",
            PublicAnswer::from_json,
        ) {
            Ok(a) => answers.push(a),
            Err(e) => {
                report.push(name, false, e.to_string());
                return None;
            }
        }
    }
    let records: usize = answers.iter().map(|a| a.records.len()).sum();
    if records > RECEIPT_DELTAS_MAX {
        report.push(
            "itemCount",
            false,
            format!("{records} records exceed the verifiable maximum of {RECEIPT_DELTAS_MAX}"),
        );
        return None;
    }
    Some(answers)
}

/// Step 1, the root asked for, and pages that agree with each other.
fn root_checks(report: &mut VerificationReport, answers: &[PublicAnswer], expected: Option<&str>) {
    let first = &answers[0].summary;
    let root = first.proof_root;
    report.result(
        "proofRoot",
        match expected.map(Hash32::parse) {
            None => Ok(format!("answer is about {root}")),
            Some(Ok(want)) => same("summary.proofRoot", &root, &want),
            Some(Err(e)) => Err(format!("the root asked for is not a hash: {e}")),
        },
    );
    if answers.len() > 1 {
        let agree = answers.iter().all(|a| {
            a.summary.proof_root.ct_eq(&root)
                && a.summary.kind == first.kind
                && a.summary.environment == first.environment
                && a.summary.item_count == first.item_count
        });
        report.result(
            "pages",
            if agree {
                Ok(format!("{} pages of the same answer", answers.len()))
            } else {
                Err("pages describe different roots, kinds, environments or counts".into())
            },
        );
    }
}

/// Step 2, one page: its key, its signed head, its hash scheme, its items root,
/// then each record (numbered from `index` across pages) and the
/// checkpoint's own leaf against the page's head.
fn page_checks(
    report: &mut VerificationReport,
    prefix: &str,
    a: &PublicAnswer,
    trusted_public_key: Option<&str>,
    index: &mut usize,
) {
    let key = key_check(
        report,
        format!("{prefix}publicKey"),
        &a.verification.public_key,
        trusted_public_key,
        &KEY_WORDS,
    );
    let head = page_head(report, prefix, a, key);
    let scheme = scheme_check(
        report,
        format!("{prefix}hashScheme"),
        &a.verification.hash_scheme,
    );
    // Withheld (issue 40): the page names only the root asked for.
    let page_hashes: Vec<Hash32> = a.records.iter().filter_map(|r| r.item_hash).collect();
    let want = if a.summary.amounts_withheld {
        a.summary.proof_root
    } else {
        merkle::root(&page_hashes)
    };
    report.result(
        format!("{prefix}verification.itemsRoot"),
        same("verification.itemsRoot", &a.verification.items_root, &want),
    );
    for r in &a.records {
        let check = match r.leaf_index {
            None => Err(format!(
                "{} is not in the log yet (queued): nothing to check until it is",
                r.anchor_id
            )),
            // A withheld answer's record: its log leaf hash, as it is.
            Some(leaf) => match r.item_hash.or(r.log_leaf_hash) {
                Some(h) => inclusion_of(
                    &r.inclusion_proof,
                    leaf,
                    head.as_ref(),
                    scheme,
                    &h,
                    r.item_hash.is_none(),
                ),
                None => Err(MIXED.into()),
            },
        };
        report.result(format!("records[{index}].inclusion"), check);
        *index += 1;
    }
    if let Some(c) = &a.verification.checkpoint_leaf {
        report.result(
            format!("{prefix}checkpointLeaf.inclusion"),
            inclusion_detail(
                &c.inclusion_proof,
                c.leaf_index,
                head.as_ref(),
                scheme,
                &c.item_hash,
            ),
        );
    }
}

/// A withheld answer's records (issue 40) show log leaves, not itemHashes,
/// and the service's own check of the root stands in for recomputing it.
const WITHHELD_ROOT: &str = "withheld: checked by the service (recordsCheck)";
/// Records that show itemHashes in a withheld answer, or neither hash.
const MIXED: &str = "itemHash shown while withheld, or missing";

/// A page's key (see [`key_check`]).
const KEY_WORDS: KeyWords = KeyWords {
    same: "the answer names the log's published key",
    other: [
        "the answer names key ",
        ", the log publishes ",
        "; checking against the published key",
    ],
    unpinned:
        "not pinned: using the key inside the answer; compare it with the log's published key",
};

/// A page's signed tree head under `key`, and its `treeSize` against the
/// signed size.
fn page_head(
    report: &mut VerificationReport,
    prefix: &str,
    a: &PublicAnswer,
    key: &str,
) -> Option<TreeHead> {
    match note::verify_tree_head(&a.verification.tree_head, key) {
        Ok(h) => {
            report.push(
                format!("{prefix}treeHead"),
                true,
                format!("signed by {}: size {}, root {}", h.origin, h.size, h.root),
            );
            report.result(
                format!("{prefix}treeSize"),
                if h.size == a.verification.tree_size {
                    Ok(format!("treeSize {} is the signed size", h.size))
                } else {
                    Err(format!(
                        "treeSize says {}, the signed head says {}",
                        a.verification.tree_size, h.size
                    ))
                },
            );
            Some(h)
        }
        Err(e) => {
            report.push(format!("{prefix}treeHead"), false, e.to_string());
            None
        }
    }
}

/// Step 3, the root over every record, the count and the net amount (the root
/// and the amount only once every record is there), and a checkpoint's
/// own leaf against the root.
fn totals_checks(report: &mut VerificationReport, answers: &[PublicAnswer]) {
    let first = &answers[0].summary;
    let root = first.proof_root;
    let all: Vec<&PublicRecord> = answers.iter().flat_map(|a| a.records.iter()).collect();
    let n = all.len() as u64;
    let complete = n == first.item_count;
    report.result(
        "itemCount",
        if complete {
            Ok(format!("{n} records, as the summary says"))
        } else {
            Err(format!(
                "{n} records listed, the summary says {}: fetch every page to check the root",
                first.item_count
            ))
        },
    );
    let hashes: Vec<Hash32> = all.iter().filter_map(|r| r.item_hash).collect();
    if first.kind == "checkpoint" {
        match &answers[0].verification.checkpoint_leaf {
            None => report.push(
                "checkpointLeaf",
                false,
                "a checkpoint's root is not in the log yet (not committed)",
            ),
            Some(c) => {
                report.result(
                    "checkpointLeaf",
                    same("checkpointLeaf.itemHash", &c.item_hash, &root),
                );
            }
        }
    }
    if complete {
        report.result(
            "itemsRoot",
            if !first.amounts_withheld {
                same(
                    "the root over the records' itemHashes",
                    &merkle::root(&hashes),
                    &root,
                )
            } else if hashes.is_empty() && first.records_check.as_deref() == Some("passed") {
                Ok(WITHHELD_ROOT.into())
            } else {
                Err(MIXED.into())
            },
        );
        report.result("netAmount", net_amount_check(&all, first.net_amount));
    }
}

/// The records' amounts against the summary's net amount; an answer that
/// withholds amounts (a root over several ledgers) withholds every one of
/// them and the total.
fn net_amount_check(all: &[&PublicRecord], net: Option<Amount>) -> Detail {
    let n = all.len();
    let amounts: Option<Vec<Amount>> = all.iter().map(|r| r.delta).collect();
    match (amounts, net) {
        (Some(amounts), Some(net)) => match Amount::checked_sum(amounts) {
            Ok(s) if s == net => Ok(format!("the {n} deltas add up to {s}")),
            Ok(s) => Err(format!(
                "the {n} deltas add up to {s}, the summary says {net}"
            )),
            Err(e) => Err(format!("adding the deltas: {e}")),
        },
        (Some(_), None) if all.iter().any(|r| r.asset != all[0].asset) => {
            Ok("the deltas are of several assets: each stands apart, nothing to add up".into())
        }
        (None, None) if all.iter().all(|r| r.delta.is_none()) => {
            Ok("amounts are withheld (the root spans several ledgers): nothing to add up".into())
        }
        _ => Err("some amounts are shown and others withheld".into()),
    }
}
