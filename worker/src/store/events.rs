//! The ledger databases' event outbox: written by the sequencer in its
//! round's batch, moved to webhook deliveries by `webhooks::dispatch`.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, chunked, int, run, Arg, ListSql};
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

pub fn insert(
    db: &D1Database,
    events: &[NewEvent],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let now = int(now_ms)?;
    chunked(db, &INSERT, &[], events, |e, args| {
        args.extend([
            Arg::Text(&e.id),
            Arg::Text(&e.tenant_id),
            Arg::Text(e.kind),
            Arg::Text(&e.payload),
            now,
        ]);
        Ok(())
    })
}

/// Adds an event once (its id is deterministic).
pub async fn insert_once(
    ledger: &D1Database,
    id: &str,
    tenant_id: &str,
    kind: &str,
    payload: &str,
    now_ms: u64,
) -> ApiResult<()> {
    let args = [
        Arg::Text(id),
        Arg::Text(tenant_id),
        Arg::Text(kind),
        Arg::Text(payload),
        int(now_ms)?,
    ];
    run(ledger, INSERT_ONCE, &args).await?;
    Ok(())
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

/// Events not yet moved to deliveries, oldest first.
pub async fn pending(ledger: &D1Database, limit: u64) -> ApiResult<Vec<EventRow>> {
    all(ledger, SELECT_PENDING, &[int(limit)?]).await
}

pub fn mark_dispatched(
    ledger: &D1Database,
    ids: &[String],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    chunked(
        ledger,
        &MARK_DISPATCHED,
        &[int(now_ms)?],
        ids,
        |id, args| {
            args.push(Arg::Text(id));
            Ok(())
        },
    )
}
