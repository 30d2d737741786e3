//! `/dashboard/logs/requests*`, `/dashboard/events*` and
//! `/dashboard/deliveries/:id/resend` (issue 30): the request log, the
//! event log with every delivery, and a delivery's resend. Not in the spec;
//! docs/dashboard.md.

use bvs_core::time::parse_iso_ms;
use bvs_core::types::Env;
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::{json, Map, Value};
use worker::{Request, Response};

use super::webhooks::DeliveryProgress;
use crate::app::App;
use crate::auth::Session;
use crate::error::ApiResult;
use crate::http;
use crate::ids::{DeliveryId, EventId, KeyId, WebhookId};
use crate::request_log::read::{self, Cursor, DetailRow, EntryRow, Family, Listed, StatusFilter};
use crate::views::iso;
use crate::webhooks::endpoints::{self, AttemptRow, DeliveryRow};
use crate::webhooks::event_log::{self, Logged};
use crate::webhooks::EVENT_NAMES;

fn param(req: &Request, name: &str) -> ApiResult<Option<String>> {
    Ok(http::query_param(req, name)?
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty()))
}

/// `environment`: sandbox (the default) or production.
fn environment(req: &Request) -> ApiResult<Env> {
    match param(req, "environment")? {
        None => Ok(Env::Sandbox),
        Some(e) => Ok(Env::parse("environment", &e)?),
    }
}

/// `limit`: 1 to `max`, `default` when absent. Present but empty is not
/// a number (400), unlike the text filters, where empty means "any".
fn limit(req: &Request, default: u64, max: u64) -> ApiResult<u64> {
    let Some(text) = http::query_param(req, "limit")? else {
        return Ok(default);
    };
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => {
            Err(FieldError::new("limit", format!("must be a whole number from 1 to {max}")).into())
        }
    }
}

