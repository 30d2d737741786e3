//! DEV_MODE-only diagnostics: 404 unless `DEV_MODE` is "true".

use serde::Serialize;
use worker::Response;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::jobs::{Job, QUEUE_VERIFY_SANDBOX};
use crate::{http, ids, store};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PingView {
    id: String,
    note: String,
    created_at: u64,
    consumed_at: Option<u64>,
}

/// `POST /dev/ping` `{"note": "..."}`: writes a row to D1 and rings the queue;
/// the consumer stamps `consumedAt`.
pub async fn ping_create(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let body = http::json_body(&mut req).await?;
    let note = http::as_object(&body)?
        .get("note")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ApiError::field("note", "is required and must be a string"))?
        .to_string();
    let id = ids::new_id("png")?;
    store::dev::insert_ping(&app.control_db()?, &id, &note, app.now_ms).await?;
    app.env
        .queue(QUEUE_VERIFY_SANDBOX)?
        .send(Job::Ping { id: id.clone() })
        .await?;
    let view = PingView {
        id,
        note,
        created_at: app.now_ms,
        consumed_at: None,
    };
    http::dashboard(201, &view, None)
}

/// `GET /dev/ping/:id`.
pub async fn ping_get(app: &App, id: &str) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let row = store::dev::ping(&app.control_db()?, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No ping {id}")))?;
    let view = PingView {
        id: row.id,
        note: row.note,
        created_at: row.created_at,
        consumed_at: row.consumed_at,
    };
    http::dashboard(200, &view, None)
}
