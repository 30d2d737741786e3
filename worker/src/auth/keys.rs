//! API keys as the dashboard manages them: create (within the plan's
//! limit, for an active environment), list, toggle, delete. Only the
//! SHA-256 of a key's secret is stored.

use bvs_core::types::{ApiKey, Env, Period};

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids;
use crate::ids::{KeyId, TenantId, UserId};
use crate::owned;
use crate::secret::SecretDigest;
pub use crate::store::keys::KeyRow;
use crate::store::keys::{self as store, NewKey};

/// Characters of a key's `{id}` part (base62).
pub const KEY_ID_CHARS: usize = 16;
/// Characters of a key's `{secret}` part (base62, about 190 bits).
pub const KEY_SECRET_CHARS: usize = 32;

/// Who creates a key, for which environment, under which name.
pub struct NewKeyRequest<'a> {
    pub tenant_id: &'a TenantId,
    pub user_id: &'a UserId,
    pub env: Env,
    pub name: Option<&'a str>,
}

/// 403 unless the tenant's environment `env` is active.
async fn ensure_provisioned(app: &App, tenant_id: &TenantId, env: Env) -> ApiResult<()> {
    let contract = super::contracts::for_env(app, tenant_id, env).await?;
    if contract.map(|c| c.status) != Some(super::contracts::ContractStatus::Active) {
        return Err(ApiError::coded(ErrorCode::EnvironmentNotProvisioned, format!(
            "Environment not provisioned: {} keys need an active {} environment; provision {} first",
            env.key_prefix(),
            super::env_label(env),
            env.contract_name()
        )));
    }
    Ok(())
}

/// Creates a key: its environment must be active for the tenant, and the
/// tenant may hold at most its plan's number of keys (counted inside the
/// insert). Returns the stored row and the full key (shown once).
///
/// # Errors
/// 403 when the environment is not provisioned; 402 above the plan's key
/// limit; D1 errors.
pub async fn create(app: &App, k: &NewKeyRequest<'_>) -> ApiResult<(KeyRow, ApiKey)> {
    let env = k.env;
    ensure_provisioned(app, k.tenant_id, env).await?;
    let plan = super::tenant_plan(app, k.tenant_id).await?;
    let key = ApiKey::new(
        env,
        &ids::random_token(KEY_ID_CHARS)?,
        &ids::random_token(KEY_SECRET_CHARS)?,
    )
    .map_err(|e| ApiError::internal(format!("generated key is invalid: {e}")))?;
    let key_id = KeyId::from_text(key.id());
    // Keys a tenant may hold at once, per plan (deleted ones do not count),
    // and create per month (deleted ones count); counted inside the insert.
    let max = plan.api_keys_max();
    let month_start = Period::containing(i64::try_from(app.now_ms).unwrap_or(i64::MAX)).start_ms();
    let limits = store::KeyLimits {
        held_max: max,
        since_ms: u64::try_from(month_start).unwrap_or(0),
        created_max: plan.api_key_creations_per_month(),
    };
    let db = app.control_db()?;
    let inserted = store::insert_within(
        &db,
        &NewKey {
            id: &key_id,
            tenant_id: k.tenant_id,
            env,
            name: k.name,
            secret_hash: &SecretDigest::of(key.secret()),
            created_by: k.user_id,
        },
        app.now_ms,
        &limits,
    )
    .await?;
    if !inserted
        && store::created_since(&db, k.tenant_id, limits.since_ms).await? >= limits.created_max
    {
        return Err(ApiError::coded(
            ErrorCode::PlanLimitExceeded,
            format!(
                "Plan limit exceeded: the {} plan creates at most {} API keys per month (deleted \
                 ones count); the count resets at {}",
                plan.label(),
                limits.created_max,
                bvs_core::time::format_iso_ms(
                    Period::containing(i64::try_from(app.now_ms).unwrap_or(i64::MAX)).end_ms()
                )
            ),
        ));
    }
    if !inserted {
        return Err(ApiError::coded(
            ErrorCode::PlanLimitExceeded,
            format!(
                "Plan limit exceeded: the {} plan holds at most {max} API keys; delete one first, \
                 or upgrade",
                plan.label()
            ),
        ));
    }
    let row = store::of_tenant(&db, k.tenant_id, &key_id)
        .await?
        .ok_or_else(|| ApiError::internal("created key not found"))?;
    Ok((row, key))
}

/// The tenant's live keys, oldest first.
///
/// # Errors
/// D1 errors.
pub async fn list(app: &App, tenant_id: &TenantId) -> ApiResult<Vec<KeyRow>> {
    store::list(&app.control_db()?, tenant_id).await
}

fn not_found(id: &KeyId) -> ApiError {
    ApiError::NotFound(format!("No API key {id}"))
}

/// Enables a disabled key or disables an enabled one; returns it as
/// stored.
///
/// # Errors
/// 404 for an unknown or deleted key; D1 errors.
pub async fn toggle(app: &App, tenant_id: &TenantId, id: &KeyId) -> ApiResult<KeyRow> {
    let db = app.control_db()?;
    owned::toggled(
        store::toggle(&db, tenant_id, id),
        store::of_tenant(&db, tenant_id, id),
        || not_found(id),
    )
    .await
}

/// # Errors
/// 404 for an unknown or deleted key; D1 errors.
pub async fn delete(app: &App, tenant_id: &TenantId, id: &KeyId) -> ApiResult<()> {
    let db = app.control_db()?;
    owned::deleted(store::delete(&db, tenant_id, id, app.now_ms), || {
        not_found(id)
    })
    .await
}
