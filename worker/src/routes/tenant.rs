//! `/dashboard/tenant/*`: tenant settings.

use bvs_core::types::RetentionDays;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::Session;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::{http, tenant};

/// `PATCH /dashboard/tenant/retention` `{dataRetentionDays: null|7|30|90}`.
pub async fn retention(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let days = match f.json(RetentionDays::FIELD) {
        None => {
            f.problem(RetentionDays::FIELD, "is required: null, 7, 30 or 90");
            None
        }
        Some(v) => f.check(RetentionDays::parse(&v)),
    };
    f.finish()?;
    let days = days.ok_or_else(|| ApiError::internal("validated retention missing"))?;
    let stored = tenant::set_retention(app, session.tenant_id(), days).await?;
    let message = match stored.data_retention_days {
        None => "Raw business data is kept forever".to_string(),
        Some(d) => format!("Raw business data is removed {d} days after verification"),
    };
    http::dashboard(
        200,
        &serde_json::json!({
            "tenantId": stored.id,
            "dataRetentionDays": stored.data_retention_days,
        }),
        Some(&message),
    )
}
