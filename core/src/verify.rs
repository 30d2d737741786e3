//! Verification shared by server tests, the browser (verifier-wasm) and a
//! CLI. Nothing here panics; every failed check says precisely why.

use crate::amount::Amount;
use crate::cosignature::{CosignedNote, Freshness, WitnessKey};
use crate::hash::{item_hash, Hash32};
use crate::json;
use crate::merkle::{self, HashScheme, ProofError};
use crate::note::{self, NoteError, TreeHead};
use crate::policy::{Cosigned, Policy, Words};
use crate::receipt::Receipt;
use crate::tlog_proof::TlogProof;
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
    pub(crate) fn new() -> Self {
        Self {
            ok: true,
            checks: Vec::new(),
        }
    }

    /// A report of one failed check (input that could not be read).
    pub fn failure(name: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut report = Self::new();
        report.push(name, false, detail);
        report
    }

    pub(crate) fn push(&mut self, name: impl Into<String>, ok: bool, detail: impl Into<String>) {
        self.ok &= ok;
        self.checks.push(Check {
            name: name.into(),
            ok,
            detail: detail.into(),
        });
    }

    pub(crate) fn result(&mut self, name: impl Into<String>, r: Result<String, String>) {
        match r {
            Ok(d) => self.push(name, true, d),
            Err(d) => self.push(name, false, d),
        }
    }

    /// The report as JSON text, `{"ok":…,"checks":[{"name","ok","detail"}]}`
    /// (what the browser verifier returns; no serde on that path).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(64 + 96 * self.checks.len());
        out.push_str(if self.ok {
            "{\"ok\":true,\"checks\":["
        } else {
            "{\"ok\":false,\"checks\":["
        });
        for (i, c) in self.checks.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            json::write_string(&mut out, &c.name);
            out.push_str(if c.ok {
                ",\"ok\":true,\"detail\":"
            } else {
                ",\"ok\":false,\"detail\":"
            });
            json::write_string(&mut out, &c.detail);
            out.push('}');
        }
        out.push_str("]}");
        out
    }

    /// The first failed check, if any.
    pub fn first_failure(&self) -> Option<&Check> {
        self.checks.iter().find(|c| !c.ok)
    }
}

/// Reads a document's `hashScheme` as a check named `name`: the rule its
/// log proofs were made with, or `None` (failed, named) when this verifier
/// does not know it, so no inclusion proof is checked under a guessed rule.
pub(crate) fn scheme_check(
    report: &mut VerificationReport,
    name: String,
    text: &str,
) -> Option<HashScheme> {
    // A missing name reads as "" and is refused like any unknown one.
    match HashScheme::parse(text) {
        Ok(s) => {
            report.push(name, true, s.rule());
            Some(s)
        }
        Err(e) => {
            report.push(name, false, e.to_string());
            None
        }
    }
}

const UNKNOWN_SCHEME: &str = "cannot check: unknown hashScheme";

pub(crate) fn same(name: &str, got: &Hash32, want: &Hash32) -> Result<String, String> {
    if got.ct_eq(want) {
        Ok(format!("{name} is {want}"))
    } else {
        Err(format!("{name} is {got}, expected {want}"))
    }
}

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
        Err(e) => VerificationReport::failure("parse", e),
    }
}

