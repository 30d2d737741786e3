//! The atomic quota check that emits call, against the tenant's plan
//! (`crate::plan`, re-exported here). Figures and reasons: docs/dashboard.md.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Env, Period};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::Claim;
pub use crate::plan::{Account, Plan};
use crate::store;

/// Counts `count` deltas against the tenant's monthly quota for the key's
/// environment, all or nothing. Under an Idempotency-Key claim the count
/// is recorded on the claim in the same batch, and a claim that already
/// counted (its holder crashed before the write) is not counted again.
///
/// # Errors
/// 402 naming the quota and when it resets (the first day of next month,
/// UTC) if the deltas do not fit; internal error on storage failure.
pub async fn consume_claimed(
    app: &App,
    ctx: &Account<'_>,
    count: u64,
    claim: Option<&Claim>,
) -> ApiResult<()> {
    if count == 0 || claim.is_some_and(|c| c.charged >= count) {
        return Ok(());
    }
    let plan = ctx.plan;
    let limit = plan.deltas_per_month(ctx.env);
    #[allow(clippy::cast_possible_wrap)]
    let period = Period::containing(app.now_ms as i64);
    let db = app.control_db()?;
    let mark = claim
        .map(|c| store::idempotency::mark_charged_statement(&db, &c.scope(), count))
        .transpose()?;
    let ok = store::accounts::consume_usage_and(
        &db,
        ctx.tenant_id,
        ctx.env.as_str(),
        &period.to_string(),
        count,
        limit,
        mark,
    )
    .await?;
    if ok {
        return Ok(());
    }
    let used =
        store::accounts::usage(&db, ctx.tenant_id, ctx.env.as_str(), &period.to_string()).await?;
    let resets = format_iso_ms(period.end_ms());
    let env_name = match ctx.env {
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
    Err(ApiError::PaymentRequired(message))
}
