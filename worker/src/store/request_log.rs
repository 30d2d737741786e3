//! The request log (ledger databases, migrations/ledger/0090_request_log.sql)
//! and what its writer reads of a tenant (control database). Rows are
//! written many at a time, as one JSON array bound to one parameter
//! (`json_each`), so a batch of any size is one statement per chunk and
//! never meets D1's limit of 100 bound parameters.

use serde::Deserialize;
use worker::D1Database;

use super::{args, bind_text, chunked, queries, row, ListSql, Query};
use crate::error::{ApiError, ApiResult};
use crate::ids::{KeyId, TenantId};

/// `?1`: a JSON array of rows, each an array of the columns in this order.
const INSERT_ROWS: &str = "INSERT INTO request_log (request_id, tenant_id, source, created_at, \
     method, path, route, status, code, key_id, duration_ms, request_body, response_body, \
     expires_at) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
     json_extract(value, '$[5]'), json_extract(value, '$[6]'), json_extract(value, '$[7]'), \
     json_extract(value, '$[8]'), json_extract(value, '$[9]'), json_extract(value, '$[10]'), \
     json_extract(value, '$[11]'), json_extract(value, '$[12]'), json_extract(value, '$[13]') \
     FROM json_each(?1) WHERE changes() > 0";
/// Raises a tenant's request log meter of the day (`?1` tenant, `?2` the
/// meter, `?3` day, `?4` bytes, `?5` cap) only if the raise fits under the cap: changes no
/// row when the day is full, and then the tenant's rows that follow it in
/// the batch (`INSERT_ROWS`, `WHERE changes() > 0`) write nothing. Never
/// fails, so the tenants of one shard share one batch.
const RAISE_DAY_IF_ROOM: &str = "INSERT INTO meters (tenant_id, meter, period, used, cap) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE ?4 <= ?5 \
     ON CONFLICT (tenant_id, meter, period) DO UPDATE SET used = used + excluded.used, \
     cap = excluded.cap WHERE meters.used + excluded.used <= excluded.cap";

row! {
    $ select_entries from "request_log";
    /// A logged request without its bodies, as the list shows it.
    #[derive(Debug, Clone, Deserialize)]
    pub struct EntryRow {
        request_id: String, source: String, created_at: u64, method: String, path: String,
        route: String, status: u16, code: Option<String>, key_id: Option<KeyId>,
        duration_ms: u64,
    }
}

row! {
    /// A logged request's bodies (redacted, cut).
    #[derive(Debug, Clone, Deserialize)]
    pub struct BodiesRow { request_body: Option<String>, response_body: Option<String> }
}

/// One page, newest first: `?1` tenant, `?2`/`?3` the sources read on this
/// shard, `?4`..`?5` the time range, `?6`/`?7` the cursor (strictly older
/// than (created_at, request_id)), `?8`..`?9` the status range, `?10` a
/// piece of the path (NULL: any), `?11` a key id (NULL: any), `?12` the
/// page size.
const SELECT_PAGE: &str = select_entries!(
    "WHERE tenant_id = ?1 AND source IN (?2, ?3) AND created_at >= ?4 AND created_at <= ?5 \
     AND (created_at < ?6 OR (created_at = ?6 AND request_id < ?7)) \
     AND status >= ?8 AND status < ?9 AND (?10 IS NULL OR instr(path, ?10) > 0) \
     AND (?11 IS NULL OR key_id = ?11) \
     ORDER BY created_at DESC, request_id DESC LIMIT ?12"
);
/// The newest request of the tenant with this id (a caller may reuse one).
const SELECT_ONE: &str = "SELECT request_id, source, created_at, method, path, route, status, \
     code, key_id, duration_ms, request_body, response_body FROM request_log \
     WHERE tenant_id = ?1 AND request_id = ?2 ORDER BY created_at DESC LIMIT 1";
const PURGE_EXPIRED: &str = "DELETE FROM request_log WHERE rowid IN \
     (SELECT rowid FROM request_log WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)";
const PURGE_TENANT_BEFORE: &str = "DELETE FROM request_log WHERE rowid IN \
     (SELECT rowid FROM request_log WHERE tenant_id = ?1 AND created_at < ?2 LIMIT ?3)";
/// Daily meters of the request log that no kept row can be counted in.
const PURGE_OLD_METERS: &str = "DELETE FROM meters WHERE meter = 'request_log' AND period < ?1";

