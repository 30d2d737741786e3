//! API keys. Only the SHA-256 of a key's secret is stored.

use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{all, args, first, run};
use crate::error::ApiResult;
use crate::plan::Plan;

macro_rules! select_keys {
    ($tail:literal) => {
        concat!(
            "SELECT id, tenant_id, env, name, secret_hash, active, created_at, last_used_at, \
             deleted_at FROM api_keys ",
            $tail
        )
    };
}
const SELECT_OF_TENANT: &str =
    select_keys!("WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL");
const SELECT_LIST: &str =
    select_keys!("WHERE tenant_id = ?1 AND deleted_at IS NULL ORDER BY created_at, id");
/// Inserts the key only while the tenant holds fewer than `?8` live keys:
/// the count and the insert are one statement, so concurrent creations
/// never pass the limit together.
const INSERT_KEY_WITHIN: &str =
    "INSERT INTO api_keys (id, tenant_id, env, name, secret_hash, active, created_by, created_at, \
     last_used_at, deleted_at) SELECT ?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, NULL, NULL \
     WHERE (SELECT COUNT(*) FROM api_keys WHERE tenant_id = ?2 AND deleted_at IS NULL) < ?8";
const TOGGLE_KEY: &str = "UPDATE api_keys SET active = 1 - active \
     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL";
const DELETE_KEY: &str = "UPDATE api_keys SET active = 0, deleted_at = ?3 \
     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL";
/// lastUsedAt is kept to the minute: one write per key per minute, not per
/// request (callers skip the statement when the row is fresh enough).
const TOUCH_KEY: &str = "UPDATE api_keys SET last_used_at = ?2 \
     WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60000)";

#[expect(dead_code, reason = "a row mirrors its table")]
#[derive(Debug, Deserialize)]
pub struct KeyRow {
    pub id: String,
    pub tenant_id: String,
    pub env: Env,
    pub name: Option<String>,
    pub secret_hash: String,
    pub active: i64,
    pub created_at: u64,
    pub last_used_at: Option<u64>,
    pub deleted_at: Option<u64>,
}

/// Everything key authentication needs, in one read: the key, its
/// tenant's plan and the status of the key's environment for that tenant.
const SELECT_AUTH: &str =
    "SELECT k.id, k.tenant_id, k.env, k.secret_hash, k.active, k.last_used_at, \
     k.deleted_at, t.plan, c.status AS contract_status, c.shard \
     FROM api_keys k JOIN tenants t ON t.id = k.tenant_id \
     LEFT JOIN contracts c ON c.tenant_id = k.tenant_id AND c.env = k.env \
     WHERE k.id = ?1";

#[derive(Debug, Deserialize)]
pub struct AuthRow {
    pub id: String,
    pub tenant_id: String,
    pub env: Env,
    pub secret_hash: String,
    pub active: i64,
    pub last_used_at: Option<u64>,
    pub deleted_at: Option<u64>,
    #[serde(deserialize_with = "crate::plan::stored")]
    pub plan: Plan,
    pub contract_status: Option<String>,
    /// The shard of the key's environment (`None` without a contract).
    pub shard: Option<u32>,
}

/// The key `id` with its tenant's plan and environment status.
pub async fn for_auth(db: &D1Database, id: &str) -> ApiResult<Option<AuthRow>> {
    first(db, SELECT_AUTH, &args![id]).await
}

pub struct NewKey<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub env: &'a str,
    pub name: Option<&'a str>,
    pub secret_hash: &'a str,
    pub created_by: &'a str,
}

/// Inserts the key if the tenant holds fewer than `max` live keys; returns
/// whether it did.
pub async fn insert_within(
    db: &D1Database,
    k: &NewKey<'_>,
    now_ms: u64,
    max: u64,
) -> ApiResult<bool> {
    let args = args![
        k.id,
        k.tenant_id,
        k.env,
        k.name,
        k.secret_hash,
        k.created_by,
        now_ms,
        max
    ];
    Ok(run(db, INSERT_KEY_WITHIN, &args).await? > 0)
}

/// A tenant's key that is not deleted.
pub async fn of_tenant(db: &D1Database, tenant_id: &str, id: &str) -> ApiResult<Option<KeyRow>> {
    first(db, SELECT_OF_TENANT, &args![id, tenant_id]).await
}

/// A tenant's keys that are not deleted, oldest first.
pub async fn list(db: &D1Database, tenant_id: &str) -> ApiResult<Vec<KeyRow>> {
    all(db, SELECT_LIST, &args![tenant_id]).await
}

/// Flips `active`; returns rows changed (0: not this tenant's, or deleted).
pub async fn toggle(db: &D1Database, tenant_id: &str, id: &str) -> ApiResult<u64> {
    run(db, TOGGLE_KEY, &args![id, tenant_id]).await
}

/// Soft-deletes; returns rows changed (0: not this tenant's, or deleted).
pub async fn delete(db: &D1Database, tenant_id: &str, id: &str, now_ms: u64) -> ApiResult<u64> {
    run(db, DELETE_KEY, &args![id, tenant_id, now_ms]).await
}

/// How stale lastUsedAt may get before a request writes it again.
pub const LAST_USED_RESOLUTION_MS: u64 = 60_000;

pub async fn touch(db: &D1Database, id: &str, now_ms: u64) -> ApiResult<()> {
    run(db, TOUCH_KEY, &args![id, now_ms]).await?;
    Ok(())
}
