//! Operator routes: `Authorization: Bearer <ADMIN_TOKEN>`.

use worker::{Request, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::ids::TenantId;
use crate::quota::Plan;
use crate::{http, tenant};

/// `POST /admin/tenants/:tenantId/plan` `{plan: free|pilot|growth|enterprise}`.
pub async fn set_plan(app: &App, mut req: Request, tenant_id: &TenantId) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let text = f.required("plan");
    let plan = Plan::parse(&text);
    if f.problems.is_empty() && plan.is_none() {
        f.problem("plan", "must be free, pilot, growth or enterprise");
    }
    f.finish()?;
    let plan = plan.ok_or_else(|| ApiError::internal("validated plan missing"))?;
    tenant::set_plan(app, tenant_id, plan).await?;
    http::dashboard(
        200,
        &serde_json::json!({ "tenantId": tenant_id, "plan": plan.as_str() }),
        Some("Plan updated"),
    )
}

/// `GET /admin/shards`: each ledger shard's sequencer progress (queued
/// items, the oldest one's age, the event outbox, the log's size and the
/// size its tiles cover; issue 27).
pub async fn shards(app: &App) -> ApiResult<Response> {
    let shards = crate::sequencer::queue::progress(app).await?;
    http::dashboard(200, &serde_json::json!({ "shards": shards }), None)
}
