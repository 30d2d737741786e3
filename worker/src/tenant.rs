//! Tenant settings other routes and jobs read.

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::store;

/// The tenant's `dataRetentionDays`: `None` keeps raw data forever.
///
/// # Errors
/// 404 if the tenant does not exist; internal error on storage failure.
pub async fn tenant_retention_days(app: &App, tenant_id: &str) -> ApiResult<Option<u32>> {
    store::accounts::tenant(&app.control_db()?, tenant_id)
        .await?
        .map(|t| t.data_retention_days)
        .ok_or_else(|| ApiError::NotFound(format!("No tenant {tenant_id}")))
}
