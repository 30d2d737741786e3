//! The ledger databases' event outbox: written by the sequencer in its
//! round's batch, moved to webhook deliveries by `webhooks::dispatch`.

use bvs_core::hash::Hash32;
use serde::Deserialize;
use worker::D1Database;

use super::{args, over_json, queries, Arg, Query, Statements};
use crate::error::ApiResult;
use crate::ids::{AnchorId, CheckpointId, EventId, TenantId};

super::text_enum! {
    /// An outbox row's `type`: the event names (spec: Events), spelled
    /// once here.
    pub enum EventKind {
        DeltaVerified = "delta.verified",
        CheckpointVerified = "checkpoint.verified",
        VerificationCompleted = "verification.completed",
        VerificationFailed = "verification.failed",
        CheckpointCosigned = "checkpoint.cosigned",
        CheckpointDisputed = "checkpoint.disputed",
        /// Issue 28: a tenant's items became witnessed (a quorum of
        /// witnesses cosigned a head that covers them).
        CheckpointWitnessed = "checkpoint.witnessed",
    }
}

/// The event names as text (a webhook's subscription list, a filter).
pub const DELTA_VERIFIED: &str = EventKind::DeltaVerified.as_str();
pub const CHECKPOINT_VERIFIED: &str = EventKind::CheckpointVerified.as_str();
pub const VERIFICATION_COMPLETED: &str = EventKind::VerificationCompleted.as_str();
pub const VERIFICATION_FAILED: &str = EventKind::VerificationFailed.as_str();
pub const CHECKPOINT_COSIGNED: &str = EventKind::CheckpointCosigned.as_str();
pub const CHECKPOINT_DISPUTED: &str = EventKind::CheckpointDisputed.as_str();
pub const CHECKPOINT_WITNESSED: &str = EventKind::CheckpointWitnessed.as_str();

/// A round's events (`?1`: `[id, tenant_id, type, payload]` each), at `?2`.
const INSERT_SET: &str = "INSERT INTO events (id, tenant_id, type, payload, created_at) \
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), ?2 FROM json_each(?1)";
/// Events (`?1`: `[id, tenant_id, type, payload]` each) at `?2`, each only
/// if its id is not there yet.
const INSERT_ONCE_SET: &str = "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, \
     created_at) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), ?2 FROM json_each(?1)";
const INSERT_ONCE: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5)";
const SELECT_PENDING: &str =
    "SELECT id, tenant_id, type, payload, created_at FROM events WHERE dispatched_at IS NULL \
     ORDER BY created_at, id LIMIT ?1";
/// Events `?1` (a JSON array of ids) dispatched at `?2`.
const MARK_DISPATCHED_SET: &str = "UPDATE events SET dispatched_at = ?2 \
     WHERE dispatched_at IS NULL AND id IN (SELECT value FROM json_each(?1))";

pub struct NewEvent {
    pub id: EventId,
    pub tenant_id: TenantId,
    pub kind: EventKind,
    pub payload: String,
}

/// A round's events: one statement per JSON set (issue 27).
///
/// # Errors
/// A value that cannot be bound.
pub fn insert<'a>(events: &[NewEvent], now_ms: u64) -> Statements<'a> {
    insert_set(INSERT_SET, events, now_ms)
}

/// Like [`insert`], adding only the events whose id is not there yet (ids
/// derived from what they report: each is added once however often).
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_once_all<'a>(events: &[NewEvent], now_ms: u64) -> Statements<'a> {
    insert_set(INSERT_ONCE_SET, events, now_ms)
}

fn insert_set<'a>(sql: &'static str, events: &[NewEvent], now_ms: u64) -> Statements<'a> {
    let rows: Vec<(&str, &str, &str, &str)> = events
        .iter()
        .map(|e| {
            (
                e.id.as_str(),
                e.tenant_id.as_str(),
                e.kind.as_str(),
                e.payload.as_str(),
            )
        })
        .collect();
    over_json(sql, &rows, &args![now_ms])
}

super::statements! {
    /// Adds an event once (its id is deterministic), in the caller's batch.
    pub fn insert_once_statement<'a>(id: &'a EventId, tenant_id: &'a TenantId, kind: EventKind, payload: &'a str, now_ms: u64)
        = INSERT_ONCE;
}

#[derive(Debug, Clone, Deserialize)]
pub struct EventRow {
    pub id: EventId,
    pub tenant_id: TenantId,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub payload: String,
    pub created_at: u64,
}

queries! {
    /// Events not yet moved to deliveries, oldest first.
    pub fn pending(limit: u64) -> Vec<EventRow> = all(SELECT_PENDING);
}

