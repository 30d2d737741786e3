//! The monthly delta quota, against the tenant's plan (`crate::plan`,
//! re-exported here). Figures and reasons: docs/dashboard.md.
//!
//! The counter lives on the tenant's ledger shard, in `meters` (meter
//! `deltas`, period `YYYY-MM`), and is raised inside the emit's own write
//! batch (`store::emit`): the table's `CHECK (used <= cap)` refuses a raise
//! past the quota, and D1 rolls the whole batch back, so an emit over its
//! quota, or over the storage ceiling, writes nothing and counts nothing,
//! and concurrent emits can never both take the last unit.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Env, Period};
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
pub use crate::plan::{Account, Plan};
use crate::store::meters::{self, Meter, Raise};

/// The calendar month (UTC) `now_ms` falls in: the quota's period.
pub fn period(now_ms: u64) -> Period {
    Period::containing(i64::try_from(now_ms).unwrap_or(i64::MAX))
}

/// The raise of the account's monthly delta count by `count`, capped at
/// the plan's quota for the key's environment. `period` is
/// [`period`]`(now).to_string()`.
pub fn raise<'a>(account: &Account<'a>, period: &'a str, count: u64) -> Raise<'a> {
    Raise {
        tenant_id: account.tenant_id,
        meter: Meter::Deltas,
        period,
        add: count,
        cap: account.plan.deltas_per_month(account.env),
    }
}

/// Deltas the tenant emitted this month in `ledger`'s environment (the
/// tenant's shard of it): one read.
///
/// # Errors
/// D1 errors.
pub async fn used(ledger: &D1Database, tenant_id: &TenantId, now_ms: u64) -> ApiResult<u64> {
    meters::used_of(
        ledger,
        tenant_id,
        Meter::Deltas,
        &period(now_ms).to_string(),
    )
    .await
}

/// The 402 for `count` deltas that do not fit: it names the quota, what is
/// used and when it resets (the first day of next month, UTC).
///
/// # Errors
/// D1 errors reading what is used.
pub async fn exceeded(
    ledger: &D1Database,
    account: &Account<'_>,
    count: u64,
    now_ms: u64,
) -> ApiResult<ApiError> {
    let plan = account.plan;
    let limit = plan.deltas_per_month(account.env);
    let period = period(now_ms);
    let used = used(ledger, account.tenant_id, now_ms).await?;
    let resets = format_iso_ms(period.end_ms());
    let env_name = match account.env {
        Env::Sandbox => "Sandbox",
        Env::Production => "Production",
    };
    let message = if limit == 0 {
        format!(
            "Plan limit exceeded: the {} plan includes no {env_name} deltas; upgrade to Pilot or above",
            plan.label()
        )
    } else {
        format!(
            "Plan limit exceeded: the {} plan allows {limit} verified deltas per month in {env_name}; \
             {used} used this month ({period}), {count} more requested. The quota resets at {resets}",
            plan.label()
        )
    };
    Ok(ApiError::PaymentRequired(message))
}
