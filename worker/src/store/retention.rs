//! The retention purge's SQL. Each statement purges at most `limit` rows,
//! and nulls a row's raw fields and sets its purge marks in the same
//! statement, so a row is either untouched or fully purged.

use serde::Deserialize;
use worker::D1Database;

use super::Query;
use super::{args, first, run};
use crate::error::ApiResult;
use crate::ids::TenantId;

const SELECT_CURSOR: &str = "SELECT tenant_id FROM retention_cursor WHERE id = 1";
const SET_CURSOR: &str = "INSERT INTO retention_cursor (id, tenant_id, updated_at) \
     VALUES (1, ?1, ?2) \
     ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, updated_at = excluded.updated_at";

/// The last tenant the purge visited (control database), if any.
pub async fn cursor(control: &D1Database) -> ApiResult<Option<String>> {
    #[derive(Deserialize)]
    struct Cursor {
        tenant_id: String,
    }
    let row: Option<Cursor> = first(control, Query::new(SELECT_CURSOR, [])).await?;
    Ok(row.map(|c| c.tenant_id))
}

/// Records the last tenant the purge visited.
/// (A cursor, not a tenant: "" before the first.)
pub async fn set_cursor(control: &D1Database, tenant_id: &str, now_ms: u64) -> ApiResult<()> {
    run(control, Query::new(SET_CURSOR, args![tenant_id, now_ms])).await?;
    Ok(())
}

const PURGE_DELTAS: &str =
    "UPDATE deltas SET reason = NULL, reference_id = NULL, metadata = NULL, data_purged = 1, \
     purged_at = ?3 WHERE rowid IN (SELECT rowid FROM deltas WHERE tenant_id = ?1 \
     AND data_purged = 0 AND status = 'VERIFIED' AND verified_at < ?2 LIMIT ?4)";
const PURGE_FACTS: &str = "UPDATE facts SET metadata = NULL, data_purged = 1, purged_at = ?3 \
     WHERE rowid IN (SELECT rowid FROM facts WHERE tenant_id = ?1 AND data_purged = 0 \
     AND status = 'VERIFIED' AND verified_at < ?2 LIMIT ?4)";
/// A FAILED delta was never verified and never will be: its window runs
/// from when it was received.
const PURGE_FAILED_DELTAS: &str =
    "UPDATE deltas SET reason = NULL, reference_id = NULL, metadata = NULL, data_purged = 1, \
     purged_at = ?3 WHERE rowid IN (SELECT rowid FROM deltas WHERE tenant_id = ?1 \
     AND data_purged = 0 AND status = 'FAILED' AND received_at < ?2 LIMIT ?4)";
/// A FAILED fact's window runs from when it was submitted.
const PURGE_FAILED_FACTS: &str =
    "UPDATE facts SET metadata = NULL, data_purged = 1, purged_at = ?3 \
     WHERE rowid IN (SELECT rowid FROM facts WHERE tenant_id = ?1 AND data_purged = 0 \
     AND status = 'FAILED' AND created_at < ?2 LIMIT ?4)";
const PURGE_EVENTS: &str =
    "DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE tenant_id = ?1 \
     AND dispatched_at IS NOT NULL AND created_at < ?2 LIMIT ?3)";
const PURGE_DELIVERIES: &str =
    "UPDATE webhook_deliveries SET payload = NULL, url = NULL, data_purged = 1, purged_at = ?3 \
     WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE tenant_id = ?1 \
     AND data_purged = 0 AND completed_at IS NOT NULL AND completed_at < ?2 LIMIT ?4)";

/// One purge: a tenant's rows completed before `cutoff_ms`, at most
/// `limit` of them, stamped `now_ms`.
pub struct Purge<'a> {
    pub tenant_id: &'a TenantId,
    pub cutoff_ms: u64,
    pub now_ms: u64,
    pub limit: u64,
}

/// Runs one purge statement (`?1` tenant, `?2` cutoff, `?3` now, `?4` limit).
async fn purge(db: &D1Database, sql: &'static str, p: &Purge<'_>) -> ApiResult<u64> {
    let args = args![p.tenant_id, p.cutoff_ms, p.now_ms, p.limit];
    run(db, Query::new(sql, args)).await
}

/// Deltas verified before `cutoff_ms` lose reason, referenceId and metadata.
/// Returns rows purged.
pub async fn purge_deltas(ledger: &D1Database, p: &Purge<'_>) -> ApiResult<u64> {
    purge(ledger, PURGE_DELTAS, p).await
}

/// Facts verified before `cutoff_ms` lose their optional metadata (the
/// content is what the fact is, and stays). Returns rows purged.
pub async fn purge_facts(ledger: &D1Database, p: &Purge<'_>) -> ApiResult<u64> {
    purge(ledger, PURGE_FACTS, p).await
}

/// FAILED deltas received before `cutoff_ms` lose reason, referenceId and
/// metadata, as verified ones do. Returns rows purged.
pub async fn purge_failed_deltas(ledger: &D1Database, p: &Purge<'_>) -> ApiResult<u64> {
    purge(ledger, PURGE_FAILED_DELTAS, p).await
}

/// FAILED facts submitted before `cutoff_ms` lose their metadata. Returns
/// rows purged.
pub async fn purge_failed_facts(ledger: &D1Database, p: &Purge<'_>) -> ApiResult<u64> {
    purge(ledger, PURGE_FAILED_FACTS, p).await
}

/// Dispatched outbox events created before `cutoff_ms` are deleted: their
/// payload is a copy of raw context, and their work is done. Returns rows
/// deleted.
pub async fn purge_events(
    ledger: &D1Database,
    tenant_id: &TenantId,
    cutoff_ms: u64,
    limit: u64,
) -> ApiResult<u64> {
    run(
        ledger,
        Query::new(PURGE_EVENTS, args![tenant_id, cutoff_ms, limit]),
    )
    .await
}

/// Completed webhook deliveries older than `cutoff_ms` lose payload and url.
/// Returns rows purged.
pub async fn purge_deliveries(control: &D1Database, p: &Purge<'_>) -> ApiResult<u64> {
    purge(control, PURGE_DELIVERIES, p).await
}