/// The filter of one shard's page read.
pub struct PageQuery<'a> {
    pub tenant_id: &'a TenantId,
    /// One or two sources; a single one is bound twice.
    pub sources: [&'a str; 2],
    pub since_ms: u64,
    pub until_ms: u64,
    /// Strictly older than this (created_at, request_id).
    pub before: (u64, &'a str),
    pub status_from: u16,
    pub status_to: u16,
    pub path_part: Option<&'a str>,
    pub key_id: Option<&'a KeyId>,
    pub limit: u64,
}

/// One page of one shard's rows, newest first.
///
/// # Errors
/// D1 errors.
pub async fn page(db: &D1Database, q: &PageQuery<'_>) -> ApiResult<Vec<EntryRow>> {
    let args = args![
        q.tenant_id,
        q.sources[0],
        q.sources[1],
        q.since_ms,
        q.until_ms,
        q.before.0,
        q.before.1,
        q.status_from,
        q.status_to,
        q.path_part,
        q.key_id,
        q.limit
    ];
    super::all(db, Query::new(SELECT_PAGE, args)).await
}

/// A logged request with its bodies.
#[derive(Debug, Clone, Deserialize)]
pub struct DetailRow {
    #[serde(flatten)]
    pub entry: EntryRow,
    #[serde(flatten)]
    pub bodies: BodiesRow,
}

queries! {
    /// The tenant's newest request with this id on this shard.
    pub fn one(tenant_id: &TenantId, request_id: &str) -> Option<DetailRow> = first(SELECT_ONE);
    /// Deletes up to `limit` expired rows; returns how many.
    pub fn purge_expired(now_ms: u64, limit: u64) -> u64 = run(PURGE_EXPIRED);
    /// Deletes up to `limit` of the tenant's rows written before `cutoff_ms`.
    pub fn purge_tenant_before(tenant_id: &TenantId, cutoff_ms: u64, limit: u64) -> u64
        = run(PURGE_TENANT_BEFORE);
    /// Deletes the request log's daily meters of days before `day` (YYYY-MM-DD).
    pub fn purge_meters_before(day: &str) -> u64 = run(PURGE_OLD_METERS);
}

/// The insert of `rows_json` (a JSON array of rows, see [`INSERT_ROWS`]).
///
/// # Errors
/// A value that cannot be bound.
pub fn insert<'a>(rows_json: String) -> ApiResult<Query<'a>> {
    Ok(Query::new(INSERT_ROWS, args![rows_json]))
}

/// The day's raise of a tenant's request log meter, first of the tenant's
/// statements in a flush's batch ([`RAISE_DAY_IF_ROOM`]): `add` bytes on
/// `day` (YYYY-MM-DD) under `cap`.
///
/// # Errors
/// A value that cannot be bound.
pub fn raise_day<'a>(
    tenant_id: &'a TenantId,
    day: &'a str,
    add: u64,
    cap: u64,
) -> ApiResult<Query<'a>> {
    let meter = super::meters::Meter::RequestLog.as_str();
    Ok(Query::new(
        RAISE_DAY_IF_ROOM,
        args![tenant_id, meter, day, add, cap],
    ))
}

/// Runs a batch written after the response; each statement's changed
/// rows. Not counted in the isolate's round-trip counters (`roundtrips`):
/// it is no request's round trip, and a flush landing while another
/// request is measured must not count there.
///
/// # Errors
/// D1 errors.
pub async fn batch_after_response(
    db: &D1Database,
    statements: Vec<Query<'_>>,
) -> ApiResult<Vec<u64>> {
    let results = super::send_batch(db, statements)
        .await?
        .map_err(|e| ApiError::internal(format!("d1 batch: {e}")))?;
    results.iter().map(super::changes).collect()
}

// ---------------------------------------------------------------- control

const SELECT_TENANTS: ListSql = ListSql {
    sql: "SELECT t.id AS tenant_id, t.plan, t.data_retention_days, c.shard AS sandbox_shard \
          FROM tenants t LEFT JOIN contracts c ON c.tenant_id = t.id AND c.env = 'sandbox' \
          WHERE t.id IN ({list})",
    cols: 1,
};

row! {
    /// What the writer needs of a tenant: its plan (the log's time and
    /// daily bytes), its retention window, and where its Sandbox lives
    /// (dashboard requests are kept there).
    #[derive(Debug, Clone, Deserialize)]
    pub struct TenantRow {
        tenant_id: TenantId,
        #[serde(deserialize_with = "crate::plan::stored")]
        plan: crate::plan::Plan,
        data_retention_days: Option<u32>,
        sandbox_shard: Option<u32>,
    }
}

/// These tenants (control database), read after the response: not counted
/// (see [`batch_after_response`]).
///
/// # Errors
/// D1 errors.
pub async fn tenants(control: &D1Database, ids: &[TenantId]) -> ApiResult<Vec<TenantRow>> {
    let statements = chunked(&SELECT_TENANTS, &[], ids, bind_text)?;
    let mut out = Vec::new();
    if statements.is_empty() {
        return Ok(out);
    }
    let results = super::send_batch(control, statements)
        .await?
        .map_err(|e| ApiError::internal(format!("d1 batch: {e}")))?;
    for r in results {
        out.extend(
            r.results::<TenantRow>()
                .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))?,
        );
    }
    Ok(out)
}
