//! The dashboard's search by id (issue 30): every kind of id a tenant can
//! hold, looked up by its primary key or index, in one batch per database.

use bvs_core::hash::Hash32;
use serde::Deserialize;
use worker::D1Database;

use super::{args, batch, row, rows, Query};
use crate::error::ApiResult;
use crate::ids::{DeliveryId, EventId, TenantId};

// What one shard may hold under an id: `?1` tenant, `?2` the id.

/// A delta by its anchorId.
const FIND_DELTA: &str =
    "SELECT anchor_id AS id, customer_id, items_root AS root, status AS state FROM deltas \
     WHERE anchor_id = ?2 AND tenant_id = ?1";
/// The deltas of a submission (single emit or batch) by its root.
const FIND_SUBMISSION: &str =
    "SELECT anchor_id AS id, customer_id, items_root AS root, status AS state FROM deltas \
     WHERE items_root = ?2 AND tenant_id = ?1 ORDER BY position LIMIT 5";
/// A receipt by its root.
const FIND_RECEIPT: &str =
    "SELECT items_root AS id, customer_id, items_root AS root, period AS state FROM receipts \
     WHERE items_root = ?2 AND tenant_id = ?1 LIMIT 5";
/// A checkpoint by its id or its proof root.
const FIND_CHECKPOINT: &str =
    "SELECT id, customer_id, merkle_root AS root, status AS state FROM checkpoints \
     WHERE tenant_id = ?1 AND (id = ?2 OR merkle_root = ?2) LIMIT 5";
/// A customer by its id.
const FIND_CUSTOMER: &str =
    "SELECT customer_id AS id, customer_id, latest_items_root AS root, NULL AS state \
     FROM ledgers WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ''";
/// An event by its id.
const FIND_EVENT: &str = "SELECT id, NULL AS customer_id, NULL AS root, type AS state FROM events \
     WHERE id = ?2 AND tenant_id = ?1";
/// A request by its Request-Id.
const FIND_REQUEST: &str =
    "SELECT request_id AS id, NULL AS customer_id, NULL AS root, CAST(status AS TEXT) AS state \
     FROM request_log WHERE tenant_id = ?1 AND request_id = ?2 \
     ORDER BY created_at DESC LIMIT 1";
/// A fact by its content hash.
const FIND_FACT: &str =
    "SELECT content_hash AS id, NULL AS customer_id, NULL AS root, status AS state FROM facts \
     WHERE tenant_id = ?1 AND content_hash = ?2";
/// Every lookup of one shard, in one batch.
const SHARD_LOOKUPS: [&str; 8] = [
    FIND_DELTA,
    FIND_SUBMISSION,
    FIND_RECEIPT,
    FIND_CHECKPOINT,
    FIND_CUSTOMER,
    FIND_EVENT,
    FIND_REQUEST,
    FIND_FACT,
];

/// Which lookup of [`SHARD_LOOKUPS`] a hit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardKind {
    Delta,
    Submission,
    Receipt,
    Checkpoint,
    Customer,
    Event,
    Request,
    Fact,
}

const SHARD_KINDS: [ShardKind; 8] = [
    ShardKind::Delta,
    ShardKind::Submission,
    ShardKind::Receipt,
    ShardKind::Checkpoint,
    ShardKind::Customer,
    ShardKind::Event,
    ShardKind::Request,
    ShardKind::Fact,
];

row! {
    /// One hit: the object's id, its customer (if it has one), the proof
    /// root it belongs to, and its state (status, period or event type).
    #[derive(Debug, Clone, Deserialize)]
    pub struct HitRow {
        id: String, customer_id: Option<String>, root: Option<Hash32>, state: Option<String>,
    }
}

/// Every hit of `id` on one shard, with the lookup it came from.
///
/// # Errors
/// D1 errors.
pub async fn on_shard(
    db: &D1Database,
    tenant_id: &TenantId,
    id: &str,
) -> ApiResult<Vec<(ShardKind, HitRow)>> {
    let a = args![tenant_id, id];
    let statements = SHARD_LOOKUPS
        .iter()
        .map(|sql| Ok(Query::new(sql, a.clone())))
        .collect::<ApiResult<Vec<_>>>()?;
    let results = batch(db, statements).await?;
    let mut out = Vec::new();
    for (i, kind) in SHARD_KINDS.iter().enumerate() {
        for hit in rows::<HitRow>(&results, i)? {
            out.push((*kind, hit));
        }
    }
    Ok(out)
}

/// A delivery by its id, or the deliveries of an event by the event's id
/// (test events live only here); control database.
const DELIVERY_LOOKUP: &str = "SELECT id, event_id, event_type, env FROM webhook_deliveries \
     WHERE tenant_id = ?1 AND (id = ?2 OR event_id = ?2) LIMIT 5";

row! {
    #[derive(Debug, Clone, Deserialize)]
    pub struct DeliveryHitRow { id: DeliveryId, event_id: EventId, event_type: String, env: Option<String> }
}

/// Deliveries of the tenant matching `id` (their own id or their event's).
///
/// # Errors
/// D1 errors.
pub async fn deliveries(
    control: &D1Database,
    tenant_id: &TenantId,
    id: &str,
) -> ApiResult<Vec<DeliveryHitRow>> {
    super::all(control, Query::new(DELIVERY_LOOKUP, args![tenant_id, id])).await
}
