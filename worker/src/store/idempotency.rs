//! Idempotency-Key records: claims in the control database; the answers
//! of committed writes in the ledger database, written in the write's own
//! batch (`result_statements`).

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{args, batch, changes, first, run, stmt};
use crate::error::{ApiError, ApiResult};

const DELETE_EXPIRED_ONE: &str =
    "DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at <= ?4";
const INSERT_IN_FLIGHT: &str = "INSERT OR IGNORE INTO idempotency_keys \
     (tenant_id, env, key, request_hash, state, created_at, expires_at, lease_until) \
     VALUES (?1, ?2, ?3, ?4, 'in_flight', ?5, ?6, ?7)";
const SELECT_ONE: &str =
    "SELECT request_hash, state, response_status, response_body, lease_until, quota_charged \
     FROM idempotency_keys \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3";
const COMPLETE: &str =
    "UPDATE idempotency_keys SET state = 'done', response_status = ?4, response_body = ?5 \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3";
const ABANDON: &str =
    "DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND state = 'in_flight'";
const DELETE_EXPIRED: &str = "DELETE FROM idempotency_keys WHERE expires_at <= ?1";
const TAKE_OVER: &str = "UPDATE idempotency_keys SET lease_until = ?5 \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND state = 'in_flight' AND lease_until = ?4";
/// Runs right after the quota's conditional UPDATE in one batch: marks the
/// claim charged only when that UPDATE changed its row.
const MARK_CHARGED: &str = "UPDATE idempotency_keys SET quota_charged = ?4 \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND changes() = 1";
const DELETE_EXPIRED_RESULT: &str = "DELETE FROM idempotency_results \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at <= ?4";
const INSERT_RESULT: &str = "INSERT INTO idempotency_results \
     (tenant_id, env, key, request_hash, response_status, response_body, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
const SELECT_RESULT: &str =
    "SELECT request_hash, response_status, response_body FROM idempotency_results \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at > ?4";
const DELETE_EXPIRED_RESULTS: &str = "DELETE FROM idempotency_results WHERE expires_at <= ?1";

#[derive(Debug, Deserialize)]
pub struct Record {
    pub request_hash: String,
    pub state: String,
    pub response_status: Option<u16>,
    pub response_body: Option<String>,
    #[serde(default)]
    pub lease_until: u64,
    #[serde(default)]
    pub quota_charged: u64,
}

/// The stored answer of a committed write (ledger database).
#[derive(Debug, Deserialize)]
pub struct StoredResult {
    pub request_hash: String,
    pub response_status: u16,
    pub response_body: String,
}

pub struct Scope<'a> {
    pub tenant_id: &'a str,
    pub env: &'a str,
    pub key: &'a str,
}

/// Claims the key for a new request, in one round trip (one batch: drop
/// an expired record, insert the claim if the key is free, read the
/// record). Returns `None` when claimed, or the existing record.
pub async fn claim(
    db: &D1Database,
    s: &Scope<'_>,
    request_hash: &str,
    now_ms: u64,
    expires_at: u64,
    lease_until: u64,
) -> ApiResult<Option<Record>> {
    let key = args![s.tenant_id, s.env, s.key];
    let results = batch(
        db,
        vec![
            stmt(
                db,
                DELETE_EXPIRED_ONE,
                &args![s.tenant_id, s.env, s.key, now_ms],
            )?,
            stmt(
                db,
                INSERT_IN_FLIGHT,
                &args![
                    s.tenant_id,
                    s.env,
                    s.key,
                    request_hash,
                    now_ms,
                    expires_at,
                    lease_until
                ],
            )?,
            stmt(db, SELECT_ONE, &key)?,
        ],
    )
    .await?;
    let (Some(inserted), Some(read)) = (results.get(1), results.get(2)) else {
        return Err(ApiError::internal("d1 batch returned too few results"));
    };
    if changes(inserted)? > 0 {
        return Ok(None);
    }
    Ok(read
        .results::<Record>()
        .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))?
        .into_iter()
        .next())
}

pub async fn complete(db: &D1Database, s: &Scope<'_>, status: u16, body: &str) -> ApiResult<()> {
    run(
        db,
        COMPLETE,
        &args![s.tenant_id, s.env, s.key, status, body],
    )
    .await?;
    Ok(())
}

/// Releases a claim whose request failed, so a retry can run.
pub async fn abandon(db: &D1Database, s: &Scope<'_>) -> ApiResult<()> {
    run(db, ABANDON, &args![s.tenant_id, s.env, s.key]).await?;
    Ok(())
}

pub async fn delete_expired(db: &D1Database, now_ms: u64) -> ApiResult<u64> {
    run(db, DELETE_EXPIRED, &args![now_ms]).await
}

/// Takes over an in-flight claim whose lease (`old_lease`) has passed; at
/// most one retry wins. Returns whether this one did.
pub async fn take_over(
    db: &D1Database,
    s: &Scope<'_>,
    old_lease: u64,
    new_lease: u64,
) -> ApiResult<bool> {
    let changed = run(
        db,
        TAKE_OVER,
        &args![s.tenant_id, s.env, s.key, old_lease, new_lease],
    )
    .await?;
    Ok(changed == 1)
}

/// The statement that marks the claim as having charged `count` deltas; it
/// goes into the quota's batch right after the conditional count.
pub fn mark_charged_statement(
    db: &D1Database,
    s: &Scope<'_>,
    count: u64,
) -> ApiResult<D1PreparedStatement> {
    stmt(db, MARK_CHARGED, &args![s.tenant_id, s.env, s.key, count])
}

/// The answer a write stores under its key, in the write's own batch: an
/// expired answer is dropped first; a live one makes the INSERT, and so the
/// whole batch, fail.
pub struct NewResult<'a> {
    pub request_hash: &'a str,
    pub status: u16,
    pub body: &'a str,
    pub now_ms: u64,
    pub expires_at: u64,
}

pub fn result_statements(
    ledger: &D1Database,
    s: &Scope<'_>,
    r: &NewResult<'_>,
) -> ApiResult<Vec<D1PreparedStatement>> {
    Ok(vec![
        stmt(
            ledger,
            DELETE_EXPIRED_RESULT,
            &args![s.tenant_id, s.env, s.key, r.now_ms],
        )?,
        stmt(
            ledger,
            INSERT_RESULT,
            &args![
                s.tenant_id,
                s.env,
                s.key,
                r.request_hash,
                r.status,
                r.body,
                r.expires_at
            ],
        )?,
    ])
}

/// The live stored answer for the key, if its write committed.
pub async fn stored_result(
    ledger: &D1Database,
    s: &Scope<'_>,
    now_ms: u64,
) -> ApiResult<Option<StoredResult>> {
    first(
        ledger,
        SELECT_RESULT,
        &args![s.tenant_id, s.env, s.key, now_ms],
    )
    .await
}

pub async fn delete_expired_results(ledger: &D1Database, now_ms: u64) -> ApiResult<u64> {
    run(ledger, DELETE_EXPIRED_RESULTS, &args![now_ms]).await
}
