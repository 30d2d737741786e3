//! A tenant's settings and usage, as the dashboard and operator routes
//! read and change them: plan, retention window, this month's usage.

use bvs_core::types::{Env, Period, RetentionDays};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::plan::Plan;
use crate::store::accounts::{self as store, TenantRow};
use crate::store::meters::{self, Meter};

/// The tenant of a session.
///
/// # Errors
/// D1 errors; a tenant that vanished under its session is an internal
/// error.
pub async fn of_session(app: &App, tenant_id: &TenantId) -> ApiResult<TenantRow> {
    store::tenant(&app.control_db()?, tenant_id)
        .await?
        .ok_or_else(|| ApiError::internal("session of a missing tenant"))
}

/// Moves a tenant to `plan`.
///
/// # Errors
/// 404 for an unknown tenant; D1 errors.
pub async fn set_plan(app: &App, tenant_id: &TenantId, plan: Plan) -> ApiResult<()> {
    let changed =
        store::set_tenant_plan(&app.control_db()?, tenant_id, plan.as_str(), app.now_ms).await?;
    if changed == 0 {
        return Err(ApiError::NotFound(format!("No tenant {tenant_id}")));
    }
    crate::request_log::forget_tenant(tenant_id);
    Ok(())
}

/// Sets the tenant's retention window and returns the tenant as stored.
///
/// # Errors
/// D1 errors.
pub async fn set_retention(
    app: &App,
    tenant_id: &TenantId,
    days: RetentionDays,
) -> ApiResult<TenantRow> {
    store::set_tenant_retention(&app.control_db()?, tenant_id, days.days(), app.now_ms).await?;
    crate::request_log::forget_tenant(tenant_id);
    of_session(app, tenant_id).await
}

/// A tenant's deltas in one environment: counted against the month's
/// quota, and emitted but not yet verified.
#[derive(Debug, Default, Clone, Copy)]
pub struct Usage {
    pub used: u64,
    pub backlog: u64,
}

/// Verified deltas counted against the tenant's quota in `env` during
/// `period`: the monthly counter on the environment's ledger shard, next
/// to the writes that raise it (issue 16), and the tenant's deltas emitted
/// and not yet verified there (the backlog meter, issue 27): the
/// contract's placement, then two reads of that shard (0 without a
/// contract).
///
/// # Errors
/// D1 errors.
pub async fn usage(app: &App, tenant_id: &TenantId, env: Env, period: Period) -> ApiResult<Usage> {
    let placed = crate::store::contracts::for_env(&app.control_db()?, tenant_id, env).await?;
    let Some(contract) = placed else {
        return Ok(Usage::default());
    };
    let ledger = crate::ledger::db(app, crate::ledger::LogId::new(env, contract.shard))?;
    let used = meters::used_of(&ledger, tenant_id, Meter::Deltas, &period.to_string()).await?;
    let backlog = meters::used_of(&ledger, tenant_id, Meter::Backlog, "").await?;
    Ok(Usage { used, backlog })
}
