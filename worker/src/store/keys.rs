//! API keys. Only the SHA-256 of a key's secret is stored.

use bvs_core::hash::Hash32;
use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::contracts::ContractStatus;
use super::{args, batch, queries, row, rows, Query};
use crate::error::ApiResult;
use crate::ids::{ContractId, KeyId, TenantId, UserId};
use crate::plan::Plan;
use crate::secret::SecretDigest;

row! {
    $ select_keys from "api_keys";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Deserialize)]
    pub struct KeyRow {
        id: KeyId, tenant_id: TenantId, env: Env, name: Option<String>, secret_hash: SecretDigest,
        active: i64, created_at: u64, last_used_at: Option<u64>, deleted_at: Option<u64>,
    }
}
const SELECT_OF_TENANT: &str =
    select_keys!("WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL");
const SELECT_LIST: &str =
    select_keys!("WHERE tenant_id = ?1 AND deleted_at IS NULL ORDER BY created_at, id");
/// Inserts the key only while the tenant holds fewer than `?8` live keys
/// and has created fewer than `?10` since `?9` (the month's start, deleted
/// keys included, so create/delete cycles cannot pass the cap): the counts
/// and the insert are one statement, so concurrent creations never pass
/// the limits together.
const INSERT_KEY_WITHIN: &str =
    "INSERT INTO api_keys (id, tenant_id, env, name, secret_hash, active, created_by, created_at, \
     last_used_at, deleted_at) SELECT ?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, NULL, NULL \
     WHERE (SELECT COUNT(*) FROM api_keys WHERE tenant_id = ?2 AND deleted_at IS NULL) < ?8 \
     AND (SELECT COUNT(*) FROM api_keys WHERE tenant_id = ?2 AND created_at >= ?9) < ?10";
const COUNT_CREATED_SINCE: &str =
    "SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ?1 AND created_at >= ?2";
const TOGGLE_KEY: &str = "UPDATE api_keys SET active = 1 - active \
     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL";
const DELETE_KEY: &str = "UPDATE api_keys SET active = 0, deleted_at = ?3 \
     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL";
/// lastUsedAt is kept to the minute: one write per key per minute, not per
/// request (callers skip the statement when the row is fresh enough).
const TOUCH_KEY: &str = "UPDATE api_keys SET last_used_at = ?2 \
     WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60000)";

/// Everything key authentication needs, in one read: the key, its
/// tenant's plan and the status of the key's environment for that tenant.
const SELECT_AUTH: &str =
    "SELECT k.id, k.tenant_id, k.env, k.secret_hash, k.active, k.last_used_at, \
     k.deleted_at, t.plan, c.id AS contract_id, c.status AS contract_status, c.shard \
     FROM api_keys k JOIN tenants t ON t.id = k.tenant_id \
     LEFT JOIN contracts c ON c.tenant_id = k.tenant_id AND c.env = k.env \
     WHERE k.id = ?1";

row! {
    #[derive(Debug, Deserialize)]
    pub struct AuthRow {
        id: KeyId, tenant_id: TenantId, env: Env, secret_hash: SecretDigest, active: i64,
        last_used_at: Option<u64>, deleted_at: Option<u64>,
        #[serde(deserialize_with = "crate::plan::stored")]
        plan: Plan,
        // The key's environment's contract (`None` without one): emits
        // need no second read for it (issue 16).
        contract_id: Option<ContractId>,
        contract_status: Option<ContractStatus>,
        // The shard of the key's environment (`None` without a contract).
        shard: Option<u32>,
    }
}

queries! {
    /// The key `id` with its tenant's plan and environment status.
    pub fn for_auth(id: &KeyId) -> Option<AuthRow> = first(SELECT_AUTH);
    /// A tenant's key that is not deleted.
    pub fn of_tenant(tenant_id: &TenantId, id: &KeyId) -> Option<KeyRow> = first(SELECT_OF_TENANT; id, tenant_id);
    /// A tenant's keys that are not deleted, oldest first.
    pub fn list(tenant_id: &TenantId) -> Vec<KeyRow> = all(SELECT_LIST);
}

/// The key `id` as [`for_auth`] reads it, and, in the same batch (one
/// round trip), the proof-root index rows of `roots` for the key's shard
/// if the key is active with `secret_hash`
/// (`roots::insert_for_key_statements`).
///
/// # Errors
/// D1 errors.
pub async fn for_auth_indexing(
    db: &D1Database,
    id: &KeyId,
    secret_hash: &SecretDigest,
    roots: &[Hash32],
    now_ms: u64,
) -> ApiResult<Option<AuthRow>> {
    let mut statements = super::roots::insert_for_key_statements(roots, now_ms, id, secret_hash)?;
    let read = statements.len();
    statements.push(Query::new(SELECT_AUTH, args![id]));
    let results = batch(db, statements).await?;
    Ok(rows::<AuthRow>(&results, read)?.into_iter().next())
}

row! {
    pub struct NewKey<'a> {
        id: &'a KeyId, tenant_id: &'a TenantId, env: Env, name: Option<&'a str>,
        secret_hash: &'a SecretDigest, created_by: &'a UserId,
    }
}

/// The limits a new key must fit.
pub struct KeyLimits {
    /// Live keys held at once.
    pub held_max: u64,
    /// Keys created since `since_ms`, deleted ones included.
    pub since_ms: u64,
    pub created_max: u64,
}

queries! {
    /// Inserts the key if it fits `l`; returns whether it did.
    pub fn insert_within(k: &NewKey<'_>, now_ms: u64, l: &KeyLimits) -> bool = changed(
        INSERT_KEY_WITHIN; k.id, k.tenant_id, k.env, k.name, k.secret_hash, k.created_by, now_ms,
        l.held_max, l.since_ms, l.created_max
    );
    /// Keys the tenant created since `since_ms`, deleted ones included.
    pub fn created_since(tenant_id: &TenantId, since_ms: u64) -> u64 = count(COUNT_CREATED_SINCE);
}

queries! {
    /// Flips `active`; returns rows changed (0: not this tenant's, or deleted).
    pub fn toggle(tenant_id: &TenantId, id: &KeyId) -> u64 = run(TOGGLE_KEY; id, tenant_id);
    /// Soft-deletes; returns rows changed (0: not this tenant's, or deleted).
    pub fn delete(tenant_id: &TenantId, id: &KeyId, now_ms: u64) -> u64 = run(DELETE_KEY; id, tenant_id, now_ms);
    pub fn touch(id: &KeyId, now_ms: u64) -> () = exec(TOUCH_KEY);
}

/// How stale lastUsedAt may get before a request writes it again.
pub const LAST_USED_RESOLUTION_MS: u64 = 60_000;
