//! `/dashboard/logs/requests*` (issue 30): the request log, a page of an
//! environment's requests and one request with its bodies. Not in the
//! spec; docs/dashboard.md.

use bvs_core::time::parse_iso_ms;
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::Session;
use crate::error::ApiResult;
use crate::http;
use crate::ids::KeyId;
use crate::request_log::read::{self, Cursor, DetailRow, EntryRow, Family, Listed, StatusFilter};
use crate::views::iso;

/// An ISO 8601 time parameter, in unix milliseconds.
fn time(req: &Request, name: &str) -> ApiResult<Option<u64>> {
    let Some(text) = http::query_text(req, name)? else {
        return Ok(None);
    };
    let ms = parse_iso_ms(&text)
        .ok()
        .and_then(|ms| u64::try_from(ms).ok())
        .ok_or_else(|| {
            FieldError::new(
                name,
                "must be an ISO 8601 time such as 2026-11-24T10:00:00Z",
            )
        })?;
    Ok(Some(ms))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestView {
    request_id: String,
    /// `sandbox` / `production` (a balance request with a key of that
    /// environment) or `dashboard`.
    source: String,
    method: String,
    path: String,
    route: String,
    status: u16,
    code: Option<String>,
    key_id: Option<KeyId>,
    key_name: Option<String>,
    duration_ms: u64,
    created_at: String,
}

fn request_view(e: EntryRow, key_name: Option<String>) -> RequestView {
    RequestView {
        request_id: e.request_id,
        source: e.source,
        method: e.method,
        path: e.path,
        route: e.route,
        status: e.status,
        code: e.code,
        key_id: e.key_id,
        key_name,
        duration_ms: e.duration_ms,
        created_at: iso(e.created_at),
    }
}

/// `GET /dashboard/logs/requests?environment=&family=&status=&path=&keyId=&since=&until=&before=&limit=`.
pub async fn requests(app: &App, req: Request, session: Session) -> ApiResult<Response> {
    let path_part = http::query_text(&req, "path")?;
    if path_part
        .as_ref()
        .is_some_and(|p| p.chars().count() > read::PATH_FILTER_CHARS_MAX)
    {
        return Err(FieldError::new("path", "must be at most 200 characters").into());
    }
    let q = read::Query {
        env: http::query_env(&req)?,
        family: Family::parse(http::query_text(&req, "family")?.as_deref())?,
        status: StatusFilter::parse(http::query_text(&req, "status")?.as_deref())?,
        path_part,
        key_id: http::query_text(&req, "keyId")?.map(KeyId::from_text),
        since_ms: time(&req, "since")?.unwrap_or(0),
        until_ms: time(&req, "until")?.unwrap_or(u64::MAX >> 11),
        before: http::query_text(&req, "before")?
            .map(|b| Cursor::parse(&b))
            .transpose()?,
        limit: http::query_limit(&req, read::PAGE_DEFAULT, read::PAGE_MAX)?,
    };
    let (rows, next) = read::page(app, session.tenant_id(), &q).await?;
    let requests: Vec<RequestView> = rows
        .into_iter()
        .map(|Listed { row, key_name }| request_view(row, key_name))
        .collect();
    http::dashboard(
        200,
        &json!({ "requests": requests, "nextCursor": next.map(|c| c.text()) }),
        None,
    )
}

/// `GET /dashboard/logs/requests/:requestId`: one request with its
/// (masked) bodies, from either environment.
pub async fn request(app: &App, session: Session, request_id: &str) -> ApiResult<Response> {
    let Listed { row, key_name } = read::one(app, session.tenant_id(), request_id).await?;
    let DetailRow { entry, bodies } = row;
    let mut view = serde_json::to_value(request_view(entry, key_name))?;
    view["requestBody"] = bodies.request_body.into();
    view["responseBody"] = bodies.response_body.into();
    http::dashboard(200, &view, None)
}
