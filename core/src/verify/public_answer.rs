//! A public verification answer (`GET /api/v1/verify/{proofRoot}`), one
//! page or all of them.

use super::RECEIPT_DELTAS_MAX;
use super::{inclusion_detail, read_document, same, scheme_check, Detail, DocumentError};
use super::{key_check, KeyWords, VerificationReport};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::json;
use crate::merkle;
use crate::note::{self, TreeHead};
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
    /// over several ledgers' deltas: `amounts_withheld`).
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
    /// record shows its amount or ledger, so whoever holds the root learns
    /// no customer's amounts; the itemHashes still recompute the root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub amounts_withheld: bool,
    /// A checkpoint's: whether the records listed (every page of them)
    /// recompute its merkleRoot, checked once by the service: `passed`,
    /// `failed`, or `pending` until checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_check: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicRecord {
    pub anchor_id: String,
    pub item_hash: Hash32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_id: Option<String>,
    /// Absent when the answer withholds amounts (`amounts_withheld`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<Amount>,
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

/// How a document names its log: environment, shard, the log's path name
/// and origin, and where to read its checkpoint and key (the log list has
/// the same). Fields in the order the service has always listed them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRef {
    pub checkpoint_url: String,
    pub environment: String,
    pub key_url: String,
    pub name: String,
    pub origin: String,
    pub shard: u64,
}

/// One page of a public answer's records (`?limit=&offset=`) and how many
/// there are in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsPagination {
    pub limit: u64,
    pub offset: u64,
    pub total: u64,
}

impl PublicAnswer {
    /// Reads the `data` of a public verification answer from a parsed
    /// JSON value with [`crate::json`], as the serde derive would, but for
    /// the fields shown and never checked (`ledgerId`, `publicLedgerUrl`,
    /// `log`, `message`, `pagination`), which stay `None`: the browser
    /// verifier holds only the reading its checks need (its size budget).
    ///
    /// # Errors
    /// The first field that is missing or malformed, by its path.
    pub fn from_json(value: &json::Value) -> Result<PublicAnswer, crate::error::FieldError> {
        Self::read(value).map_err(|e| *e)
    }

    fn read(value: &json::Value) -> Result<PublicAnswer, json::ReadError> {
        // Borrowed and Copy fields first, owned ones last (see
        // `Receipt::from_json`): nothing owned is built before the last
        // field that can fail is read (the browser verifier's size).
        let f = json::Fields::of(value, String::new())?;
        let s = f.object("summary")?;
        let v = f.object("verification")?;
        let verified = f.bool("verified")?;
        let kind = s.string("kind")?;
        let environment = s.string("environment")?;
        let proof_root = s.hash("proofRoot")?;
        let item_count = s.u64("itemCount")?;
        let net_amount = match s.optional("netAmount") {
            None => None,
            Some(_) => Some(s.amount("netAmount")?),
        };
        let period = s.optional_string("period")?;
        let status = s.optional_string("status")?;
        let first_verified_at = s.optional_string("firstVerifiedAt")?;
        let last_verified_at = s.optional_string("lastVerifiedAt")?;
        let hash_scheme = v.string("hashScheme")?;
        let tree_head = v.string("treeHead")?;
        let tree_size = merkle::TreeSize(v.u64("treeSize")?);
        let public_key = v.string("publicKey")?;
        let items_root = v.hash("itemsRoot")?;
        let checkpoint_leaf = Self::read_checkpoint_leaf(&v)?;
        Ok(PublicAnswer {
            records: f.each("records", false, Self::read_record)?,
            verified,
            summary: PublicSummary {
                kind: kind.to_owned(),
                environment: environment.to_owned(),
                proof_root,
                item_count,
                net_amount,
                period: owned(period),
                ledger_id: None,
                first_verified_at: owned(first_verified_at),
                last_verified_at: owned(last_verified_at),
                status: owned(status),
                issued_as: Vec::new(),
                amounts_withheld: false,
                records_check: None,
            },
            verification: PublicProof {
                public_ledger_url: None,
                hash_scheme: hash_scheme.to_owned(),
                tree_head: tree_head.to_owned(),
                tree_size,
                public_key: public_key.to_owned(),
                log: None,
                items_root,
                checkpoint_leaf,
                message: None,
            },
            pagination: None,
        })
    }

    fn read_checkpoint_leaf(
        v: &json::Fields<'_>,
    ) -> Result<Option<CheckpointLeaf>, json::ReadError> {
        if v.optional("checkpointLeaf").is_none() {
            return Ok(None);
        }
        let c = v.object("checkpointLeaf")?;
        let item_hash = c.hash("itemHash")?;
        let leaf_index = merkle::LeafIndex(c.u64("leafIndex")?);
        Ok(Some(CheckpointLeaf {
            inclusion_proof: c.hashes("inclusionProof", true)?,
            item_hash,
            leaf_index,
        }))
    }

    fn read_record(r: &json::Fields<'_>) -> Result<PublicRecord, json::ReadError> {
        let anchor_id = r.string("anchorId")?;
        let item_hash = r.hash("itemHash")?;
        let delta = match r.optional("delta") {
            None => None,
            Some(_) => Some(r.amount("delta")?),
        };
        let leaf_index = match r.optional("leafIndex") {
            None => None,
            Some(_) => Some(merkle::LeafIndex(r.u64("leafIndex")?)),
        };
        let block_timestamp = r.optional_string("blockTimestamp")?;
        let declared_timestamp = r.optional_string("declaredTimestamp")?;
        Ok(PublicRecord {
            inclusion_proof: r.hashes("inclusionProof", false)?,
            anchor_id: anchor_id.to_owned(),
            item_hash,
            ledger_id: None,
            delta,
            leaf_index,
            block_timestamp: owned(block_timestamp),
            declared_timestamp: owned(declared_timestamp),
        })
    }
}

fn owned(t: Option<&str>) -> Option<String> {
    t.map(str::to_owned)
}

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
    let page_hashes: Vec<Hash32> = a.records.iter().map(|r| r.item_hash).collect();
    report.result(
        format!("{prefix}verification.itemsRoot"),
        same(
            "verification.itemsRoot",
            &a.verification.items_root,
            &merkle::root(&page_hashes),
        ),
    );
    for r in &a.records {
        let check = match r.leaf_index {
            None => Err(format!(
                "{} is not in the log yet (queued): nothing to check until it is",
                r.anchor_id
            )),
            Some(leaf) => inclusion_detail(
                &r.inclusion_proof,
                leaf,
                head.as_ref(),
                scheme,
                &r.item_hash,
            ),
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
    let hashes: Vec<Hash32> = all.iter().map(|r| r.item_hash).collect();
    let over_records = merkle::root(&hashes);
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
            same(
                "the root over the records' itemHashes",
                &over_records,
                &root,
            ),
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
        (None, None) if all.iter().all(|r| r.delta.is_none()) => {
            Ok("amounts are withheld (the root spans several ledgers): nothing to add up".into())
        }
        _ => Err("some amounts are shown and others withheld".into()),
    }
}
