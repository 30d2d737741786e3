//! The per-plan limits of ledger writes (facts and checkpoints per month,
//! bytes stored per environment), raised inside each write's own D1 batch
//! (`store::meters`), and the answer when a write does not fit.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Env, Period};

use crate::error::{ApiError, ErrorCode};
use crate::ids::TenantId;
use crate::plan::Plan;
use crate::store::meters::{Meter, Raise};

/// The calendar month (UTC) `now_ms` falls in, as a monthly meter's period.
pub fn month(now_ms: u64) -> Period {
    Period::containing(i64::try_from(now_ms).unwrap_or(i64::MAX))
}

/// A raise of the tenant's monthly `meter` by one.
pub fn monthly<'a>(
    tenant_id: &'a TenantId,
    meter: Meter,
    period: &'a str,
    plan: Plan,
) -> Raise<'a> {
    let cap = match meter {
        Meter::Facts => plan.facts_per_month(),
        Meter::Checkpoints => plan.checkpoints_per_month(),
        Meter::Bytes => plan.storage_bytes(),
        Meter::Invitations => plan.invitations_per_month(),
        // The delta quota depends on the environment: `quota::raise`.
        Meter::Deltas => plan.deltas_per_month(Env::Sandbox),
        Meter::RequestLog => plan.request_log_bytes_per_day(),
        // Not monthly: `agreement` raises them with their own caps.
        Meter::InvitationUses | Meter::CounterpartyKeys | Meter::Statements => 1,
        Meter::Backlog => plan.backlog_max(),
    };
    Raise {
        tenant_id,
        meter,
        period,
        add: 1,
        cap,
    }
}

/// A raise of the tenant's stored bytes by `bytes`.
pub fn bytes(tenant_id: &TenantId, bytes: u64, plan: Plan) -> Raise<'_> {
    Raise {
        tenant_id,
        meter: Meter::Bytes,
        period: "",
        add: bytes,
        cap: plan.storage_bytes(),
    }
}

/// A raise of the tenant's backlog (deltas emitted, not yet verified) by
/// `count`, capped at `cap` ([`backlog_cap`]; issue 27).
pub fn backlog(tenant_id: &TenantId, count: u64, cap: u64) -> Raise<'_> {
    Raise {
        tenant_id,
        meter: Meter::Backlog,
        period: "",
        add: count,
        cap,
    }
}

/// The bound on a tenant's backlog: its plan's, or, in DEV_MODE only, the
/// var `BACKLOG_MAX` (the backpressure test's lower bound).
pub fn backlog_cap(app: &crate::app::App, plan: Plan) -> u64 {
    if app.dev_mode() {
        if let Some(cap) = app.var("BACKLOG_MAX").and_then(|v| v.parse().ok()) {
            return cap;
        }
    }
    plan.backlog_max()
}

/// A shard verifies at least this many deltas a second (bench/README.md,
/// "throughput"): how `Retry-After` of a backlog's 429 is estimated.
pub const DRAIN_PER_SEC_FLOOR: u64 = 1_000;

/// The 429 of an emit of `count` deltas that would take the tenant's
/// backlog (now `used`) past its plan's bound: nothing was written.
/// `Retry-After` is the time the shard needs to verify the excess at
/// [`DRAIN_PER_SEC_FLOOR`], 1 to 60 seconds.
pub fn backlogged(plan: Plan, env: Env, cap: u64, (used, count): (u64, u64)) -> ApiError {
    let excess = (used + count).saturating_sub(cap);
    let retry_after_secs = (excess.div_ceil(DRAIN_PER_SEC_FLOOR) + 1).clamp(1, 60);
    let env_name = match env {
        Env::Sandbox => "Sandbox",
        Env::Production => "Production",
    };
    ApiError::Backlogged {
        retry_after_secs,
        message: format!(
            "Verification backlog: the {} plan allows {cap} deltas emitted and not yet verified \
             in {env_name}; {used} are queued and {count} more were sent. Nothing was written; \
             retry after {retry_after_secs} second(s)",
            plan.label()
        ),
    }
}

/// The answer to a write that does not fit `meter`: 402
/// `plan_limit_exceeded` for a monthly count, 402 `storage_limit_reached`
/// for the storage ceiling. Nothing was written.
pub fn over(meter: Meter, plan: Plan, env: Env, now_ms: u64) -> ApiError {
    let env_name = match env {
        Env::Sandbox => "Sandbox",
        Env::Production => "Production",
    };
    let resets = format_iso_ms(month(now_ms).end_ms());
    match meter {
        Meter::Facts | Meter::Checkpoints | Meter::Invitations => {
            let (what, cap) = match meter {
                Meter::Facts => ("facts", plan.facts_per_month()),
                Meter::Checkpoints => ("checkpoints", plan.checkpoints_per_month()),
                _ => ("invitations", plan.invitations_per_month()),
            };
            ApiError::coded(
                ErrorCode::PlanLimitExceeded,
                format!(
                    "Plan limit exceeded: the {} plan allows {cap} {what} per month in {env_name}; \
                     nothing was written. The count resets at {resets}",
                    plan.label()
                ),
            )
        }
        Meter::Deltas => ApiError::coded(
            ErrorCode::PlanLimitExceeded,
            format!(
                "Plan limit exceeded: the {} plan allows {} verified deltas per month in \
                 {env_name}; nothing was written. The quota resets at {resets}",
                plan.label(),
                plan.deltas_per_month(env)
            ),
        ),
        // The request log refuses nothing: a full day is not logged.
        Meter::RequestLog => ApiError::internal("the request log's meter answers no request"),
        // Raised by the agreement's writes, which answer them themselves.
        Meter::InvitationUses | Meter::CounterpartyKeys | Meter::Statements => {
            ApiError::internal(format!("{} refused outside the agreement", meter.as_str()))
        }
        // The emit reads what is used for its answer (`submit`).
        Meter::Backlog => backlogged(plan, env, plan.backlog_max(), (plan.backlog_max(), 0)),
        Meter::Bytes => ApiError::coded(
            ErrorCode::StorageLimitReached,
            format!(
                "Storage limit reached: the {} plan stores at most {} bytes of fact and delta \
                 content per tenant in {env_name} (ids, hashes and content stay for the proofs); \
                 nothing was written. Upgrade for a higher ceiling",
                plan.label(),
                plan.storage_bytes()
            ),
        ),
    }
}
