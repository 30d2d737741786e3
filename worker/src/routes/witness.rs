//! The witnesses as the service shows them (issue 28, docs/proofs-api.md
//! "Witnesses"); the heads they cosign are served by `routes::log`.

use serde_json::json;
use worker::Response;

use crate::app::App;
use crate::error::ApiResult;
use crate::http;
use crate::ledger;
use crate::witness;

/// `GET /api/v1/logs/witnesses`: each log's witnesses, what each last
/// cosigned and how its last attempt went (issue 28; docs/proofs-api.md
/// "Witnesses").
pub async fn list(app: &App) -> ApiResult<Response> {
    let mut logs = Vec::new();
    for at in ledger::shard::all(app) {
        logs.push(witness::status(app, at).await?);
    }
    let resp = http::balance(200, &json!({ "logs": logs }))?;
    resp.headers().set("cache-control", "no-store")?;
    Ok(resp)
}
