//! The DEV_MODE queue ping (`/dev/ping`): a row written to D1 and a
//! doorbell on sandbox shard 0's verification queue, whose consumer stamps the
//! row (`Job::Ping`), so a test can see the queue path work end to end.

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids;
use crate::jobs::Job;
use crate::ledger::LogId;
use crate::store::dev::{self as store, PingRow};

/// Writes a ping and rings the queue; returns its id.
///
/// # Errors
/// D1 and queue errors.
pub async fn create(app: &App, note: &str) -> ApiResult<String> {
    let id = ids::new_id("png")?;
    store::insert_ping(&app.control_db()?, &id, note, app.now_ms).await?;
    crate::roundtrips::outbound().await?;
    app.env
        .queue(&LogId::new(bvs_core::types::Env::Sandbox, 0).queue_binding())?
        .send(Job::Ping { id: id.clone() })
        .await?;
    Ok(id)
}

/// # Errors
/// 404 for an unknown ping; D1 errors.
pub async fn get(app: &App, id: &str) -> ApiResult<PingRow> {
    store::ping(&app.control_db()?, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No ping {id}")))
}
