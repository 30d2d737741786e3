//! JSON views of stored rows, with the spec's field names.

use bvs_core::amount::Amount;
use bvs_core::conditions::Conditions;
use bvs_core::derive::DerivedDelta;
use bvs_core::hash::Hash32;
use bvs_core::time::format_iso_ms;
use bvs_core::types::{CustomerId, Period};
use serde::Serialize;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::ids::{AnchorId, CheckpointId, DeliveryId, SubmissionId};
use crate::store::checkpoints::CheckpointRow;
use crate::store::deltas::DeltaRow;
use crate::store::facts::FactRow;
use crate::store::webhooks::{AttemptRow, DeliveryRow};
use crate::store::{CheckpointStatus, ItemStatus};

pub fn iso(ms: u64) -> String {
    format_iso_ms(i64::try_from(ms).unwrap_or(i64::MAX))
}

fn metadata(text: Option<&str>) -> ApiResult<Option<Value>> {
    text.map(serde_json::from_str)
        .transpose()
        .map_err(|e| ApiError::internal(format!("stored metadata: {e}")))
}

/// The Delta object of derive responses: the one receipts list
/// ([`derived`]), and where the delta stands in its ledger and in the log.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaView {
    #[serde(flatten)]
    pub delta: DerivedDelta,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_index: Option<u64>,
}

impl DeltaView {
    /// # Errors
    /// As [`derived`].
    pub fn from_row(row: &DeltaRow) -> ApiResult<DeltaView> {
        Ok(DeltaView {
            delta: derived(row)?,
            ledger_seq: row.ledger_seq,
            leaf_index: row.leaf_index,
        })
    }
}

/// A verified row as the spec's Delta object (derive and receipts): its
/// `itemsRoot`/`receiptId` is the root over its own ledger's deltas of
/// its submission (`DeltaRow::proof_root`), never a batch root over other
/// customers'.
///
/// # Errors
/// Internal, for a row that is not verified (derive and receipts list
/// only verified rows).
pub fn derived(row: &DeltaRow) -> ApiResult<DerivedDelta> {
    let verified_at = row
        .verified_at
        .ok_or_else(|| ApiError::internal("a listed delta is not verified"))?;
    let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Ok(DerivedDelta {
        anchor_id: row.anchor_id.to_string(),
        item_hash: row.item_hash,
        items_root: row.proof_root(),
        receipt_id: row.proof_root(),
        delta: row.delta,
        reason: row.reason.clone(),
        reference_id: row.reference_id.clone(),
        window: Period::containing(ms(verified_at)),
        declared_timestamp: ms(row.declared_at),
        block_timestamp: ms(verified_at),
        data_purged: row.data_purged != 0,
        verified: true,
        seq: row.ledger_seq.unwrap_or(0),
        balance_after: row.balance_after.unwrap_or(Amount::ZERO),
    })
}

/// The full delta record: raw context included (while not purged).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaRecord {
    pub anchor_id: AnchorId,
    pub customer_id: CustomerId,
    pub delta: Amount,
    pub reason: Option<String>,
    pub reference_id: Option<String>,
    pub metadata: Option<Value>,
    pub item_hash: Hash32,
    pub items_root: Hash32,
    pub receipt_id: Hash32,
    pub status: &'static str,
    pub declared_timestamp: String,
    pub received_at: String,
    pub block_timestamp: Option<String>,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    pub ledger_seq: Option<u64>,
    pub balance_after: Option<Amount>,
    pub tx_hash: Option<Hash32>,
    pub data_purged: bool,
    /// Status route only, for deltas submitted in a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<SubmissionId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deltas: Option<Vec<BatchMember>>,
    /// Status route and `delta.verified` only (issue 28): whether a
    /// quorum of the log's witnesses cosigned a head that includes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<bool>,
    /// Its asset, when named (issue 43).
    #[serde(skip_serializing_if = "bvs_core::types::Asset::is_default")]
    pub asset: bvs_core::types::Asset,
    /// Its conditions, when it has any (issue 43).
    #[serde(skip_serializing_if = "Conditions::is_empty")]
    pub conditions: Conditions,
    /// Why it FAILED; only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchMember {
    pub anchor_id: AnchorId,
    pub customer_id: CustomerId,
    pub delta: Amount,
    pub item_hash: Hash32,
    pub status: &'static str,
}

