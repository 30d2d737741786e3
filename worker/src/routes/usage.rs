//! `GET /dashboard/usage`: this month's verified deltas against the plan's
//! quota, and the deltas awaiting verification against the plan's bound,
//! per environment.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Env, Period};
use serde::Serialize;

use crate::app::App;
use crate::auth::Session;
use crate::error::ApiResult;
use crate::{http, tenant};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EnvUsage {
    environment: &'static str,
    plan: &'static str,
    /// Deltas per month; `null` would mean unlimited.
    quota: Option<u64>,
    used: u64,
    remaining: Option<u64>,
    resets_at: String,
    /// Deltas emitted and not yet verified (issue 27), and the plan's
    /// bound on them: past it, emits answer 429 `verification_backlog`.
    backlog: u64,
    backlog_max: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    plan: &'static str,
    period: String,
    resets_at: String,
    environments: Vec<EnvUsage>,
}

pub async fn get(app: &App, session: Session) -> ApiResult<worker::Response> {
    let tenant_id = session.tenant_id().clone();
    let plan = tenant::of_session(app, &tenant_id).await?.plan;
    #[allow(clippy::cast_possible_wrap)]
    let period = Period::containing(app.now_ms as i64);
    let resets_at = format_iso_ms(period.end_ms());
    let mut environments = Vec::new();
    for env in [Env::Sandbox, Env::Production] {
        let tenant::Usage { used, backlog } = tenant::usage(app, &tenant_id, env, period).await?;
        let quota = Some(plan.deltas_per_month(env));
        environments.push(EnvUsage {
            environment: env.as_str(),
            plan: plan.as_str(),
            quota,
            used,
            remaining: quota.map(|q| q.saturating_sub(used)),
            resets_at: resets_at.clone(),
            backlog,
            backlog_max: crate::meter::backlog_cap(app, plan),
        });
    }
    http::dashboard(
        200,
        &Usage {
            plan: plan.as_str(),
            period: period.to_string(),
            resets_at,
            environments,
        },
        None,
    )
}
