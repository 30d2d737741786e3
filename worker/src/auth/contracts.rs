//! A tenant's environments (the spec's contracts) as the dashboard
//! provisions and lists them.

use bvs_core::types::Env;

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ContractId, TenantId};
use crate::ledger;
use crate::store::contracts as store;
pub use crate::store::contracts::{ContractRow, ContractStatus};

/// Provisions `env` for the tenant: checks the plan, places the
/// environment on a shard (a contract provisioned before keeps its
/// shard), wins the `provisioning` transition and sets up the shard's log
/// (empty tree and first signed tree head). The contract ends `active`,
/// or `error` when the setup failed (logged, not returned: the status
/// route shows it).
///
/// # Errors
/// 402 when the plan does not include Production; 409 while the
/// environment is being provisioned; D1 errors.
pub async fn provision(app: &App, tenant_id: &TenantId, env: Env) -> ApiResult<()> {
    let db = app.control_db()?;
    let plan = crate::store::accounts::tenant_plan(&app.control_db()?, tenant_id).await?;
    if env == Env::Production && !plan.allows_production() {
        return Err(ApiError::coded(
            ErrorCode::ProductionRequiresPlan,
            format!(
                "Production (mainnet) needs the Pilot plan or above; this tenant is on the {} plan",
                plan.label()
            ),
        ));
    }
    let new_id = ContractId::new()?;
    let shard = ledger::shard::place(app, env).await?;
    let won = store::begin_provisioning(&db, &new_id, tenant_id, env, shard, app.now_ms).await?;
    if won == 0 {
        return Err(ApiError::Conflict(format!(
            "{} ({}) is already being provisioned",
            super::env_label(env),
            env.contract_name()
        )));
    }
    // A contract provisioned before keeps its shard.
    let placed = store::for_env(&db, tenant_id, env)
        .await?
        .map_or(shard, |c| c.shard);
    let (status, error) = match ledger::ensure_log(app, ledger::LogId::new(env, placed)).await {
        Ok(_) => (ContractStatus::Active, None),
        Err(e) => {
            let cause = match &e {
                ApiError::Internal(c) => c.clone(),
                other => other.body().message,
            };
            worker::console_error!(
                "provisioning {} for {tenant_id} failed: {cause}",
                env.as_str()
            );
            (
                ContractStatus::Error,
                Some("setup of the environment failed; contact support"),
            )
        }
    };
    store::finish_provisioning(&db, tenant_id, env, status, error, app.now_ms).await?;
    Ok(())
}

/// The tenant's contracts, oldest first.
///
/// # Errors
/// D1 errors.
pub async fn of_tenant(app: &App, tenant_id: &TenantId) -> ApiResult<Vec<ContractRow>> {
    store::of_tenant(&app.control_db()?, tenant_id).await
}

/// The tenant's contract of `env`, if any.
///
/// # Errors
/// D1 errors.
pub async fn for_env(app: &App, tenant_id: &TenantId, env: Env) -> ApiResult<Option<ContractRow>> {
    store::for_env(&app.control_db()?, tenant_id, env).await
}
