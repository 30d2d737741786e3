//! The request log (issue 30, docs/dashboard.md "Request log"): every
//! authenticated request of a tenant (balance and dashboard families), with
//! its status, error code, `Request-Id`, key and duration and its request
//! and response bodies (masked and cut, `redact`), kept on the tenant's
//! shard for the shorter of the plan's log time and the tenant's retention
//! window.
//!
//! Off the request's path: [`begin`] only keeps a handle on the request's
//! body (a clone, read after the response) and [`finish`] hands the row to
//! `after_response`. Rows of one isolate wait up to
//! `writer::FLUSH_AFTER_MS` in memory and are written together (`writer`),
//! one batch per shard with each tenant's meter of the day raised in it.
//! Best effort: a row is lost if the isolate dies before its flush, if the
//! isolate holds more than `writer::PENDING_ROWS_MAX`, or if the tenant's
//! log is full for the day; logging never refuses, delays or changes an
//! answer.

pub mod read;
pub mod redact;
mod writer;

use worker::{Method, Request, Response, ResponseBody};

use crate::app::App;
use crate::ids::TenantId;

/// Routes whose requests are not logged: reading the log must not write it.
pub const UNLOGGED_ROUTES: &[&str] = &[
    "/dashboard/logs/requests",
    "/dashboard/logs/requests/:requestId",
];

/// Where a row is kept and what it is listed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A balance request with a key of this environment, on this shard.
    Key(bvs_core::types::Env, u32),
    /// A dashboard request (JWT): on the tenant's Sandbox shard.
    Dashboard,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Key(env, _) => env.as_str(),
            Source::Dashboard => "dashboard",
        }
    }
}

/// What a request will be logged with, taken before its handler runs.
pub struct Capture {
    /// A clone of the request, for its body (read after the response).
    body: Option<Request>,
    method: String,
    path: String,
}

/// Starts capturing a request of the balance or dashboard families; `None`
/// for any other path. Cheap: the body is cloned, not read.
pub fn begin(req: &Request, method: &Method, path: &str) -> Option<Capture> {
    if !(path.starts_with("/api/v1/") || path.starts_with("/dashboard/")) {
        return None;
    }
    let has_body = !matches!(method, Method::Get | Method::Head | Method::Options);
    let query = req.url().ok().and_then(|u| u.query().map(str::to_string));
    Some(Capture {
        body: if has_body { req.clone().ok() } else { None },
        method: method.to_string(),
        path: redact::path(path, query.as_deref()),
    })
}

/// How a request ended.
pub struct Outcome<'a> {
    pub route: &'static str,
    pub status: u16,
    pub code: Option<&'static str>,
    pub request_id: &'a str,
    pub response: &'a Response,
}

/// Logs the request after the response, if it was a tenant's (its key's
/// secret or its JWT checked out) and its route is logged.
pub async fn finish(app: &App, capture: Option<Capture>, outcome: Outcome<'_>) {
    let Some(capture) = capture else { return };
    let Some(tenant_id) = app.tenant() else {
        return;
    };
    if UNLOGGED_ROUTES.contains(&outcome.route) {
        return;
    }
    let (source, key_id, plan) = match app.key_caller() {
        Some(k) => (
            Source::Key(k.env, k.shard),
            Some(k.key_id),
            Some(crate::plan::Plan::from_stored(k.plan)),
        ),
        None => (Source::Dashboard, None, None),
    };
    // A successful read of the dashboard is logged without its answer: the
    // page showed it, and the dashboard polls while something is pending,
    // which must not crowd the balance API's requests out of the day's
    // bytes.
    let keeps_answer =
        !(source == Source::Dashboard && capture.method == "GET" && outcome.status < 400);
    // Only what the log keeps is copied here; masking waits for later.
    let (response, response_len) = match outcome.response.body() {
        ResponseBody::Body(b) if keeps_answer => (
            b[..b.len().min(redact::BODY_SCAN_BYTES_MAX)].to_vec(),
            b.len(),
        ),
        _ => (Vec::new(), 0),
    };
    let now = crate::app::clock_ms();
    let pending = writer::Row {
        request_id: outcome.request_id.to_string(),
        tenant_id,
        source,
        created_at: app.now_ms,
        method: capture.method,
        path: capture.path,
        route: outcome.route,
        status: outcome.status,
        code: outcome.code,
        key_id,
        plan,
        duration_ms: now.saturating_sub(app.now_ms),
        request_body: None,
        response_body: None,
    };
    let env = app.env.clone();
    let body = capture.body;
    app.after_response(async move {
        let mut row = pending;
        if let Some(mut clone) = body {
            if let Ok(bytes) = clone.bytes().await {
                row.request_body = redact::body(&bytes);
            }
        }
        row.response_body = redact::body_of(&response, response_len);
        if writer::push(row, crate::app::clock_ms()) {
            writer::flush(env).await;
        }
    })
    .await;
}

/// Deletes expired rows of every shard (the every-minute sweep), at most
/// `writer::PURGE_ROWS_MAX` per shard.
///
/// # Errors
/// D1 errors of the first shard that failed (the others still ran).
pub async fn purge_expired(app: &App) -> crate::error::ApiResult<u64> {
    writer::purge_expired(app).await
}

/// Deletes the request log's daily meters of days no row can be counted
/// in any more (the daily retention run).
///
/// # Errors
/// D1 errors.
pub async fn purge_old_meters(app: &App) -> crate::error::ApiResult<()> {
    writer::purge_old_meters(app).await
}

/// Forgets what this isolate's writer knows of a tenant (its plan or
/// retention window changed): its next rows read it again. Other isolates
/// use theirs for at most `writer::TENANT_CACHE_MS`.
pub fn forget_tenant(tenant_id: &TenantId) {
    writer::forget_tenant(tenant_id);
}
