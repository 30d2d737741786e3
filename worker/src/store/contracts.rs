//! Environments (contracts): one row per tenant and environment.

use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{args, queries, row, run, Query};
use crate::error::ApiResult;
use crate::ids::{ContractId, TenantId};

super::text_enum! {
    /// A contract's state, as its `status` column holds it: only an `active`
    /// environment takes API keys and balance requests. `provisioning` is
    /// written by `BEGIN_PROVISIONING`'s SQL; `not_provisioned` is what the
    /// status route shows for an environment without a row.
    pub enum ContractStatus {
        NotProvisioned = "not_provisioned",
        Provisioning = "provisioning",
        Active = "active",
        Error = "error",
    }
}

row! {
    $ select_contracts from "contracts";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct ContractRow {
        id: ContractId, tenant_id: TenantId, env: Env, status: ContractStatus,
        provisioned_at: Option<u64>, error: Option<String>,
        // The ledger shard the environment is placed on.
        shard: u32,
    }
}

const SELECT_OF_TENANT: &str = select_contracts!("WHERE tenant_id = ?1 ORDER BY created_at, env");
const SELECT_FOR_ENV: &str = select_contracts!("WHERE tenant_id = ?1 AND env = ?2");
const INSERT_CONTRACT: &str =
    "INSERT INTO contracts (id, tenant_id, env, status, provisioned_at, error, created_at, \
     updated_at, shard) VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?6, ?7)";
/// A provisioning that has not finished after this long was cut short (an
/// isolate died mid-setup); it may be started again.
pub const PROVISIONING_STALE_MS: u64 = 5 * 60 * 1000;

/// Moves a contract to `provisioning` unless it is already there (and not
/// stale); creates it if missing, on shard ?6 (an existing contract keeps
/// its shard). Returns 1 row changed when the caller won the transition.
const BEGIN_PROVISIONING: &str =
    "INSERT INTO contracts (id, tenant_id, env, status, provisioned_at, error, created_at, \
     updated_at, shard) VALUES (?1, ?2, ?3, 'provisioning', NULL, NULL, ?4, ?4, ?6) \
     ON CONFLICT (tenant_id, env) DO UPDATE SET status = 'provisioning', error = NULL, \
     updated_at = excluded.updated_at \
     WHERE contracts.status <> 'provisioning' OR contracts.updated_at < ?5";
const FINISH_PROVISIONING: &str = "UPDATE contracts SET status = ?3, error = ?4, \
     provisioned_at = CASE WHEN ?3 = 'active' THEN ?5 ELSE provisioned_at END, updated_at = ?5 \
     WHERE tenant_id = ?1 AND env = ?2 AND status = 'provisioning'";

/// How many tenants each shard of an environment holds (shards with none
/// are absent).
const SHARD_COUNTS: &str =
    "SELECT shard, COUNT(*) AS n FROM contracts WHERE env = ?1 GROUP BY shard";

row! {
    #[derive(Debug, Deserialize)]
    pub struct ShardCountRow { shard: u32, n: u64 }
}

queries! {
    fn shard_count_rows(env: Env) -> Vec<ShardCountRow> = all(SHARD_COUNTS);
}

/// `(shard, tenants)` of `env`, for placement.
pub async fn shard_counts(db: &D1Database, env: Env) -> ApiResult<Vec<(u32, u64)>> {
    let rows = shard_count_rows(db, env).await?;
    Ok(rows.into_iter().map(|r| (r.shard, r.n)).collect())
}

/// A contract created already `active` (the sandbox at registration).
pub fn insert_active<'a>(
    id: &'a ContractId,
    tenant_id: &'a TenantId,
    env: Env,
    shard: u32,
    now_ms: u64,
) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        INSERT_CONTRACT,
        args![
            id,
            tenant_id,
            env,
            ContractStatus::Active,
            now_ms,
            now_ms,
            shard
        ],
    ))
}

pub async fn begin_provisioning(
    db: &D1Database,
    new_id: &ContractId,
    tenant_id: &TenantId,
    env: Env,
    shard: u32,
    now_ms: u64,
) -> ApiResult<u64> {
    run(
        db,
        Query::new(
            BEGIN_PROVISIONING,
            args![
                new_id,
                tenant_id,
                env,
                now_ms,
                now_ms.saturating_sub(PROVISIONING_STALE_MS),
                shard
            ],
        ),
    )
    .await
}

queries! {
    /// `status` is `active` or `error` (with a short reason).
    pub fn finish_provisioning(
        tenant_id: &TenantId, env: Env, status: ContractStatus, error: Option<&str>, now_ms: u64,
    ) -> u64 = run(FINISH_PROVISIONING);
    pub fn of_tenant(tenant_id: &TenantId) -> Vec<ContractRow> = all(SELECT_OF_TENANT);
    pub fn for_env(tenant_id: &TenantId, env: Env) -> Option<ContractRow> = first(SELECT_FOR_ENV);
}