/// Status vocabulary of the status route and events: QUEUED until the
/// sequencer's atomic round commits, then ANCHORED (included in a signed
/// tree head). ANCHORING is never observable: sequencing is one transaction.
pub fn anchor_status(row_status: ItemStatus) -> &'static str {
    match row_status {
        ItemStatus::Verified => "ANCHORED",
        ItemStatus::Failed => "FAILED",
        ItemStatus::Queued => "QUEUED",
    }
}

impl DeltaRecord {
    pub fn from_row(row: &DeltaRow, tx_hash: Option<Hash32>) -> ApiResult<DeltaRecord> {
        Ok(DeltaRecord {
            anchor_id: row.anchor_id.clone(),
            customer_id: row.customer_id.clone(),
            delta: row.delta,
            reason: row.reason.clone(),
            reference_id: row.reference_id.clone(),
            metadata: metadata(row.metadata.as_deref())?,
            item_hash: row.item_hash,
            items_root: row.items_root,
            receipt_id: row.items_root,
            status: row.status.as_str(),
            declared_timestamp: iso(row.declared_at),
            received_at: iso(row.received_at),
            block_timestamp: row.verified_at.map(iso),
            leaf_index: row.leaf_index,
            tree_size: row.tree_size,
            ledger_seq: row.ledger_seq,
            balance_after: row.balance_after,
            tx_hash,
            data_purged: row.data_purged != 0,
            batch_id: None,
            delta_count: None,
            deltas: None,
            witnessed: None,
            asset: row.asset.clone(),
            conditions: row.conditions,
            failure: (row.status == ItemStatus::Failed)
                .then(|| Failure::stored(row.failure.as_deref())),
        })
    }
}

/// The `delta.verified` event payload: the full delta record with its final
/// receiptId and itemsRoot. A vendor forwards it to its customer, so its
/// root is the customer's (`DeltaRow::proof_root`), not the batch's (the
/// status route keeps the batch's, for the vendor).
pub fn delta_event_payload(row: &DeltaRow, tx_hash: &Hash32) -> ApiResult<String> {
    let mut record = DeltaRecord::from_row(row, Some(*tx_hash))?;
    record.items_root = row.proof_root();
    record.receipt_id = record.items_root;
    // Sent as its head commits, before any witness saw it:
    // `checkpoint.witnessed` follows (issue 28).
    record.witnessed = Some(false);
    Ok(serde_json::to_string(&record)?)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FactView {
    pub content_hash: Hash32,
    pub content: String,
    pub metadata: Option<Value>,
    pub verified: bool,
    pub verified_at: Option<String>,
    pub created_at: String,
    pub data_purged: bool,
    /// `queued`, `verified`, or `failed` (it can never be appended).
    pub status: &'static str,
    /// Why it FAILED; only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

/// Why an item can never be appended to the log: `failure` of a FAILED
/// fact or checkpoint, and of every `verification.failed` event.
#[derive(Serialize, Clone)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

/// `failure.code` of an item the sequencer could not append.
pub const FAILURE_APPEND: &str = "APPEND_FAILED";

impl Failure {
    pub fn append(message: &str) -> Failure {
        Failure {
            code: FAILURE_APPEND,
            message: message.to_string(),
        }
    }

    /// A FAILED delta's failure as stored (`{"code", "message"}`, the
    /// codes of `Failure::append` and of a refusal); APPEND_FAILED when
    /// nothing was stored (a delta failed before issue 43).
    pub fn stored(text: Option<&str>) -> Failure {
        #[derive(serde::Deserialize)]
        struct Stored {
            code: String,
            message: String,
        }
        let stored = text.and_then(|t| serde_json::from_str::<Stored>(t).ok());
        match stored {
            Some(s) => Failure {
                code: bvs_core::conditions::RefusalCode::parse(&s.code)
                    .map_or(FAILURE_APPEND, bvs_core::conditions::RefusalCode::as_str),
                message: s.message,
            },
            None => Failure::append(""),
        }
    }

    /// The failure of a row that is FAILED, with its stored message.
    pub fn of(failed: bool, message: Option<&str>) -> Option<Failure> {
        failed.then(|| Failure::append(message.unwrap_or("")))
    }
}

/// The fact status vocabulary (spec: `queued`, then verified).
pub fn fact_status(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Queued => "queued",
        ItemStatus::Verified => "verified",
        ItemStatus::Failed => "failed",
    }
}

impl FactView {
    pub fn from_row(row: &FactRow) -> ApiResult<FactView> {
        Ok(FactView {
            content_hash: row.content_hash,
            content: row.content.clone(),
            metadata: metadata(row.metadata.as_deref())?,
            verified: row.status == ItemStatus::Verified,
            verified_at: row.verified_at.map(iso),
            created_at: iso(row.created_at),
            data_purged: row.data_purged != 0,
            status: fact_status(row.status),
            failure: Failure::of(row.status == ItemStatus::Failed, row.failure.as_deref()),
        })
    }
}

/// The `verification.failed` payload of a fact: what identifies it (not
/// its content), `status` `failed`, and why.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FactFailedView {
    pub content_hash: Hash32,
    pub verified: bool,
    pub status: &'static str,
    pub created_at: String,
    pub failure: Failure,
}

