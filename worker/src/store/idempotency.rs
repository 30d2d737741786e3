//! Idempotency-Key records (control database).

use serde::Deserialize;
use worker::D1Database;

use super::{first, int, run, Arg};
use crate::error::ApiResult;

const DELETE_EXPIRED_ONE: &str =
    "DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at <= ?4";
const INSERT_IN_FLIGHT: &str = "INSERT OR IGNORE INTO idempotency_keys \
     (tenant_id, env, key, request_hash, state, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, 'in_flight', ?5, ?6)";
const SELECT_ONE: &str =
    "SELECT request_hash, state, response_status, response_body FROM idempotency_keys \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3";
const COMPLETE: &str =
    "UPDATE idempotency_keys SET state = 'done', response_status = ?4, response_body = ?5 \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3";
const ABANDON: &str =
    "DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND state = 'in_flight'";
const DELETE_EXPIRED: &str = "DELETE FROM idempotency_keys WHERE expires_at <= ?1";

#[derive(Debug, Deserialize)]
pub struct Record {
    pub request_hash: String,
    pub state: String,
    pub response_status: Option<u16>,
    pub response_body: Option<String>,
}

pub struct Scope<'a> {
    pub tenant_id: &'a str,
    pub env: &'a str,
    pub key: &'a str,
}

/// Claims the key for a new request. Returns `None` when claimed, or the
/// existing record.
pub async fn claim(
    db: &D1Database,
    s: &Scope<'_>,
    request_hash: &str,
    now_ms: u64,
    expires_at: u64,
) -> ApiResult<Option<Record>> {
    run(
        db,
        DELETE_EXPIRED_ONE,
        &[
            Arg::Text(s.tenant_id),
            Arg::Text(s.env),
            Arg::Text(s.key),
            int(now_ms)?,
        ],
    )
    .await?;
    let inserted = run(
        db,
        INSERT_IN_FLIGHT,
        &[
            Arg::Text(s.tenant_id),
            Arg::Text(s.env),
            Arg::Text(s.key),
            Arg::Text(request_hash),
            int(now_ms)?,
            int(expires_at)?,
        ],
    )
    .await?;
    if inserted > 0 {
        return Ok(None);
    }
    first(
        db,
        SELECT_ONE,
        &[Arg::Text(s.tenant_id), Arg::Text(s.env), Arg::Text(s.key)],
    )
    .await
}

pub async fn complete(db: &D1Database, s: &Scope<'_>, status: u16, body: &str) -> ApiResult<()> {
    run(
        db,
        COMPLETE,
        &[
            Arg::Text(s.tenant_id),
            Arg::Text(s.env),
            Arg::Text(s.key),
            Arg::Int(i64::from(status)),
            Arg::Text(body),
        ],
    )
    .await?;
    Ok(())
}

/// Releases a claim whose request failed, so a retry can run.
pub async fn abandon(db: &D1Database, s: &Scope<'_>) -> ApiResult<()> {
    run(
        db,
        ABANDON,
        &[Arg::Text(s.tenant_id), Arg::Text(s.env), Arg::Text(s.key)],
    )
    .await?;
    Ok(())
}

pub async fn delete_expired(db: &D1Database, now_ms: u64) -> ApiResult<u64> {
    run(db, DELETE_EXPIRED, &[int(now_ms)?]).await
}
