//! `GET /dashboard/usage`: this month's verified deltas against the plan's
//! quota, per environment, read from the monthly counter on the
//! environment's ledger shard (`quota::used`).

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Env, Period};
use serde::Serialize;
use worker::Request;

use crate::app::App;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::http;
use crate::quota;
use crate::store;

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
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    plan: &'static str,
    period: String,
    resets_at: String,
    environments: Vec<EnvUsage>,
}

pub async fn get(app: &App, req: Request) -> ApiResult<worker::Response> {
    let session = auth::session(app, &req).await?;
    let db = app.control_db()?;
    let tenant_id = session.tenant_id().to_string();
    let plan = store::accounts::tenant(&db, &tenant_id)
        .await?
        .ok_or_else(|| ApiError::internal("session of a missing tenant"))?
        .plan;
    #[allow(clippy::cast_possible_wrap)]
    let period = Period::containing(app.now_ms as i64);
    let resets_at = format_iso_ms(period.end_ms());
    // The monthly counter lives on each environment's shard, next to the
    // write that raises it: one read per environment with a contract.
    let contracts = store::contracts::of_tenant(&db, &tenant_id).await?;
    let mut environments = Vec::new();
    for env in [Env::Sandbox, Env::Production] {
        let used = match contracts.iter().find(|c| c.env == env) {
            Some(c) => {
                let ledger = crate::ledger::db(app, crate::ledger::LogId::new(env, c.shard))?;
                quota::used(&ledger, &tenant_id, app.now_ms).await?
            }
            None => 0,
        };
        let quota = Some(plan.deltas_per_month(env));
        environments.push(EnvUsage {
            environment: env.as_str(),
            plan: plan.as_str(),
            quota,
            used,
            remaining: quota.map(|q| q.saturating_sub(used)),
            resets_at: resets_at.clone(),
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
