//! The ledger databases' event outbox: written by the sequencer in its
//! round's batch, moved to webhook deliveries by `webhooks::dispatch`.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{args, bind_text, chunked, int, queries, stmt, ListSql, Statements};
use crate::error::ApiResult;

const INSERT: ListSql = ListSql {
    sql: "INSERT INTO events (id, tenant_id, type, payload, created_at) VALUES {list}",
    cols: 5,
};
const INSERT_ONCE: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5)";
const SELECT_PENDING: &str =
    "SELECT id, tenant_id, type, payload, created_at FROM events WHERE dispatched_at IS NULL \
     ORDER BY created_at, id LIMIT ?1";
const MARK_DISPATCHED: ListSql = ListSql {
    sql: "UPDATE events SET dispatched_at = ?1 WHERE dispatched_at IS NULL AND id IN ({list})",
    cols: 1,
};

pub struct NewEvent {
    pub id: String,
    pub tenant_id: String,
    pub kind: &'static str,
    pub payload: String,
}

pub fn insert(db: &D1Database, events: &[NewEvent], now_ms: u64) -> Statements {
    let now = int(now_ms)?;
    chunked(db, &INSERT, &[], events, |e, args| {
        args.extend(args![&e.id, &e.tenant_id, e.kind, &e.payload, now]);
        Ok(())
    })
}

queries! {
    /// Adds an event once (its id is deterministic).
    pub fn insert_once(id: &str, tenant_id: &str, kind: &str, payload: &str, now_ms: u64) -> ()
        = exec(INSERT_ONCE);
}

#[derive(Debug, Clone, Deserialize)]
pub struct EventRow {
    pub id: String,
    pub tenant_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub payload: String,
    pub created_at: u64,
}

queries! {
    /// Events not yet moved to deliveries, oldest first.
    pub fn pending(limit: u64) -> Vec<EventRow> = all(SELECT_PENDING);
}

pub fn mark_dispatched(
    ledger: &D1Database,
    ids: &[String],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    chunked(ledger, &MARK_DISPATCHED, &args![now_ms], ids, bind_text)
}

const INSERT_IF_DELTA_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM deltas WHERE anchor_id = ?6 AND status = 'FAILED')";

/// Adds an event (once: its id is deterministic) only if the delta
/// `anchor_id` is FAILED when the statement runs: put it after
/// `deltas::mark_failed` in the same batch.
pub fn insert_if_delta_failed(
    db: &D1Database,
    event: &NewEvent,
    anchor_id: &str,
    now_ms: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = args![
        &event.id,
        &event.tenant_id,
        event.kind,
        &event.payload,
        now_ms,
        anchor_id
    ];
    stmt(db, INSERT_IF_DELTA_FAILED, &args)
}

const INSERT_IF_FACT_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM facts WHERE tenant_id = ?2 AND content_hash = ?6 AND status = 'FAILED')";

/// Adds an event (once: its id is deterministic) only if the event
/// tenant's fact `content_hash` is FAILED when the statement runs: put it
/// after `facts::mark_failed` in the same batch.
pub fn insert_if_fact_failed(
    db: &D1Database,
    event: &NewEvent,
    content_hash: &str,
    now_ms: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = args![
        &event.id,
        &event.tenant_id,
        event.kind,
        &event.payload,
        now_ms,
        content_hash
    ];
    stmt(db, INSERT_IF_FACT_FAILED, &args)
}

const INSERT_IF_CHECKPOINT_FAILED: &str =
    "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS \
     (SELECT 1 FROM checkpoints WHERE id = ?6 AND status = 'FAILED')";

/// Adds an event (once: its id is deterministic) only if the checkpoint
/// `id` is FAILED when the statement runs: put it after
/// `checkpoints::mark_failed` in the same batch.
pub fn insert_if_checkpoint_failed(
    db: &D1Database,
    event: &NewEvent,
    checkpoint_id: &str,
    now_ms: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = args![
        &event.id,
        &event.tenant_id,
        event.kind,
        &event.payload,
        now_ms,
        checkpoint_id
    ];
    stmt(db, INSERT_IF_CHECKPOINT_FAILED, &args)
}
