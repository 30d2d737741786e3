//! What an API key's row allows, decided in one place once the row is
//! read (`super::authenticate`): the secret, the key's usability, its
//! context and the contract a balance write targets. No I/O here.

use bvs_core::types::{ApiKey, Env};

use super::{env_label, Contract, KeyContext, INVALID_KEY};
use crate::app::KeyCaller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::TenantId;
use crate::plan::Plan;
use crate::secret::SecretDigest;
use crate::store::contracts::ContractStatus;
use crate::store::keys::{AuthRow, LAST_USED_RESOLUTION_MS};

/// A key whose secret checked out: whose it is (for the request log,
/// refusals included) and whether it may be used.
pub struct Admitted {
    pub tenant_id: TenantId,
    pub caller: KeyCaller,
    pub usable: ApiResult<Usable>,
}

/// A key that may be used: its context, the rate its requests spend at,
/// whether its `lastUsedAt` is stale, and the contract `X-Credit-Pool-Id`
/// names (its error is raised where the route raises it).
pub struct Usable {
    pub ctx: KeyContext,
    pub plan: Plan,
    pub stale: bool,
    pub contract: ApiResult<Contract>,
}

/// The key's row, checked: 401 unless the key exists and its secret (its
/// digest `presented`, compared in constant time) and environment are the
/// row's, before anything about the key is revealed; then whether it may
/// be used ([`refuse_unusable`]) and, at `now_ms`, whether its
/// `lastUsedAt` is a minute (`LAST_USED_RESOLUTION_MS`) or more old.
///
/// # Errors
/// 401 for an unknown key or a wrong secret.
pub fn admit(
    row: Option<AuthRow>,
    key: &ApiKey,
    presented: &SecretDigest,
    now_ms: u64,
    pool_id: Option<&str>,
) -> ApiResult<Admitted> {
    let row = row
        .filter(|row| presented.ct_eq(&row.secret_hash) && row.env == key.env())
        .ok_or_else(|| ApiError::Unauthorized(INVALID_KEY.into()))?;
    let env = key.env();
    let caller = KeyCaller {
        key_id: row.id.clone(),
        env,
        shard: row.shard.unwrap_or(0),
        plan: row.plan.as_str(),
    };
    let tenant_id = row.tenant_id.clone();
    let usable = refuse_unusable(&row, env).and_then(|()| {
        // `refuse_unusable` admits only an active contract, which the
        // key's read found with its id.
        let contract_id = row
            .contract_id
            .ok_or_else(|| ApiError::internal("an active contract read without its id"))?;
        let stale = row
            .last_used_at
            .is_none_or(|t| now_ms.saturating_sub(t) >= LAST_USED_RESOLUTION_MS);
        let ctx = KeyContext {
            tenant_id: row.tenant_id,
            env,
            key_id: row.id,
            plan: row.plan,
            shard: row.shard.unwrap_or(0),
            contract_id,
        };
        Ok(Usable {
            contract: contract(&ctx, pool_id),
            plan: row.plan,
            stale,
            ctx,
        })
    });
    Ok(Admitted {
        tenant_id,
        caller,
        usable,
    })
}

/// Refuses a key whose secret checked out but that may not be used: deleted,
/// disabled, its environment not active, or Production on a plan without it.
fn refuse_unusable(row: &AuthRow, env: Env) -> ApiResult<()> {
    if row.deleted_at.is_some() {
        return Err(ApiError::coded(
            ErrorCode::ApiKeyDeleted,
            "API key deleted: create a new key in the dashboard",
        ));
    }
    if row.active == 0 {
        return Err(ApiError::coded(
            ErrorCode::ApiKeyDisabled,
            "API key disabled: enable it again with POST /dashboard/api-keys/:id/toggle or use another key",
        ));
    }
    if row.contract_status != Some(ContractStatus::Active) {
        return Err(ApiError::coded(
            ErrorCode::EnvironmentNotProvisioned,
            format!(
            "Environment not provisioned: {} ({}) is not active for this tenant; provision it with \
             POST /dashboard/contracts/provision",
            env_label(env),
            env.contract_name()
        ),
        ));
    }
    if env == Env::Production && !row.plan.allows_production() {
        // A tenant moved back to Free keeps its production contract and
        // keys, but they stop working until the plan is paid again.
        return Err(ApiError::PaymentRequired(format!(
            "Plan limit exceeded: no active subscription for Production; the {} plan is Sandbox \
             only, Production needs Pilot or above",
            row.plan.label()
        )));
    }
    Ok(())
}

/// The contract a balance write targets, from what authentication read
/// (no round trip): `X-Credit-Pool-Id` must name the tenant's contract for
/// the key's environment (a tenant has one per environment), which is
/// active, or the header is absent.
///
/// # Errors
/// 404 for any other contract id (unknown, another tenant's, or of the
/// other environment).
fn contract(ctx: &KeyContext, pool_id: Option<&str>) -> ApiResult<Contract> {
    if let Some(id) = pool_id.map(str::trim).filter(|p| !p.is_empty()) {
        if id != ctx.contract_id.as_str() {
            return Err(ApiError::NotFound(format!(
                "No contract {id} in {} for this API key (X-Credit-Pool-Id)",
                env_label(ctx.env)
            )));
        }
    }
    Ok(Contract {
        id: ctx.contract_id.clone(),
        tenant_id: ctx.tenant_id.clone(),
        env: ctx.env,
        status: ContractStatus::Active,
    })
}