pub fn mark_dispatched<'a>(ids: &[EventId], now_ms: u64) -> ApiResult<Vec<Query<'a>>> {
    over_json(MARK_DISPATCHED_SET, ids, &args![now_ms])
}

const INSERT_IF_DELTA_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM deltas WHERE anchor_id = ?6 AND status = 'FAILED')";
const INSERT_IF_FACT_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM facts WHERE tenant_id = ?2 AND content_hash = ?6 AND status = 'FAILED')";
const INSERT_IF_CHECKPOINT_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM checkpoints WHERE id = ?6 AND status = 'FAILED')";

/// The item a `verification.failed` event waits on: the event is added
/// only if that item is FAILED when the statement runs.
#[derive(Debug, Clone, Copy)]
pub enum FailedItem<'a> {
    /// A delta, by anchor id.
    Delta(&'a AnchorId),
    /// A fact of the event's tenant, by content hash (bound as its hex).
    Fact(&'a Hash32),
    /// A checkpoint, by id.
    Checkpoint(&'a CheckpointId),
}

/// Adds an event (once: its id is deterministic) only if `item` is FAILED
/// when the statement runs: put it after the item's `mark_failed`
/// (`deltas`, `facts`, `checkpoints`) in the same batch. The event made
/// for the statement moves into it.
pub fn insert_if_failed<'a>(
    event: NewEvent,
    item: FailedItem<'a>,
    now_ms: u64,
) -> ApiResult<Query<'a>> {
    let (sql, key) = match item {
        FailedItem::Delta(anchor_id) => (INSERT_IF_DELTA_FAILED, Arg::Text(anchor_id.as_str())),
        FailedItem::Fact(content_hash) => (INSERT_IF_FACT_FAILED, Arg::Hash(content_hash)),
        FailedItem::Checkpoint(id) => (INSERT_IF_CHECKPOINT_FAILED, Arg::Text(id.as_str())),
    };
    let args = args![
        event.id.into_string(),
        event.tenant_id.into_string(),
        event.kind,
        event.payload,
        now_ms,
        key
    ];
    Ok(Query::new(sql, args))
}

// ---------------------------------------------------------------- the event log (issue 30)

/// Dispatched events of a tenant, newest first, strictly older than
/// (`?3`, `?4`), of type `?2` (NULL: any): the retention index
/// `events_dispatched` serves it.
const SELECT_DISPATCHED_PAGE: &str =
    "SELECT id, tenant_id, type, payload, created_at, dispatched_at FROM events \
     WHERE tenant_id = ?1 AND dispatched_at IS NOT NULL AND (?2 IS NULL OR type = ?2) \
     AND (created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
     ORDER BY created_at DESC, id DESC LIMIT ?5";
/// The same among events not dispatched yet (few, `events_pending`).
const SELECT_PENDING_PAGE: &str =
    "SELECT id, tenant_id, type, payload, created_at, dispatched_at FROM events \
     WHERE dispatched_at IS NULL AND tenant_id = ?1 AND (?2 IS NULL OR type = ?2) \
     AND (created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
     ORDER BY created_at DESC, id DESC LIMIT ?5";
const SELECT_ONE_OF_TENANT: &str =
    "SELECT id, tenant_id, type, payload, created_at, dispatched_at FROM events \
     WHERE id = ?1 AND tenant_id = ?2";

/// An event as the event log shows it.
#[derive(Debug, Clone, Deserialize)]
pub struct LoggedEventRow {
    pub id: EventId,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub payload: String,
    pub created_at: u64,
    pub dispatched_at: Option<u64>,
}

/// One page of a tenant's events on one shard, newest first: the
/// dispatched ones and those still waiting, read in one batch.
///
/// # Errors
/// D1 errors.
pub async fn page_of_tenant(
    db: &D1Database,
    tenant_id: &TenantId,
    kind: Option<&str>,
    before: (u64, &str),
    limit: u64,
) -> ApiResult<Vec<LoggedEventRow>> {
    let a = args![tenant_id, kind, before.0, before.1, limit];
    let statements = vec![
        Query::new(SELECT_DISPATCHED_PAGE, a.clone()),
        Query::new(SELECT_PENDING_PAGE, a),
    ];
    super::batch_rows(db, statements).await
}

queries! {
    /// One of the tenant's events.
    pub fn one_of_tenant(id: &EventId, tenant_id: &TenantId) -> Option<LoggedEventRow> = first(SELECT_ONE_OF_TENANT);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_event_type_reads_as_its_kind_and_binds_the_same_word() {
        for name in crate::webhooks::EVENT_NAMES
            .iter()
            .filter(|n| **n != "test")
        {
            let kind: EventKind = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(kind.as_str(), *name);
        }
        assert!(serde_json::from_str::<EventKind>("\"delta.lost\"").is_err());
    }
}