/// An ISO 8601 time parameter, in unix milliseconds.
fn time(req: &Request, name: &str) -> ApiResult<Option<u64>> {
    let Some(text) = param(req, name)? else {
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
    let path_part = param(&req, "path")?;
    if path_part
        .as_ref()
        .is_some_and(|p| p.chars().count() > read::PATH_FILTER_CHARS_MAX)
    {
        return Err(FieldError::new("path", "must be at most 200 characters").into());
    }
    let q = read::Query {
        env: environment(&req)?,
        family: Family::parse(param(&req, "family")?.as_deref())?,
        status: StatusFilter::parse(param(&req, "status")?.as_deref())?,
        path_part,
        key_id: param(&req, "keyId")?.map(KeyId::from_text),
        since_ms: time(&req, "since")?.unwrap_or(0),
        until_ms: time(&req, "until")?.unwrap_or(u64::MAX >> 11),
        before: param(&req, "before")?
            .map(|b| Cursor::parse(&b))
            .transpose()?,
        limit: limit(&req, read::PAGE_DEFAULT, read::PAGE_MAX)?,
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeliveryView {
    id: DeliveryId,
    webhook_id: WebhookId,
    url: Option<String>,
    #[serde(flatten)]
    progress: DeliveryProgress,
    data_purged: bool,
}

fn delivery_views(deliveries: Vec<DeliveryRow>, attempts: &[AttemptRow]) -> Vec<DeliveryView> {
    deliveries
        .into_iter()
        .map(|d| DeliveryView {
            progress: DeliveryProgress::of(&d, attempts),
            id: d.of.id,
            webhook_id: d.of.webhook_id,
            url: d.url,
            data_purged: d.data_purged != 0,
        })
        .collect()
}

/// The ids an event is about, from its payload: what the list shows and
/// links to.
const SUMMARY_FIELDS: &[&str] = &[
    "customerId",
    "anchorId",
    "checkpointId",
    "submissionId",
    "itemsRoot",
    "merkleRoot",
    "period",
    "contentHash",
];

fn event_view(l: Logged, with_payload: bool) -> Value {
    let Logged {
        env,
        event,
        deliveries,
        attempts,
    } = l;
    let first = deliveries.first();
    let id = event
        .as_ref()
        .map(|e| e.id.clone())
        .or_else(|| first.map(|d| d.of.event_id.clone()));
    let kind = event
        .as_ref()
        .map(|e| e.kind.as_str().to_owned())
        .or_else(|| first.map(|d| d.of.event_type.clone()));
    let created_at = event
        .as_ref()
        .map(|e| e.created_at)
        .or_else(|| first.map(|d| d.of.event_created_at));
    let payload: Option<Value> = event
        .as_ref()
        .and_then(|e| serde_json::from_str(&e.payload).ok());
    let mut summary = Map::new();
    if let Some(Value::Object(p)) = &payload {
        for f in SUMMARY_FIELDS {
            if let Some(v @ Value::String(_)) = p.get(*f) {
                summary.insert((*f).to_string(), v.clone());
            }
        }
    }
    let mut view = json!({
        "id": id,
        "type": kind,
        "environment": env.map(Env::as_str),
        "createdAt": created_at.map(iso),
        "dispatchedAt": event.as_ref().and_then(|e| e.dispatched_at).map(iso),
        "inOutbox": event.is_some(),
        "summary": summary,
        "deliveries": delivery_views(deliveries, &attempts),
    });
    if with_payload {
        view["payload"] = payload.unwrap_or(Value::Null);
    }
    view
}

/// `GET /dashboard/events?environment=&type=&before=&limit=`: the
/// environment's events, newest first, with their deliveries.
pub async fn events(app: &App, req: Request, session: Session) -> ApiResult<Response> {
    let env = environment(&req)?;
    let kind = param(&req, "type")?;
    if let Some(k) = &kind {
        if !EVENT_NAMES.contains(&k.as_str()) {
            return Err(FieldError::new(
                "type",
                format!("must be one of {}", EVENT_NAMES.join(", ")),
            )
            .into());
        }
    }
    let before = param(&req, "before")?
        .map(|b| {
            let bad = || FieldError::new("before", "must be a nextCursor of an earlier page");
            let (ms, id) = b.split_once(':').ok_or_else(bad)?;
            Ok::<_, FieldError>((ms.parse::<u64>().map_err(|_| bad())?, id.to_string()))
        })
        .transpose()?;
    let limit = limit(&req, event_log::PAGE_DEFAULT, event_log::PAGE_MAX)?;
    let (rows, more) = event_log::page(
        app,
        session.tenant_id(),
        env,
        kind.as_deref(),
        before,
        limit,
    )
    .await?;
    let next = if more {
        rows.last()
            .and_then(|l| l.event.as_ref())
            .map(|e| format!("{}:{}", e.created_at, e.id))
    } else {
        None
    };
    let events: Vec<Value> = rows.into_iter().map(|l| event_view(l, false)).collect();
    http::dashboard(200, &json!({ "events": events, "nextCursor": next }), None)
}

/// `GET /dashboard/events/:eventId`: the event, its payload, and every
/// delivery with every attempt.
pub async fn event(app: &App, session: Session, event_id: &EventId) -> ApiResult<Response> {
    let logged = event_log::one(app, session.tenant_id(), event_id).await?;
    http::dashboard(200, &event_view(logged, true), None)
}

/// `POST /dashboard/deliveries/:deliveryId/resend`: one attempt now; the
/// reply says what the receiver answered.
pub async fn resend(app: &App, session: Session, delivery_id: &DeliveryId) -> ApiResult<Response> {
    session.require_verified()?;
    let report = endpoints::resend(app, session.tenant_id(), delivery_id).await?;
    http::dashboard(
        200,
        &json!({
            "deliveryId": delivery_id,
            "success": report.success,
            // 0: no HTTP response (network error or time-out).
            "httpStatus": report.http_status.unwrap_or(0),
            "message": report.message,
        }),
        None,
    )
}
