//! `GET /dashboard/search` and `GET /dashboard/usage/daily` (issue 30):
//! the dashboard's search by id, and the overview's charts. Not in the
//! spec; docs/dashboard.md.

use bvs_core::types::{Env, Period};
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::Session;
use crate::error::ApiResult;
use crate::ledgers::charts;
use crate::{auth, http, search, tenant};

/// `GET /dashboard/search?q=<id>`: every object of the tenant with this id.
pub async fn search(app: &App, req: Request, session: Session) -> ApiResult<Response> {
    let q = search::parse_query(&http::query_param(&req, "q")?.unwrap_or_default())?;
    let hits = search::find(app, session.tenant_id(), &q).await?;
    let results: Vec<serde_json::Value> = hits
        .into_iter()
        .map(|h| {
            json!({
                "kind": h.kind.as_str(),
                "id": h.id,
                "environment": h.env.map(Env::as_str),
                "customerId": h.customer_id,
                "proofRoot": h.root,
                "state": h.state,
                "eventId": h.event_id,
            })
        })
        .collect();
    http::dashboard(200, &json!({ "query": q, "results": results }), None)
}

/// `GET /dashboard/usage/daily?environment=&days=`: per day (UTC) the
/// deltas verified and their verification lag at p50 and p99, with this
/// month's quota and usage.
pub async fn daily(app: &App, req: Request, session: Session) -> ApiResult<Response> {
    let env = match http::query_param(&req, "environment")? {
        Some(e) if !e.is_empty() => Env::parse("environment", &e)?,
        _ => Env::Sandbox,
    };
    let days = match http::query_param(&req, "days")? {
        None => 30,
        Some(d) => match d.parse::<u64>() {
            Ok(n) if (1..=charts::DAYS_MAX).contains(&n) => n,
            _ => {
                return Err(bvs_core::FieldError::new(
                    "days",
                    format!("must be a whole number from 1 to {}", charts::DAYS_MAX),
                )
                .into())
            }
        },
    };
    let tenant_id = session.tenant_id();
    let plan = tenant::of_session(app, tenant_id).await?.plan;
    #[allow(clippy::cast_possible_wrap)]
    let period = Period::containing(app.now_ms as i64);
    let contract = auth::contracts::for_env(app, tenant_id, env).await?;
    let figures = match contract {
        Some(c) => {
            let db = crate::ledger::db(app, crate::ledger::LogId::new(env, c.shard))?;
            let (figures, usage) = futures_util::future::try_join(
                charts::daily(&db, tenant_id, app.now_ms, days),
                tenant::usage(app, tenant_id, env, period),
            )
            .await?;
            Some((figures, usage.used))
        }
        None => None,
    };
    let (figures, used) = figures.unwrap_or_default();
    let days: Vec<serde_json::Value> = figures
        .into_iter()
        .map(|d| {
            json!({
                "day": d.day,
                "verified": d.verified,
                "lagP50Ms": d.p50_ms,
                "lagP99Ms": d.p99_ms,
            })
        })
        .collect();
    http::dashboard(
        200,
        &json!({
            "environment": env.as_str(),
            "plan": plan.as_str(),
            "period": period.to_string(),
            "quota": plan.deltas_per_month(env),
            "used": used,
            "days": days,
        }),
        None,
    )
}
