//! The receipt the worker emits and anyone verifies (see `verify`).
//!
//! Top-level fields follow the spec's Receipt; `proof` adds what a client
//! needs to check it without trusting the server: the signed tree head,
//! the log's public key and, per delta, its leaf index and inclusion proof
//! into that head, plus the raw content while retention keeps it.

use crate::amount::Amount;
use crate::derive::{DerivedDelta, WindowSummary};
use crate::hash::{DeltaContent, Hash32};
use crate::merkle::LeafIndex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub customer_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    pub generated_at: String,
    pub deltas_count: u64,
    pub starting_balance: Amount,
    pub final_balance: Amount,
    /// Merkle root over the listed deltas' itemHashes, in ledger order.
    pub items_root: Hash32,
    /// Same value as `items_root`.
    pub receipt_id: Hash32,
    /// Same value as `items_root`: the key of the public verify route.
    pub proof_root: Hash32,
    #[serde(default)]
    pub latest_checkpoint: Option<String>,
    pub deltas: Vec<DerivedDelta>,
    #[serde(default)]
    pub window_summaries: Vec<WindowSummary>,
    pub verification: ReceiptVerification,
    pub proof: ReceiptProof,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptVerification {
    pub message: String,
    pub item_hashes: Vec<Hash32>,
    pub proof_root: Hash32,
    pub verify_url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptProof {
    /// How the log hashes its leaves (`bvs-log-v1`, see
    /// [`crate::merkle::HashScheme`]); a verifier refuses a name it does
    /// not know.
    pub hash_scheme: String,
    /// Signed tree head (C2SP signed note text) that includes every item.
    pub tree_head: String,
    /// The log's verifier key string (`<origin>+<id>+<key>`).
    pub public_key: String,
    /// One per entry of `deltas`, same order.
    pub items: Vec<ProvenItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvenItem {
    pub anchor_id: String,
    pub item_hash: Hash32,
    pub leaf_index: LeafIndex,
    pub inclusion_proof: Vec<Hash32>,
    pub delta: Amount,
    /// The hashed content while retention keeps it; `None` once purged.
    #[serde(default)]
    pub raw: Option<DeltaContent>,
}

// ------------------------------------------------------------------ reading a receipt without serde

use crate::error::FieldError;
use crate::json::{Fields, ReadError, Value};

impl Receipt {
    /// Reads a receipt (the receipt route's `data`) from a parsed JSON
    /// value with [`crate::json`], as the serde derive would: unknown
    /// fields are ignored, optional fields may be absent or null.
    ///
    /// # Errors
    /// The first field that is missing or malformed, by its path
    /// (`deltas[3].itemHash: must be 64 lowercase hex digits`).
    pub fn from_json(value: &Value) -> Result<Receipt, FieldError> {
        read_receipt(value).map_err(|e| *e)
    }
}

fn read_receipt(value: &Value) -> Result<Receipt, ReadError> {
    // Borrowed and Copy fields first, owned ones last: an early `?`
    // then has nothing to drop, which keeps this code small.
    let f = Fields::of(value, String::new())?;
    let v = f.object("verification")?;
    let p = f.object("proof")?;
    let customer_id = f.string("customerId")?;
    let period = f.optional_string("period")?;
    let generated_at = f.string("generatedAt")?;
    let deltas_count = f.u64("deltasCount")?;
    let starting_balance = f.amount("startingBalance")?;
    let final_balance = f.amount("finalBalance")?;
    let items_root = f.hash("itemsRoot")?;
    let receipt_id = f.hash("receiptId")?;
    let proof_root = f.hash("proofRoot")?;
    let latest_checkpoint = f.optional_string("latestCheckpoint")?;
    let message = v.string("message")?;
    let verification_root = v.hash("proofRoot")?;
    let verify_url = v.string("verifyUrl")?;
    let hash_scheme = p.string("hashScheme")?;
    let tree_head = p.string("treeHead")?;
    let public_key = p.string("publicKey")?;
    Ok(Receipt {
        deltas: f.each("deltas", true, read_delta)?,
        window_summaries: f.each("windowSummaries", false, read_window)?,
        verification: ReceiptVerification {
            item_hashes: v.hashes("itemHashes", true)?,
            message: message.to_owned(),
            proof_root: verification_root,
            verify_url: verify_url.to_owned(),
        },
        proof: ReceiptProof {
            items: p.each("items", true, read_proven_item)?,
            hash_scheme: hash_scheme.to_owned(),
            tree_head: tree_head.to_owned(),
            public_key: public_key.to_owned(),
        },
        customer_id: customer_id.to_owned(),
        period: period.map(str::to_owned),
        generated_at: generated_at.to_owned(),
        deltas_count,
        starting_balance,
        final_balance,
        items_root,
        receipt_id,
        proof_root,
        latest_checkpoint: latest_checkpoint.map(str::to_owned),
    })
}

fn read_delta(f: &Fields<'_>) -> Result<DerivedDelta, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let item_hash = f.hash("itemHash")?;
    let items_root = f.hash("itemsRoot")?;
    let receipt_id = f.hash("receiptId")?;
    let delta = f.amount("delta")?;
    let reason = f.optional_string("reason")?;
    let reference_id = f.optional_string("referenceId")?;
    let window = f.period("window")?;
    let declared_timestamp = f.timestamp("declaredTimestamp")?;
    let block_timestamp = f.timestamp("blockTimestamp")?;
    let data_purged = f.bool("dataPurged")?;
    let verified = f.bool("verified")?;
    Ok(DerivedDelta {
        anchor_id: anchor_id.to_owned(),
        item_hash,
        items_root,
        receipt_id,
        delta,
        reason: reason.map(str::to_owned),
        reference_id: reference_id.map(str::to_owned),
        window,
        declared_timestamp,
        block_timestamp,
        data_purged,
        verified,
        seq: 0,
        balance_after: Amount::default(),
    })
}

fn read_window(f: &Fields<'_>) -> Result<WindowSummary, ReadError> {
    Ok(WindowSummary {
        window: f.period("window")?,
        deltas_count: f.u64("deltasCount")?,
        net_delta: f.amount("netDelta")?,
        first_block_timestamp: f.timestamp("firstBlockTimestamp")?,
        last_block_timestamp: f.timestamp("lastBlockTimestamp")?,
    })
}

fn read_proven_item(f: &Fields<'_>) -> Result<ProvenItem, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let item_hash = f.hash("itemHash")?;
    let leaf_index = LeafIndex(f.u64("leafIndex")?);
    let delta = f.amount("delta")?;
    let raw = match f.optional("raw") {
        None => None,
        Some(_) => Some(read_raw(&f.object("raw")?)?),
    };
    Ok(ProvenItem {
        inclusion_proof: f.hashes("inclusionProof", true)?,
        anchor_id: anchor_id.to_owned(),
        item_hash,
        leaf_index,
        delta,
        raw,
    })
}

fn read_raw(f: &Fields<'_>) -> Result<DeltaContent, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let customer_id = f.string("customerId")?;
    let delta = f.amount("delta")?;
    let reason = f.string("reason")?;
    let reference_id = f.optional_string("referenceId")?;
    let declared_timestamp = f.string("declaredTimestamp")?;
    Ok(DeltaContent {
        anchor_id: anchor_id.to_owned(),
        customer_id: customer_id.to_owned(),
        delta,
        reason: reason.to_owned(),
        reference_id: reference_id.map(str::to_owned),
        metadata: f.optional("metadata").cloned(),
        declared_timestamp: declared_timestamp.to_owned(),
    })
}