/// Parses a document saved from the API with [`crate::json`] and reads it
/// with `read`; with `envelope`, the `data` of a `{success, statusCode,
/// data}` answer is read, so a file saved straight from the API and one
/// holding only its `data` both verify.
pub(crate) fn read_document<T>(
    text: &str,
    envelope: bool,
    what: &str,
    read: impl Fn(&json::Value) -> Result<T, crate::FieldError>,
) -> Result<T, String> {
    if text.len() > RECEIPT_JSON_BYTES_MAX {
        return Err(format!(
            "{what} is larger than {RECEIPT_JSON_BYTES_MAX} bytes"
        ));
    }
    let value = json::parse(text).map_err(|e| format!("not {what}: not JSON: {e}"))?;
    let value = if envelope {
        unwrap_envelope(&value)
    } else {
        &value
    };
    read(value).map_err(|e| format!("not {what}: {e}"))
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
                        "receipt names key {}, the trusted key is {}; checking against the trusted key",
                        json::quoted(&receipt.proof.public_key),
                        json::quoted(trusted)
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
    let scheme = scheme_check(&mut report, "hashScheme".into(), &receipt.proof.hash_scheme);

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
        let inclusion = match (&head, scheme) {
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

// ------------------------------------------------------------------ documents as saved from the API

/// Most pages of a public verification answer checked together. // spec: silent; VERIFY_RECORDS_MAX per page keeps 1,000 pages in the same work bound as RECEIPT_DELTAS_MAX
pub const PUBLIC_PAGES_MAX: usize = 1_000;

/// The `data` of a `{success, statusCode, data}` envelope, or the whole
/// value when it is not one.
fn unwrap_envelope(value: &json::Value) -> &json::Value {
    match value.as_object() {
        Some(o) if matches!(o.get("success"), Some(json::Value::Bool(_))) => match o.get("data") {
            Some(data) if !matches!(data, json::Value::Null) => data,
            _ => value,
        },
        _ => value,
    }
}

/// Reads a receipt saved from the API (the whole answer or its `data`),
/// as [`verify_receipt_document`] does before checking it.
///
/// # Errors
/// Too large, not JSON, or the first field that is not a receipt's.
pub fn read_receipt_document(text: &str) -> Result<Receipt, String> {
    read_document(text, true, "a receipt", Receipt::from_json)
}

/// Reads one page of a public verification answer saved from the API
/// (the whole answer or its `data`).
///
/// # Errors
/// Too large, not JSON, or the first field that is not an answer's.
pub fn read_public_answer_document(text: &str) -> Result<PublicAnswer, String> {
    read_document(
        text,
        true,
        "a public verification answer",
        PublicAnswer::from_json,
    )
}

/// As [`verify_receipt_json`], for the receipt route's whole answer
/// (`{success, statusCode, data: <receipt>}`) or its `data` alone.
pub fn verify_receipt_document(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    verify_receipt_text(text, true, trusted_public_key)
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
    /// How the log hashes its leaves (see [`HashScheme`]).
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
    pub fn from_json(value: &json::Value) -> Result<PublicAnswer, crate::FieldError> {
        Self::read(value).map_err(|e| *e)
    }

    fn read(value: &json::Value) -> Result<PublicAnswer, json::ReadError> {
        // Borrowed and Copy fields first, owned ones last (see
        // `Receipt::from_json`).
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
        let checkpoint_leaf = match v.optional("checkpointLeaf") {
            None => None,
            Some(_) => {
                let c = v.object("checkpointLeaf")?;
                let item_hash = c.hash("itemHash")?;
                let leaf_index = merkle::LeafIndex(c.u64("leafIndex")?);
                Some(CheckpointLeaf {
                    inclusion_proof: c.hashes("inclusionProof", true)?,
                    item_hash,
                    leaf_index,
                })
            }
        };
        let owned = |t: Option<&str>| t.map(str::to_owned);
        Ok(PublicAnswer {
            records: f.each("records", false, |r| {
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
            })?,
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
}

pub(crate) fn inclusion_detail(
    proof: &[Hash32],
    index: merkle::LeafIndex,
    head: Option<&TreeHead>,
    scheme: Option<HashScheme>,
    item: &Hash32,
) -> Result<String, String> {
    let Some(h) = head else {
        return Err("cannot check: the tree head did not verify".into());
    };
    let Some(scheme) = scheme else {
        return Err(UNKNOWN_SCHEME.into());
    };
    scheme
        .verify_inclusion(proof, index, h.size, &h.root, item)
        .map(|()| {
            format!(
                "{item} is leaf {index} of the signed tree of size {}",
                h.size
            )
        })
        .map_err(|e| format!("{item} at leaf {index}: {e}"))
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
    if pages.is_empty() || pages.len() > PUBLIC_PAGES_MAX {
        report.push(
            "parse",
            false,
            format!(
                "expected 1 to {PUBLIC_PAGES_MAX} pages, got {}",
                pages.len()
            ),
        );
        return report;
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
                report.push(name, false, e);
                return report;
            }
        }
    }
    let first = &answers[0].summary;
    let records: usize = answers.iter().map(|a| a.records.len()).sum();
    if records > RECEIPT_DELTAS_MAX {
        report.push(
            "itemCount",
            false,
            format!("{records} records exceed the verifiable maximum of {RECEIPT_DELTAS_MAX}"),
        );
        return report;
    }

    // 1. The root asked for, and pages that agree with each other.
    let root = first.proof_root;
    report.result(
        "proofRoot",
        match expected_root.map(Hash32::parse) {
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

    // 2. Key and heads, then each record against its page's head.
    let mut index = 0usize;
    for (p, a) in answers.iter().enumerate() {
        let prefix = if answers.len() == 1 {
            String::new()
        } else {
            format!("pages[{p}].")
        };
        let key = match trusted_public_key {
            Some(trusted) => {
                let same_key: bool = trusted
                    .as_bytes()
                    .ct_eq(a.verification.public_key.as_bytes())
                    .into();
                report.result(
                    format!("{prefix}publicKey"),
                    if same_key {
                        Ok("the answer names the log's published key".into())
                    } else {
                        Err(format!(
                            "the answer names key {}, the log publishes {}; checking against the published key",
                            json::quoted(&a.verification.public_key),
                            json::quoted(trusted)
                        ))
                    },
                );
                trusted
            }
            None => {
                report.push(
                    format!("{prefix}publicKey"),
                    true,
                    "not pinned: using the key inside the answer; compare it with the log's published key",
                );
                a.verification.public_key.as_str()
            }
        };
        let head = match note::verify_tree_head(&a.verification.tree_head, key) {
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
        };
        let scheme = scheme_check(
            &mut report,
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
            index += 1;
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

    // 3. The root over every record, the count and the net amount.
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
    report.result(
        "verified",
        match (answers[0].verified, report.ok) {
            (true, true) => Ok("the service says verified, and every check above agrees".into()),
            (false, _) => Err(format!(
                "the service says not verified yet (status {})",
                first.status.as_deref().unwrap_or("unknown")
            )),
            (true, false) => Err("the service says verified, but a check above failed".into()),
        },
    );
    report
}

/// The records' amounts against the summary's net amount; an answer that
/// withholds amounts (a root over several ledgers) withholds every one of
/// them and the total.
fn net_amount_check(all: &[&PublicRecord], net: Option<Amount>) -> Result<String, String> {
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

// ------------------------------------------------------------------ single checks as reports

fn parse_hashes(field: &str, texts: &[String]) -> Result<Vec<Hash32>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Hash32::parse(t).map_err(|e| format!("{field}[{i}] {e}")))
        .collect()
}

/// One signed tree head against a verifier key, as a report.
pub fn tree_head_report(note_text: &str, verifier_key: &str) -> VerificationReport {
    let mut report = VerificationReport::new();
    report.result(
        "treeHead",
        note::verify_tree_head(note_text, verifier_key)
            .map(|h| format!("signed by {}: size {}, root {}", h.origin, h.size, h.root))
            .map_err(|e| e.to_string()),
    );
    report
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
    let read = |v: &json::Value| -> Result<Answer, crate::FieldError> {
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
        Err(e) => return VerificationReport::failure("parse", e),
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

/// Two signed heads and the consistency proof between them, as a report.
pub fn consistency_report(
    old_note: &str,
    new_note: &str,
    proof: &[String],
    verifier_key: &str,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let proof = match parse_hashes("consistencyProof", proof) {
        Ok(p) => p,
        Err(e) => {
            report.push("consistency", false, e);
            return report;
        }
    };
    match verify_consistency_between_heads(old_note, new_note, &proof, verifier_key) {
        Ok((old, new)) => {
            report.push(
                "oldTreeHead",
                true,
                format!("size {}, root {}", old.size, old.root),
            );
            report.push(
                "newTreeHead",
                true,
                format!("size {}, root {}", new.size, new.root),
            );
            report.push(
                "consistency",
                true,
                format!("the tree of size {} extends the tree of size {}: nothing was rewritten or removed", new.size, old.size),
            );
        }
        Err(HeadsError::OldHead(e)) => report.push("oldTreeHead", false, e.to_string()),
        Err(HeadsError::NewHead(e)) => report.push("newTreeHead", false, e.to_string()),
        Err(HeadsError::Proof(e)) => report.push("consistency", false, e.to_string()),
    }
    report
}

/// A submission's `itemsRoot` over its `itemHashes`, as a report.
pub fn submission_report(item_hashes: &[String], items_root: &str) -> VerificationReport {
    let mut report = VerificationReport::new();
    let parsed = parse_hashes("itemHashes", item_hashes).and_then(|h| {
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

/// Reads a consistency proof as saved: the consistency route's answer
/// (enveloped or not; a `hashScheme` it names must be known), a JSON array
/// of hex hashes, or hex hashes separated by white space.
///
/// # Errors
/// Names what could not be read.
pub fn parse_proof_document(text: &str) -> Result<Vec<String>, String> {
    let trimmed = text.trim();
    if !trimmed.starts_with('[') && !trimmed.starts_with('{') {
        return Ok(trimmed.split_whitespace().map(str::to_string).collect());
    }
    let value = json::parse(trimmed).map_err(|e| format!("not JSON: {e}"))?;
    let strings = |items: &[json::Value], what: &str| {
        json::strings(items).map_err(|e| format!("{what} must hold strings, {e}"))
    };
    match unwrap_envelope(&value) {
        json::Value::Array(items) => strings(items, "a JSON array of hashes"),
        inner => {
            let f = json::Fields::of(inner, String::new())
                .map_err(|e| format!("not a consistency proof answer: {e}"))?;
            if let Some(name) = f
                .optional_string("hashScheme")
                .map_err(|e| format!("not a consistency proof answer: {e}"))?
            {
                HashScheme::parse(name).map_err(|e| e.to_string())?;
            }
            let items = f
                .array("consistencyProof", true)
                .map_err(|e| format!("not a consistency proof answer: {e}"))?;
            strings(items, "consistencyProof")
        }
    }
}

// ------------------------------------------------------------------ witnesses

/// The witness checks of the signed tree head `note_text` under `policy`,
/// added to `report` with `prefix` before their names: `policy.log`, that
/// the policy accepts the log key the head was checked with (when it
/// lists logs), and `witnesses`, whether the policy's quorum cosigned the
/// head, naming the witnesses that did and did not. `freshness` is
/// [`Freshness::Latest`] only for a log's latest head checked now, never
/// for a saved receipt or answer.
pub fn push_witness_checks(
    report: &mut VerificationReport,
    prefix: &str,
    note_text: &str,
    log_key: &str,
    policy: &Policy,
    freshness: Freshness,
) {
    if !policy.logs().is_empty() {
        report.result(
            format!("{prefix}policy.log"),
            if policy.accepts_log(log_key.trim()) {
                Ok("the policy lists the log's key".into())
            } else {
                Err(format!(
                    "the policy does not list the log key {}",
                    json::quoted(log_key.trim())
                ))
            },
        );
    }
    report.result(
        format!("{prefix}witnesses"),
        match policy.check(note_text, freshness) {
            Ok(q) if q.met => Ok(q.summary()),
            Ok(q) => Err(q.summary()),
            Err(e) => Err(e.to_string()),
        },
    );
}

/// A signed tree head against a log key and a witness policy (tlog-policy
/// text), as a report: `treeHead` (the log's signature), `policy` (the
/// text read), then the checks of [`push_witness_checks`].
pub fn witness_report(
    note_text: &str,
    log_key: &str,
    policy_text: &str,
    freshness: Freshness,
) -> VerificationReport {
    let mut report = tree_head_report(note_text, log_key);
    match Policy::parse(policy_text) {
        Ok(policy) => {
            report.push(
                "policy",
                true,
                format!(
                    "{} witnesses; quorum {}",
                    policy.witnesses().len(),
                    policy.rule()
                ),
            );
            push_witness_checks(&mut report, "", note_text, log_key, &policy, freshness);
        }
        Err(e) => report.push("policy", false, e.to_string()),
    }
    report
}

/// A signed tree head against a log key and a k-of-n witness quorum,
/// the form the log list publishes (`witnessPolicy`: `quorum` and the
/// witnesses' cosignature vkeys), as a report: `treeHead` (the log's
/// signature), then `witnesses`: whether at least `quorum` of them
/// cosigned the head, naming those that did and did not. What the
/// browser verifier checks; a C2SP tlog-policy file goes through
/// [`witness_report`].
pub fn cosignature_report(
    note_text: &str,
    log_key: &str,
    witness_vkeys: &[String],
    quorum: u64,
    freshness: Freshness,
) -> VerificationReport {
    let mut report = tree_head_report(note_text, log_key);
    report.result(
        "witnesses",
        threshold_detail(note_text, witness_vkeys, quorum, freshness),
    );
    report
}

/// The words of a k-of-n witness check (see [`cosignature_report`]).
fn threshold_detail(
    note_text: &str,
    witness_vkeys: &[String],
    quorum: u64,
    freshness: Freshness,
) -> Result<String, String> {
    let note = CosignedNote::read(note_text).map_err(|e| e.to_string())?;
    let n = witness_vkeys.len() as u64;
    if quorum > n {
        return Err("the quorum is larger than the number of witnesses".into());
    }
    let mut words = Words::default();
    let mut count = 0u64;
    for v in witness_vkeys {
        let key = WitnessKey::parse(v).map_err(|e| e.to_string())?;
        let found = note.cosigned_at(&key).map_err(|e| e.to_string())?;
        count += u64::from(words.add(key.name(), Cosigned::judge(found, freshness)));
    }
    let rule = format!("{quorum} of the {n} witnesses");
    let met = count >= quorum;
    let text = words.finish(met, &rule);
    if met {
        Ok(text)
    } else {
        Err(text)
    }
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

/// A small signed log built with this crate's own functions, the way the
/// worker builds its answers: fixtures for the verifiers' tests (core,
/// verifier-wasm, the CLI) and the verify page's offline demo. Pure: the
/// seed and the time come in as arguments.
#[cfg(feature = "server")]
pub mod sample {
    use super::{CheckpointLeaf, PublicAnswer, PublicProof, PublicRecord, PublicSummary};
    use crate::amount::Amount;
    use crate::derive::{self, DerivedDelta};
    use crate::hash::{item_hash, DeltaContent, Hash32};
    use crate::log::{self, StoredHashes};
    use crate::merkle::{self, LeafIndex, TreeSize};
    use crate::note;
    use crate::receipt::{ProvenItem, Receipt, ReceiptProof, ReceiptVerification};
    use crate::time::format_iso_ms;
    use crate::types::Period;

    /// Everything a verifier is handed, as text the API would send.
    #[derive(Debug, Clone)]
    pub struct Sample {
        /// The log's verifier key (`<origin>+<id>+<key>`).
        pub public_key: String,
        pub receipt: Receipt,
        /// `GET /api/v1/balance/receipt/...` answer, with its envelope.
        pub receipt_json: String,
        /// `GET /api/v1/verify/{root}` answer for the receipt's deltas as one
        /// submission, with its envelope.
        pub public_json: String,
        pub proof_root: Hash32,
        /// A signed head of an older, smaller tree of the same log.
        pub old_head: String,
        /// The signed head every proof here is into.
        pub head: String,
        /// Consistency proof from `old_head` to `head`, hex.
        pub consistency_proof: Vec<String>,
        /// Every item of the log, in order, and one leaf with its proof.
        pub log_items: Vec<Hash32>,
    }

    fn err(e: impl std::fmt::Display) -> String {
        e.to_string()
    }

    /// A log of `noise` other items with the deltas of `amounts` (for
    /// `cust_42`, starting balance 10) interleaved, signed by `seed` as
    /// `origin`, declared at `t0_ms`.
    ///
    /// # Errors
    /// A bad origin or amount, or a log limit.
    pub fn build(
        origin: &str,
        seed: &[u8; 32],
        noise: u64,
        amounts: &[&str],
        t0_ms: i64,
    ) -> Result<Sample, String> {
        let mut log_items: Vec<Hash32> = (0..noise)
            .map(|i| Hash32::digest(&i.to_be_bytes()))
            .collect();
        let mut contents = Vec::new();
        let mut leaf_of = Vec::new();
        for (k, a) in amounts.iter().enumerate() {
            let content = DeltaContent {
                anchor_id: format!("anc_{k:04}"),
                customer_id: "cust_42".into(),
                delta: Amount::parse(a).map_err(err)?,
                reason: format!("invoice {k}"),
                reference_id: (k % 2 == 0).then(|| format!("ref-{k}")),
                // One delta carries metadata, so its itemHash goes through
                // the RFC 8785 form of an object with numbers.
                metadata: (k == 1)
                    .then(|| crate::json::parse(r#"{"invoice": 17, "lines": [1.5, "x"]}"#))
                    .transpose()
                    .map_err(err)?,
                declared_timestamp: format_iso_ms(t0_ms + k as i64),
            };
            leaf_of.push(log_items.len() as u64);
            log_items.push(item_hash(&content).map_err(err)?);
            log_items.push(Hash32::digest(format!("noise {k}").as_bytes()));
            contents.push(content);
        }
        let mut store = StoredHashes::new();
        for (k, v) in log::append(TreeSize(0), &log_items, &StoredHashes::new()).map_err(err)? {
            store.insert(k, v);
        }
        let size = TreeSize(log_items.len() as u64);
        let root = log::tree_root(size, &store).map_err(err)?;
        let head = note::sign_tree_head(origin, size, &root, seed).map_err(err)?;
        let old_size = TreeSize(size.0.div_ceil(2));
        let old_root = log::tree_root(old_size, &store).map_err(err)?;
        let old_head = note::sign_tree_head(origin, old_size, &old_root, seed).map_err(err)?;
        let consistency_proof = log::consistency_proof(old_size, size, &store)
            .map_err(err)?
            .iter()
            .map(Hash32::to_hex)
            .collect();
        let public_key = note::public_key_string(origin, seed).map_err(err)?;

        let starting = Amount::from_int(10).map_err(err)?;
        let mut balance = starting;
        let mut deltas = Vec::new();
        let mut items = Vec::new();
        let mut records = Vec::new();
        let hashes: Vec<Hash32> = log_items
            .iter()
            .enumerate()
            .filter(|(i, _)| leaf_of.contains(&(*i as u64)))
            .map(|(_, h)| *h)
            .collect();
        let items_root = merkle::root(&hashes);
        let block_ms = t0_ms + 1_000;
        for (k, c) in contents.iter().enumerate() {
            let h = item_hash(c).map_err(err)?;
            let leaf = LeafIndex(leaf_of[k]);
            let proof = log::inclusion_proof(leaf, size, &store).map_err(err)?;
            balance = balance.checked_add(c.delta).map_err(err)?;
            deltas.push(DerivedDelta {
                anchor_id: c.anchor_id.clone(),
                item_hash: h,
                items_root,
                receipt_id: items_root,
                delta: c.delta,
                reason: Some(c.reason.clone()),
                reference_id: c.reference_id.clone(),
                window: Period::containing(t0_ms),
                declared_timestamp: t0_ms + k as i64,
                block_timestamp: block_ms,
                data_purged: false,
                verified: true,
                seq: k as u64 + 1,
                balance_after: balance,
            });
            records.push(PublicRecord {
                anchor_id: c.anchor_id.clone(),
                item_hash: h,
                ledger_id: None,
                delta: Some(c.delta),
                leaf_index: Some(leaf),
                inclusion_proof: proof.clone(),
                block_timestamp: Some(format_iso_ms(block_ms)),
                declared_timestamp: Some(c.declared_timestamp.clone()),
            });
            items.push(ProvenItem {
                anchor_id: c.anchor_id.clone(),
                item_hash: h,
                leaf_index: leaf,
                inclusion_proof: proof,
                delta: c.delta,
                raw: Some(c.clone()),
            });
        }
        let receipt = Receipt {
            customer_id: "cust_42".into(),
            period: Some(Period::containing(t0_ms).to_string()),
            generated_at: format_iso_ms(block_ms + 5_000),
            deltas_count: deltas.len() as u64,
            starting_balance: starting,
            final_balance: balance,
            items_root,
            receipt_id: items_root,
            proof_root: items_root,
            latest_checkpoint: None,
            window_summaries: derive::window_summaries(&deltas).map_err(err)?,
            deltas,
            verification: ReceiptVerification {
                message: "Check with the log's public key".into(),
                item_hashes: hashes,
                proof_root: items_root,
                verify_url: format!("/verify/{items_root}"),
            },
            proof: ReceiptProof {
                hash_scheme: log::HASH_SCHEME.name().into(),
                tree_head: head.clone(),
                public_key: public_key.clone(),
                items,
            },
            agreement: None,
        };
        let net = Amount::checked_sum(records.iter().filter_map(|r| r.delta)).map_err(err)?;
        let answer = PublicAnswer {
            verified: true,
            summary: PublicSummary {
                kind: "submission".into(),
                environment: "sandbox".into(),
                proof_root: items_root,
                item_count: records.len() as u64,
                net_amount: Some(net),
                period: None,
                ledger_id: None,
                first_verified_at: Some(format_iso_ms(block_ms)),
                last_verified_at: Some(format_iso_ms(block_ms)),
                status: Some("VERIFIED".into()),
                issued_as: Vec::new(),
                amounts_withheld: false,
                records_check: None,
            },
            records,
            verification: PublicProof {
                public_ledger_url: None,
                hash_scheme: log::HASH_SCHEME.name().into(),
                tree_head: head.clone(),
                tree_size: size,
                public_key: public_key.clone(),
                log: None,
                items_root,
                checkpoint_leaf: None::<CheckpointLeaf>,
                message: None,
            },
            pagination: None,
        };
        let envelope =
            |data: String| format!(r#"{{"success":true,"statusCode":200,"data":{data}}}"#);
        Ok(Sample {
            public_key,
            receipt_json: envelope(serde_json::to_string(&receipt).map_err(err)?),
            public_json: envelope(serde_json::to_string(&answer).map_err(err)?),
            receipt,
            proof_root: items_root,
            old_head,
            head,
            consistency_proof,
            log_items,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const ORIGIN: &str = "bvs.example/log/sandbox";
    const SEED: [u8; 32] = [9; 32];
    const T0: i64 = 1_795_323_400_123;

    fn sample() -> sample::Sample {
        sample::build(ORIGIN, &SEED, 37, &["100", "-0.1", "-0.2", "12.345"], T0).unwrap()
    }

    fn failed(r: &VerificationReport) -> Vec<String> {
        r.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.clone())
            .collect()
    }

    #[test]
    fn documents_read_without_serde_equal_the_serde_reading() {
        let mut s = sample();
        let r = &mut s.receipt;
        if let Some(raw) = r.proof.items[0].raw.as_mut() {
            raw.metadata =
                Some(json::parse(r#"{"b":[1.5,-0,1e21,"é\n"],"a":{"x":null}}"#).unwrap());
        }
        r.proof.items[1].raw = None;
        let text = serde_json::to_string(&*r).unwrap();
        let ours = Receipt::from_json(&json::parse(&text).unwrap()).unwrap();
        let theirs: Receipt = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, theirs);

        let envelope: serde_json::Value = serde_json::from_str(&s.public_json).unwrap();
        let data = envelope["data"].to_string();
        let ours = PublicAnswer::from_json(&json::parse(&data).unwrap()).unwrap();
        let theirs: PublicAnswer = serde_json::from_str(&data).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn a_malformed_document_names_the_field_by_its_path() {
        let s = sample();
        let mut v: serde_json::Value = serde_json::from_str(&s.receipt_json).unwrap();
        v["data"]["deltas"][2]["itemHash"] = serde_json::json!("zz");
        let r = verify_receipt_document(&v.to_string(), None);
        assert_eq!(
            r.checks[0].detail,
            "not a receipt: deltas[2].itemHash: must be 64 lowercase hex digits"
        );
        let mut v: serde_json::Value = serde_json::from_str(&s.receipt_json).unwrap();
        v["data"]["proof"]["items"][1]
            .as_object_mut()
            .unwrap()
            .remove("leafIndex");
        let r = verify_receipt_document(&v.to_string(), None);
        assert_eq!(
            r.checks[0].detail,
            "not a receipt: proof.items[1].leafIndex: is required"
        );
        let r = verify_receipt_document("{\"data\": [1,}", None);
        assert_eq!(
            r.checks[0].detail,
            "not a receipt: not JSON: expected a JSON value at byte 12"
        );
        let r = verify_public_answer(&["[]"], None, None);
        assert_eq!(
            r.checks[0].detail,
            "not a public verification answer: document: must be an object, got an array"
        );
    }

    #[test]
    fn a_report_is_written_as_the_json_serde_would_write() {
        let s = sample();
        let r = verify_receipt_document(&s.receipt_json, None);
        let mut tampered = r.clone();
        tampered.push("x\"\u{1}é", false, "line\nbreak \\ tab\t");
        for report in [r, tampered] {
            let ours: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
            assert_eq!(ours, serde_json::to_value(&report).unwrap());
        }
    }

    #[test]
    fn a_public_answer_as_the_service_sends_it_verifies() {
        let s = sample();
        let root = s.proof_root.to_hex();
        let r = verify_public_answer(&[&s.public_json], Some(&root), Some(&s.public_key));
        assert!(r.ok, "{r:#?}");
        assert!(r.checks.iter().any(|c| c.name == "records[3].inclusion"));
        // Its `data` alone verifies too, and the receipt saved whole.
        let data: serde_json::Value = serde_json::from_str(&s.public_json).unwrap();
        let bare = data["data"].to_string();
        assert!(verify_public_answer(&[&bare], None, None).ok);
        assert!(verify_receipt_document(&s.receipt_json, Some(&s.public_key)).ok);
    }

    #[test]
    fn a_tampered_public_answer_fails_the_check_that_names_it() {
        let s = sample();
        let root = s.proof_root.to_hex();
        let item = s.receipt.deltas[1].item_hash.to_hex();
        let forged = Hash32::digest(b"forged").to_hex();
        let cases: Vec<(String, Option<&str>, &str)> = vec![
            (
                s.public_json.replacen(&item, &forged, 1),
                None,
                "records[1].inclusion",
            ),
            (
                s.public_json.replace("\"delta\":-0.2", "\"delta\":-0.3"),
                None,
                "netAmount",
            ),
            (
                s.public_json.replace("\"itemCount\":4", "\"itemCount\":5"),
                None,
                "itemCount",
            ),
            (
                s.public_json.replace("\"treeSize\":45", "\"treeSize\":46"),
                None,
                "treeSize",
            ),
            (
                s.public_json.clone(),
                Some("other+01020304+AQ=="),
                "publicKey",
            ),
        ];
        for (text, key, want) in cases {
            let r = verify_public_answer(&[&text], Some(&root), key.or(Some(&s.public_key)));
            assert!(!r.ok, "{want}");
            assert!(
                failed(&r).contains(&want.to_string()),
                "{want}: {:?}",
                failed(&r)
            );
        }
        let r = verify_public_answer(&[&s.public_json], Some(&forged), None);
        assert_eq!(failed(&r), ["proofRoot", "verified"]);
        let r = verify_public_answer(&["{}"], None, None);
        assert_eq!(failed(&r), ["parse"]);
        assert!(!verify_public_answer(&[], None, None).ok);
    }

    #[test]
    fn single_checks_report_what_they_checked() {
        let s = sample();
        assert!(tree_head_report(&s.head, &s.public_key).ok);
        assert!(!tree_head_report(&s.head.replace("45", "46"), &s.public_key).ok);
        assert!(consistency_report(&s.old_head, &s.head, &s.consistency_proof, &s.public_key).ok);
        let r = consistency_report(
            &s.old_head,
            &s.head,
            &s.consistency_proof[1..],
            &s.public_key,
        );
        assert_eq!(failed(&r), ["consistency"]);
        let d = &s.receipt.proof.items[0];
        let proof: Vec<String> = d.inclusion_proof.iter().map(Hash32::to_hex).collect();
        let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
        let root = head.root.to_hex();
        let item = d.item_hash.to_hex();
        let v1 = "bvs-log-v1";
        assert!(inclusion_report(&item, d.leaf_index.0, head.size.0, &root, &proof, v1).ok);
        assert!(!inclusion_report(&item, d.leaf_index.0 + 1, head.size.0, &root, &proof, v1).ok);
        assert!(!inclusion_report("zz", 0, 1, &root, &proof, v1).ok);
        let r = inclusion_report(
            &item,
            d.leaf_index.0,
            head.size.0,
            &root,
            &proof,
            "bvs-log-v9",
        );
        assert_eq!(failed(&r), ["hashScheme", "inclusion"]);
        assert!(r.checks[0]
            .detail
            .contains("unknown hash scheme \"bvs-log-v9\""));
        let hashes: Vec<String> = s
            .receipt
            .verification
            .item_hashes
            .iter()
            .map(Hash32::to_hex)
            .collect();
        assert!(submission_report(&hashes, &s.proof_root.to_hex()).ok);
        assert!(!submission_report(&hashes[1..], &s.proof_root.to_hex()).ok);
    }

    #[test]
    fn an_unknown_hash_scheme_is_refused_by_name_and_no_proof_is_checked_under_a_guess() {
        let s = sample();
        let root = s.proof_root.to_hex();
        let scheme = "\"hashScheme\":\"bvs-log-v1\"";
        for other in ["bvs-log-v2", ""] {
            let renamed = format!("\"hashScheme\":\"{other}\"");
            let r = verify_receipt_document(
                &s.receipt_json.replacen(scheme, &renamed, 1),
                Some(&s.public_key),
            );
            let f = failed(&r);
            assert_eq!(f[0], "hashScheme", "{f:?}");
            assert_eq!(
                f.iter().filter(|n| n.ends_with(".inclusion")).count(),
                s.receipt.deltas.len()
            );
            let detail = &r.first_failure().unwrap().detail;
            let why = format!("unknown hash scheme \"{other}\"");
            assert!(detail.contains(&why), "{detail}");
            let r = verify_public_answer(
                &[&s.public_json.replacen(scheme, &renamed, 1)],
                Some(&root),
                Some(&s.public_key),
            );
            let f = failed(&r);
            assert_eq!(f[0], "hashScheme", "{f:?}");
            assert!(f.contains(&"records[0].inclusion".to_string()), "{f:?}");
        }
        // A document without one is not read at all.
        let r = verify_receipt_document(&s.receipt_json.replacen(scheme, "\"x\":1", 1), None);
        assert_eq!(
            r.checks[0].detail,
            "not a receipt: proof.hashScheme: is required"
        );
    }

    #[test]
    fn a_plain_rfc_9162_leaf_does_not_pass_as_a_log_leaf() {
        // The log's proofs are over tagged leaves: the same proof does not
        // verify the item as a plain leaf, so a proof made before the
        // scheme (or under another) cannot pass as this one.
        let s = sample();
        let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
        let d = &s.receipt.proof.items[0];
        assert_eq!(
            HashScheme::BvsLogV1.verify_inclusion(
                &d.inclusion_proof,
                d.leaf_index,
                head.size,
                &head.root,
                &d.item_hash
            ),
            Ok(())
        );
        assert_eq!(
            merkle::verify_inclusion(
                &d.inclusion_proof,
                d.leaf_index,
                head.size,
                &head.root,
                &d.item_hash
            ),
            Err(ProofError::RootMismatch)
        );
    }

    #[test]
    fn an_inclusion_answer_verifies_and_an_unknown_scheme_or_a_forgery_fails_by_name() {
        let s = sample();
        let d = &s.receipt.proof.items[1];
        let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
        let answer = |scheme: &str, item: &Hash32| {
            serde_json::json!({"success": true, "statusCode": 200, "data": {
                "hashScheme": scheme, "itemHash": item, "leafIndex": d.leaf_index,
                "treeSize": head.size, "inclusionProof": d.inclusion_proof, "treeHead": s.head,
            }})
            .to_string()
        };
        let r = inclusion_answer_report(&answer("bvs-log-v1", &d.item_hash), &s.public_key);
        assert!(r.ok, "{r:#?}");
        let r = inclusion_answer_report(&answer("bvs-log-v2", &d.item_hash), &s.public_key);
        assert_eq!(failed(&r), ["hashScheme", "inclusion"]);
        let r = inclusion_answer_report(
            &answer("bvs-log-v1", &Hash32::digest(b"forged")),
            &s.public_key,
        );
        assert_eq!(failed(&r), ["inclusion"]);
        let r = inclusion_answer_report("{}", &s.public_key);
        assert_eq!(failed(&r), ["parse"]);
    }

    #[test]
    fn proofs_are_read_in_every_saved_form() {
        let a = "aa".repeat(32);
        let b = "bb".repeat(32);
        let want = vec![a.clone(), b.clone()];
        for text in [
            format!(r#"["{a}","{b}"]"#),
            format!("{a}\n{b}\n"),
            format!(r#"{{"from":1,"to":2,"consistencyProof":["{a}","{b}"]}}"#),
            format!(
                r#"{{"success":true,"statusCode":200,"data":{{"consistencyProof":["{a}","{b}"]}}}}"#
            ),
        ] {
            assert_eq!(parse_proof_document(&text).unwrap(), want, "{text}");
        }
        assert!(parse_proof_document("{").is_err());
        let named = |scheme: &str| {
            format!(r#"{{"hashScheme":"{scheme}","consistencyProof":["{a}","{b}"]}}"#)
        };
        assert_eq!(parse_proof_document(&named("bvs-log-v1")).unwrap(), want);
        assert!(parse_proof_document(&named("bvs-log-v7"))
            .unwrap_err()
            .contains("unknown hash scheme"));
    }
}