/// `verification.failed` for a fact that can never be appended.
pub fn fact_failed_event_payload(row: &FactRow, message: &str) -> ApiResult<String> {
    Ok(serde_json::to_string(&FactFailedView {
        content_hash: row.content_hash,
        verified: false,
        status: fact_status(ItemStatus::Failed),
        created_at: iso(row.created_at),
        failure: Failure::append(message),
    })?)
}

/// `verification.failed` for a checkpoint that can never be appended: the
/// checkpoint as it reads once FAILED, with why.
pub fn checkpoint_failed_event_payload(row: &CheckpointRow, message: &str) -> ApiResult<String> {
    let mut failed = row.clone();
    failed.status = CheckpointStatus::Failed;
    failed.failure = Some(message.to_string());
    Ok(serde_json::to_string(&CheckpointView::from_row(
        &failed, None,
    ))?)
}

/// A checkpoint (spec: Checkpoint), plus where its root sits in the log.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointView {
    pub checkpoint_id: CheckpointId,
    pub customer_id: String,
    /// A customer's checkpoint of a named asset (issue 43).
    #[serde(skip_serializing_if = "bvs_core::types::Asset::is_default")]
    pub asset: bvs_core::types::Asset,
    pub period: String,
    pub merkle_root: Hash32,
    pub delta_count: u64,
    pub from_index: u64,
    pub to_index: u64,
    pub status: String,
    pub created_at: String,
    pub committed_at: Option<String>,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_hash: Option<Hash32>,
    /// Why it FAILED; only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

impl CheckpointView {
    pub fn from_row(row: &CheckpointRow, tx_hash: Option<&Hash32>) -> CheckpointView {
        CheckpointView {
            checkpoint_id: row.id.clone(),
            customer_id: row.customer_view().to_string(),
            asset: row.asset.clone(),
            period: row.period.clone(),
            merkle_root: row.merkle_root,
            delta_count: row.delta_count,
            from_index: row.from_index,
            to_index: row.to_index,
            status: row.status.as_str().to_string(),
            created_at: iso(row.created_at),
            committed_at: row.committed_at.map(iso),
            leaf_index: row.leaf_index,
            tree_size: row.tree_size,
            tx_hash: tx_hash.copied(),
            failure: Failure::of(
                row.status == CheckpointStatus::Failed,
                row.failure.as_deref(),
            ),
        }
    }
}

/// `verification.failed`: the delta as it reads once FAILED, and why it
/// could never be appended (`failure.code`, `failure.message`).
pub fn delta_failed_event_payload(row: &DeltaRow, failure: Failure) -> ApiResult<String> {
    let mut failed = row.clone();
    failed.status = ItemStatus::Failed;
    let mut record = DeltaRecord::from_row(&failed, None)?;
    record.items_root = row.proof_root();
    record.receipt_id = record.items_root;
    record.failure = Some(failure);
    Ok(serde_json::to_string(&record)?)
}

/// The answer of a single emit (`POST /api/v1/balance/delta`): its delta
/// `row` of amount `delta`, queued under proof root `root` at
/// `received_at`; `estimatedVerifiedDeltas` is `estimate` until the
/// write's batch counts it (`emit::ESTIMATE_PENDING`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmitRecord {
    anchor_id: AnchorId,
    customer_id: CustomerId,
    delta: Amount,
    status: &'static str,
    receipt_id: Hash32,
    items_root: Hash32,
    item_hash: Hash32,
    item_hashes: Vec<Hash32>,
    estimated_verified_deltas: u64,
    declared_timestamp: String,
    received_at: String,
    message: String,
}

