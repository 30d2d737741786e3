//! `/dashboard/webhooks*`: create (the secret is shown once), list, get,
//! toggle, test, delete, rotate the secret, and a webhook's recent
//! deliveries; the event log (`/dashboard/events*`, issue 30: an
//! environment's events with every delivery) and a delivery's resend
//! (`/dashboard/deliveries/:id/resend`). Another tenant's webhook id is
//! 404.

use bvs_core::types::Env;
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::{json, Map, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::Session;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ids::{DeliveryId, EventId, WebhookId};
use crate::views::{iso, DeliveryProgress};
use crate::webhooks::endpoints::{self, AttemptRow, DeliveryRow, NewEndpoint, WebhookRow};
use crate::webhooks::event_log::{self, Logged};
use crate::webhooks::{url_safety, EVENT_NAMES, EVENT_TEST};

/// Longest description, in characters. // spec: silent
pub const DESCRIPTION_CHARS_MAX: usize = 500;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WebhookView {
    id: WebhookId,
    url: String,
    events: Vec<String>,
    description: String,
    active: bool,
    created_at: String,
    /// The endpoint's own Ed25519 key (`whpk_…`) its `v1a,` signatures
    /// verify with (issue 40): the key a receiver pins.
    public_key: String,
    /// During a rotation's overlap, the previous key, which signs beside
    /// the current one until `previousPublicKeyExpiresAt`; null otherwise.
    previous_public_key: Option<String>,
    previous_public_key_expires_at: Option<String>,
}

impl WebhookView {
    fn from_row(app: &App, row: &WebhookRow) -> ApiResult<WebhookView> {
        let keys = endpoints::public_keys(app, row)?;
        let (previous_public_key, previous_public_key_expires_at) = match keys.previous {
            Some((key, until)) => (Some(key), Some(iso(until))),
            None => (None, None),
        };
        Ok(WebhookView {
            id: row.id.clone(),
            url: row.url.clone(),
            events: row.event_names(),
            description: row.description.clone(),
            active: row.active != 0,
            created_at: iso(row.created_at),
            public_key: keys.current,
            previous_public_key,
            previous_public_key_expires_at,
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedView {
    #[serde(flatten)]
    view: WebhookView,
    /// Returned only here.
    secret: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DetailView {
    #[serde(flatten)]
    view: WebhookView,
    last_triggered_at: Option<String>,
}

/// `POST /dashboard/webhooks` `{url, events[], description}`.
pub async fn create(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let url_text = f.required("url");
    let url = if url_text.is_empty() {
        None
    } else {
        match url_safety::check(&url_text, app.dev_mode()) {
            Ok(u) => Some(u),
            Err(reason) => {
                f.problem("url", reason);
                None
            }
        }
    };
    let events = parse_events(&mut f);
    let description = match f.string("description", false) {
        None => String::new(),
        Some(d) => {
            let d = d.trim();
            if d.chars().count() > DESCRIPTION_CHARS_MAX {
                f.problem("description", "must be at most 500 characters");
            }
            d.to_string()
        }
    };
    f.finish()?;
    let url = url.ok_or_else(|| ApiError::internal("validated url missing"))?;
    session.require_verified()?;
    let (row, secret_text) = endpoints::create(
        app,
        &NewEndpoint {
            tenant_id: session.tenant_id(),
            url: &url,
            events: &events,
            description: &description,
        },
    )
    .await?;
    http::dashboard(
        201,
        &CreatedView {
            view: WebhookView::from_row(app, &row)?,
            secret: secret_text,
        },
        Some("Webhook created: store the secret now, it is shown only once"),
    )
}

/// A non-empty array of known event names, without duplicates.
fn parse_events(f: &mut Fields) -> Vec<String> {
    let Some(raw) = f.json("events") else {
        f.problem("events", "is required: an array of event names");
        return Vec::new();
    };
    let Some(items) = raw.as_array() else {
        f.problem("events", "must be an array of event names");
        return Vec::new();
    };
    if items.is_empty() {
        f.problem("events", "must name at least one event");
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for item in items {
        match item.as_str() {
            Some(name) if EVENT_NAMES.contains(&name) => {
                if !out.iter().any(|e| e == name) {
                    out.push(name.to_string());
                }
            }
            Some(name) => {
                let shown: String = name.chars().take(64).collect();
                f.problem(
                    "events",
                    format!(
                        "unknown event {shown:?}; known events: {}",
                        EVENT_NAMES.join(", ")
                    ),
                );
            }
            None => f.problem("events", "must contain only strings"),
        }
    }
    out
}

/// `GET /dashboard/webhooks`: never the secret.
pub async fn list(app: &App, session: Session) -> ApiResult<Response> {
    let rows = endpoints::list(app, session.tenant_id()).await?;
    let views = rows
        .iter()
        .map(|r| WebhookView::from_row(app, r))
        .collect::<ApiResult<Vec<WebhookView>>>()?;
    http::dashboard(200, &views, None)
}

/// `GET /dashboard/webhooks/:id`: the fields plus lastTriggeredAt.
pub async fn get(app: &App, session: Session, id: &WebhookId) -> ApiResult<Response> {
    let row = endpoints::get(app, session.tenant_id(), id).await?;
    http::dashboard(
        200,
        &DetailView {
            view: WebhookView::from_row(app, &row)?,
            last_triggered_at: row.last_triggered_at.map(iso),
        },
        None,
    )
}

/// `POST /dashboard/webhooks/:id/toggle`.
pub async fn toggle(app: &App, session: Session, id: &WebhookId) -> ApiResult<Response> {
    // 404 before 403: another tenant's id is not found, whoever asks.
    endpoints::get(app, session.tenant_id(), id).await?;
    session.require_verified()?;
    let row = endpoints::toggle(app, session.tenant_id(), id).await?;
    let active = row.active != 0;
    let message = if active {
        "Webhook enabled: it receives the events it subscribes to"
    } else {
        "Webhook disabled: it receives nothing until enabled again"
    };
    http::dashboard(
        200,
        &serde_json::json!({ "id": row.id, "active": active, "message": message }),
        Some(message),
    )
}

/// `POST /dashboard/webhooks/:id/test` with an optional body
/// `{"type": "<event>"}`: sends a real, signed event now (once, no
/// retries) and reports what the receiver answered. Without a type it is
/// the `test` event; any other subscribable event is sent as a sample with
/// that event's documented payload (`webhooks::samples`).
pub async fn test(
    app: &App,
    mut req: Request,
    session: Session,
    id: &WebhookId,
) -> ApiResult<Response> {
    let event_type = test_event_type(&mut req).await?;
    let row = endpoints::get(app, session.tenant_id(), id).await?;
    session.require_verified()?;
    let (delivery_id, report) = endpoints::send_test(app, &row, event_type).await?;
    http::dashboard(
        200,
        &serde_json::json!({
            "success": report.success,
            // 0: no HTTP response (network error or time-out).
            "httpStatus": report.http_status.unwrap_or(0),
            "message": report.message,
            "deliveryId": delivery_id,
        }),
        None,
    )
}

/// The event the test route sends: the body's optional `type` (any
/// subscribable event), `test` when the body is empty or has no type.
async fn test_event_type(req: &mut Request) -> ApiResult<String> {
    let bytes = http::body_bytes(req, http::BODY_BYTES_MAX).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(EVENT_TEST.to_string());
    }
    let mut f = Fields::from_bytes(&bytes)?;
    let event_type = match f.string("type", false) {
        None => EVENT_TEST.to_string(),
        Some(t) if EVENT_NAMES.contains(&t.as_str()) => t,
        Some(t) => {
            let shown: String = t.chars().take(64).collect();
            f.problem(
                "type",
                format!(
                    "unknown event {shown:?}; known events: {}",
                    EVENT_NAMES.join(", ")
                ),
            );
            String::new()
        }
    };
    f.finish()?;
    Ok(event_type)
}

/// `POST /dashboard/webhooks/:id/rotate-secret` with an optional body
/// `{"overlapHours": 0..168}` (default 24): a new secret, shown once, and
/// the endpoint's next signing key (`publicKey`); the previous ones keep
/// signing beside them (a second `v1,` and a second `v1a,` signature in
/// `webhook-signature`) until `previousSecretExpiresAt`.
pub async fn rotate_secret(
    app: &App,
    mut req: Request,
    session: Session,
    id: &WebhookId,
) -> ApiResult<Response> {
    let overlap_ms = overlap_ms(&mut req).await?;
    endpoints::get(app, session.tenant_id(), id).await?;
    session.require_verified()?;
    let (secret, row) = endpoints::rotate_secret(app, session.tenant_id(), id, overlap_ms).await?;
    let keys = endpoints::public_keys(app, &row)?;
    let until = row.previous_secret_expires_at;
    let message = match until {
        Some(_) => {
            "Secret and key rotated: deliveries carry a v1 signature with each secret and a v1a \
             signature with each key until previousSecretExpiresAt"
        }
        None => "Secret and key rotated: the previous secret and key no longer sign",
    };
    http::dashboard(
        200,
        &serde_json::json!({
            "id": id,
            "secret": secret,
            "previousSecretExpiresAt": until.map(iso),
            "publicKey": keys.current,
            "previousPublicKey": keys.previous.map(|(k, _)| k),
            "message": message,
        }),
        Some(message),
    )
}

/// The rotation's overlap: the body's optional `overlapHours`, a whole
/// number from 0 to a week; a day without one.
async fn overlap_ms(req: &mut Request) -> ApiResult<u64> {
    let bytes = http::body_bytes(req, http::BODY_BYTES_MAX).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(endpoints::ROTATION_OVERLAP_DEFAULT_MS);
    }
    let mut f = Fields::from_bytes(&bytes)?;
    let max = endpoints::ROTATION_OVERLAP_MAX_HOURS;
    let hours = f
        .number("overlapHours", false)
        .map(|t| match t.parse::<u64>() {
            Ok(h) if h <= max => Some(h),
            _ => None,
        });
    if let Some(None) = hours {
        f.problem(
            "overlapHours",
            format!("must be a whole number of hours from 0 to {max}"),
        );
    }
    f.finish()?;
    Ok(match hours.flatten() {
        Some(h) => h * 60 * 60 * 1000,
        None => endpoints::ROTATION_OVERLAP_DEFAULT_MS,
    })
}

/// `DELETE /dashboard/webhooks/:id`: deletes it and cancels its pending
/// deliveries.
pub async fn delete(app: &App, session: Session, id: &WebhookId) -> ApiResult<Response> {
    endpoints::delete(app, session.tenant_id(), id).await?;
    http::dashboard(
        200,
        &serde_json::json!({ "id": id, "deleted": true }),
        Some("Webhook deleted"),
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeliveryView {
    id: DeliveryId,
    event: String,
    event_id: EventId,
    environment: Option<String>,
    #[serde(flatten)]
    progress: DeliveryProgress,
    url: Option<String>,
    payload: Option<serde_json::Value>,
    data_purged: bool,
    purged_at: Option<String>,
}

/// `GET /dashboard/webhooks/:id/deliveries`: the latest deliveries with
/// every attempt (not in the spec; for debugging and replay checks).
pub async fn deliveries(app: &App, session: Session, id: &WebhookId) -> ApiResult<Response> {
    let (rows, attempts) = endpoints::deliveries(app, session.tenant_id(), id).await?;
    let views: Vec<DeliveryView> = rows
        .into_iter()
        .map(|r| DeliveryView {
            progress: DeliveryProgress::of(&r, &attempts),
            payload: r
                .payload
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok()),
            id: r.of.id,
            event: r.of.event_type,
            event_id: r.of.event_id,
            environment: r.of.env.map(|e| e.as_str().to_owned()),
            url: r.url,
            data_purged: r.data_purged != 0,
            purged_at: r.purged_at.map(iso),
        })
        .collect();
    http::dashboard(200, &views, None)
}

/// `GET /api/v1/webhooks/keys` (public): lists no key (issue 40). It once
/// listed each environment's key, which signed every tenant's deliveries,
/// so a delivery forwarded from one tenant's receiver verified at
/// another's. Each endpoint now has a key of its own, shown only to its
/// tenant with the endpoint (`publicKey` in the `/dashboard/webhooks`
/// answers); the route stays, empty, so a receiver that fetched it learns
/// where its key is instead of failing on a 404.
pub fn keys() -> ApiResult<Response> {
    let resp = http::balance(
        200,
        &serde_json::json!({
            "keys": [],
            "message": KEYS_MOVED,
        }),
    )?;
    resp.headers().set("cache-control", "public, max-age=300")?;
    Ok(resp)
}

/// What `GET /api/v1/webhooks/keys` says instead of a key.
pub const KEYS_MOVED: &str = "No shared webhook key: each webhook endpoint signs its v1a \
     signatures with a key of its own. Pin your endpoint's publicKey, shown with it in the \
     dashboard (GET /dashboard/webhooks/:id); a key pinned from this list no longer verifies \
     any delivery.";

// ------------------------------------------------------------------ event log

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoggedDeliveryView {
    id: DeliveryId,
    webhook_id: WebhookId,
    url: Option<String>,
    #[serde(flatten)]
    progress: DeliveryProgress,
    data_purged: bool,
}

fn delivery_views(
    deliveries: Vec<DeliveryRow>,
    attempts: &[AttemptRow],
) -> Vec<LoggedDeliveryView> {
    deliveries
        .into_iter()
        .map(|d| LoggedDeliveryView {
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
    let env = http::query_env(&req)?;
    let kind = http::query_text(&req, "type")?;
    if let Some(k) = &kind {
        if !EVENT_NAMES.contains(&k.as_str()) {
            return Err(FieldError::new(
                "type",
                format!("must be one of {}", EVENT_NAMES.join(", ")),
            )
            .into());
        }
    }
    let before = http::query_text(&req, "before")?
        .map(|b| {
            let bad = || FieldError::new("before", "must be a nextCursor of an earlier page");
            let (ms, id) = b.split_once(':').ok_or_else(bad)?;
            Ok::<_, FieldError>((ms.parse::<u64>().map_err(|_| bad())?, id.to_string()))
        })
        .transpose()?;
    let limit = http::query_limit(&req, event_log::PAGE_DEFAULT, event_log::PAGE_MAX)?;
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
