use serde::Serialize;
use worker::Response;

use crate::error::ApiResult;
use crate::http;

#[derive(Serialize)]
struct Health {
    status: &'static str,
}

/// `GET /health`: 200 `{"statusCode":200,"data":{"status":"ok"}}`.
pub fn get() -> ApiResult<Response> {
    http::dashboard(200, &Health { status: "ok" }, None)
}