impl EmitRecord {
    pub fn queued(
        row: &crate::store::submissions::NewDelta,
        delta: Amount,
        (root, estimate): (&Hash32, u64),
        received_at: u64,
    ) -> Self {
        EmitRecord {
            anchor_id: row.anchor_id.clone(),
            customer_id: row.customer_id.clone(),
            delta,
            status: "QUEUED",
            receipt_id: *root,
            items_root: *root,
            item_hash: row.item_hash,
            item_hashes: vec![row.item_hash],
            estimated_verified_deltas: estimate,
            declared_timestamp: iso(row.declared_at),
            received_at: iso(received_at),
            message: format!(
                "Delta queued for verification; it is typically verified within seconds. \
                 Poll GET /api/v1/balance/delta/{} or subscribe to the delta.verified webhook.",
                row.anchor_id
            ),
        }
    }
}

/// One attempt of a delivery, as the dashboard's delivery and event views
/// show it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    attempt: u64,
    started_at: String,
    duration_ms: u64,
    http_status: Option<u16>,
    outcome: &'static str,
    error: Option<String>,
}

impl AttemptView {
    /// The attempts of delivery `delivery_id` among `attempts`, in order.
    pub fn of(attempts: &[AttemptRow], delivery_id: &DeliveryId) -> Vec<AttemptView> {
        attempts
            .iter()
            .filter(|a| &a.delivery_id == delivery_id)
            .map(|a| AttemptView {
                attempt: a.attempt,
                started_at: iso(a.started_at),
                duration_ms: a.duration_ms,
                http_status: a.http_status,
                outcome: a.outcome.as_str(),
                error: a.error.clone(),
            })
            .collect()
    }
}

/// How far a delivery got, as both dashboard lists of deliveries show it
/// (a webhook's and the event log's, `routes::webhooks`), between their own
/// fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryProgress {
    status: &'static str,
    attempts: Vec<AttemptView>,
    next_attempt_at: Option<String>,
    last_http_status: Option<u16>,
    /// Why the delivery ended without success, or the last attempt's error.
    last_error: Option<String>,
    created_at: String,
    completed_at: Option<String>,
}

impl DeliveryProgress {
    /// Delivery `d`'s progress, with its attempts among `attempts`.
    pub fn of(d: &DeliveryRow, attempts: &[AttemptRow]) -> Self {
        DeliveryProgress {
            status: d.status.as_str(),
            attempts: AttemptView::of(attempts, &d.of.id),
            next_attempt_at: d.next_attempt_at.map(iso),
            last_http_status: d.last_http_status,
            last_error: d.last_error.clone(),
            created_at: iso(d.created_at),
            completed_at: d.completed_at.map(iso),
        }
    }
}

/// A refused row as receipts and derive list it, from its stored refusal item; its
/// inclusion proof is added once read.
pub fn refusal_of(row: &DeltaRow) -> ApiResult<bvs_core::receipt::ProvenRefusal> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Stored {
        balance: Amount,
        code: String,
        condition: bvs_core::conditions::Conditions,
        delta: Amount,
        item_hash: Hash32,
        sequence: u64,
        #[serde(default)]
        tenant_default: bool,
    }
    let (Some(text), Some(leaf)) = (row.refusal.as_deref(), row.refusal_leaf) else {
        return Err(ApiError::internal("a refused delta without its refusal"));
    };
    let stored: Stored = serde_json::from_str(text)
        .map_err(|e| ApiError::internal(format!("stored refusal: {e}")))?;
    Ok(bvs_core::receipt::ProvenRefusal {
        anchor_id: row.anchor_id.to_string(),
        item_hash: stored.item_hash,
        delta: stored.delta,
        code: stored.code,
        condition: stored.condition,
        sequence: stored.sequence,
        balance: stored.balance,
        tenant_default: stored.tenant_default,
        refusal_hash: Hash32::digest(text.as_bytes()),
        leaf_index: bvs_core::LeafIndex(leaf),
        inclusion_proof: Vec::new(),
    })
}

/// The delta's content as hashed, while retention has not purged it.
pub fn raw_content(row: &DeltaRow) -> ApiResult<Option<bvs_core::item::DeltaContent>> {
    if row.data_purged != 0 {
        return Ok(None);
    }
    let Some(reason) = row.reason.clone() else {
        return Ok(None);
    };
    Ok(Some(bvs_core::item::DeltaContent {
        anchor_id: row.anchor_id.to_string(),
        customer_id: row.customer_id.as_str().to_owned(),
        delta: row.delta,
        reason,
        reference_id: row.reference_id.clone(),
        metadata: row
            .metadata
            .as_deref()
            .map(bvs_core::json::parse)
            .transpose()
            .map_err(|e| ApiError::internal(format!("stored metadata: {e}")))?,
        declared_timestamp: iso(row.declared_at),
        asset: row.asset.clone(),
        conditions: row.conditions,
    }))
}
