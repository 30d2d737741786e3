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
