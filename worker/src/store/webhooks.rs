//! Webhooks, deliveries and attempts (control database), and the ledger
//! databases' event outbox as the dispatcher reads it.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::accounts::ms;
use super::ledger::{int, numbered};
use super::{all, batch, changes, first, run, stmt, Arg, D1_BOUND_PARAMS_MAX};
use crate::error::ApiResult;

// ---------------------------------------------------------------- webhooks

const WEBHOOK_COLUMNS: &str = "id, tenant_id, url, events, description, secret_sealed, active, \
     created_at, updated_at, last_triggered_at";

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct WebhookRow {
    pub id: String,
    pub tenant_id: String,
    pub url: String,
    /// JSON array of event names.
    pub events: String,
    pub description: String,
    pub secret_sealed: String,
    pub active: i64,
    pub created_at: u64,
    pub updated_at: u64,
    pub last_triggered_at: Option<u64>,
}

impl WebhookRow {
    /// The subscribed event names (a row always holds a JSON array).
    pub fn event_names(&self) -> Vec<String> {
        serde_json::from_str(&self.events).unwrap_or_default()
    }

    pub fn subscribes_to(&self, event_type: &str) -> bool {
        self.event_names().iter().any(|e| e == event_type)
    }
}

pub struct NewWebhook<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub url: &'a str,
    pub events: &'a str,
    pub description: &'a str,
    pub secret_sealed: &'a str,
}

pub async fn insert(db: &D1Database, w: &NewWebhook<'_>, now_ms: u64) -> ApiResult<()> {
    run(
        db,
        "INSERT INTO webhooks (id, tenant_id, url, events, description, secret_sealed, active, \
         created_at, updated_at, last_triggered_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7, NULL)",
        &[
            Arg::Text(w.id),
            Arg::Text(w.tenant_id),
            Arg::Text(w.url),
            Arg::Text(w.events),
            Arg::Text(w.description),
            Arg::Text(w.secret_sealed),
            Arg::Int(ms(now_ms)),
        ],
    )
    .await?;
    Ok(())
}

pub async fn of_tenant(
    db: &D1Database,
    tenant_id: &str,
    id: &str,
) -> ApiResult<Option<WebhookRow>> {
    let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1 AND tenant_id = ?2");
    first(db, &sql, &[Arg::Text(id), Arg::Text(tenant_id)]).await
}

pub async fn by_id(db: &D1Database, id: &str) -> ApiResult<Option<WebhookRow>> {
    let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1");
    first(db, &sql, &[Arg::Text(id)]).await
}

/// A tenant's webhooks, oldest first.
pub async fn list(db: &D1Database, tenant_id: &str) -> ApiResult<Vec<WebhookRow>> {
    let sql = format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = ?1 ORDER BY created_at, id"
    );
    all(db, &sql, &[Arg::Text(tenant_id)]).await
}

pub async fn count(db: &D1Database, tenant_id: &str) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let row: Option<N> = first(
        db,
        "SELECT COUNT(*) AS n FROM webhooks WHERE tenant_id = ?1",
        &[Arg::Text(tenant_id)],
    )
    .await?;
    Ok(row.map_or(0, |r| r.n))
}

/// Flips `active`; returns rows changed (0: no such webhook of this tenant).
pub async fn toggle(db: &D1Database, tenant_id: &str, id: &str, now_ms: u64) -> ApiResult<u64> {
    run(
        db,
        "UPDATE webhooks SET active = 1 - active, updated_at = ?3 WHERE id = ?1 AND tenant_id = ?2",
        &[Arg::Text(id), Arg::Text(tenant_id), Arg::Int(ms(now_ms))],
    )
    .await
}

/// Deletes the webhook (and with it its sealed secret) and cancels its
/// deliveries still waiting, atomically. Returns webhooks deleted.
pub async fn delete(db: &D1Database, tenant_id: &str, id: &str, now_ms: u64) -> ApiResult<u64> {
    let results = batch(
        db,
        vec![
            stmt(
                db,
                "DELETE FROM webhooks WHERE id = ?1 AND tenant_id = ?2",
                &[Arg::Text(id), Arg::Text(tenant_id)],
            )?,
            stmt(
                db,
                "UPDATE webhook_deliveries SET status = 'canceled', completed_at = ?3, \
                 next_attempt_at = NULL, last_error = 'webhook deleted' \
                 WHERE webhook_id = ?1 AND tenant_id = ?2 AND status IN ('pending', 'delivering')",
                &[Arg::Text(id), Arg::Text(tenant_id), Arg::Int(ms(now_ms))],
            )?,
        ],
    )
    .await?;
    results.first().map_or(Ok(0), changes)
}

/// Active webhooks of these tenants (the dispatcher filters by event).
pub async fn active_for_tenants(
    db: &D1Database,
    tenant_ids: &[String],
) -> ApiResult<Vec<WebhookRow>> {
    let mut out = Vec::new();
    for chunk in tenant_ids.chunks(D1_BOUND_PARAMS_MAX) {
        let sql = format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE active = 1 AND tenant_id IN ({})",
            numbered(1, chunk.len())
        );
        let args: Vec<Arg<'_>> = chunk.iter().map(|t| Arg::Text(t)).collect();
        out.extend(all::<WebhookRow>(db, &sql, &args).await?);
    }
    Ok(out)
}

// ---------------------------------------------------------------- deliveries

pub const STATUS_PENDING: &str = "pending";
#[expect(dead_code, reason = "names a delivery state written in SQL")]
pub const STATUS_DELIVERING: &str = "delivering";
pub const STATUS_SUCCEEDED: &str = "succeeded";
pub const STATUS_FAILED: &str = "failed";
#[expect(dead_code, reason = "names a delivery state written in SQL")]
pub const STATUS_CANCELED: &str = "canceled";

pub struct NewDelivery {
    pub id: String,
    pub webhook_id: String,
    pub tenant_id: String,
    pub env: Option<String>,
    pub event_id: String,
    pub event_type: String,
    pub url: String,
    pub payload: String,
    pub event_created_at: u64,
}

/// INSERT OR IGNORE: a delivery id is derived from (event, webhook), so a
/// second dispatch of the same event adds nothing.
pub fn insert_deliveries(
    db: &D1Database,
    deliveries: &[NewDelivery],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    const COLS: usize = 10;
    let mut out = Vec::new();
    for chunk in deliveries.chunks(D1_BOUND_PARAMS_MAX / COLS) {
        let values: Vec<String> = (0..chunk.len())
            .map(|r| {
                let b = r * COLS;
                format!(
                    "(?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, 'pending', 0, ?{}, ?{})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6,
                    b + 7,
                    b + 8,
                    b + 9,
                    b + 10,
                    b + 10
                )
            })
            .collect();
        let sql = format!(
            "INSERT OR IGNORE INTO webhook_deliveries (id, webhook_id, tenant_id, env, event_id, \
             event_type, url, payload, event_created_at, status, attempts, next_attempt_at, created_at) \
             VALUES {}",
            values.join(", ")
        );
        let mut args = Vec::with_capacity(chunk.len() * COLS);
        for d in chunk {
            args.push(Arg::Text(&d.id));
            args.push(Arg::Text(&d.webhook_id));
            args.push(Arg::Text(&d.tenant_id));
            args.push(d.env.as_deref().map_or(Arg::Null, Arg::Text));
            args.push(Arg::Text(&d.event_id));
            args.push(Arg::Text(&d.event_type));
            args.push(Arg::Text(&d.url));
            args.push(Arg::Text(&d.payload));
            args.push(int(d.event_created_at)?);
            args.push(int(now_ms)?);
        }
        out.push(stmt(db, &sql, &args)?);
    }
    Ok(out)
}

/// Takes the delivery for one attempt when it is due: pending and due, or
/// delivering with an expired lease. Returns whether this caller owns it;
/// at most one caller does at a time.
pub async fn claim(db: &D1Database, id: &str, now_ms: u64, lease_ms: u64) -> ApiResult<bool> {
    let changed = run(
        db,
        "UPDATE webhook_deliveries SET status = 'delivering', attempts = attempts + 1, \
         next_attempt_at = ?3 \
         WHERE id = ?1 AND status IN ('pending', 'delivering') AND next_attempt_at <= ?2",
        &[
            Arg::Text(id),
            int(now_ms)?,
            int(now_ms.saturating_add(lease_ms))?,
        ],
    )
    .await?;
    Ok(changed == 1)
}

const DELIVERY_COLUMNS: &str = "id, webhook_id, tenant_id, env, event_id, event_type, url, payload, \
     event_created_at, status, attempts, next_attempt_at, last_http_status, last_error, created_at, \
     completed_at, data_purged, purged_at";

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct DeliveryRow {
    pub id: String,
    pub webhook_id: String,
    pub tenant_id: String,
    pub env: Option<String>,
    pub event_id: String,
    pub event_type: String,
    pub url: Option<String>,
    pub payload: Option<String>,
    pub event_created_at: u64,
    pub status: String,
    pub attempts: u64,
    pub next_attempt_at: Option<u64>,
    pub last_http_status: Option<u16>,
    pub last_error: Option<String>,
    pub created_at: u64,
    pub completed_at: Option<u64>,
    pub data_purged: u64,
    pub purged_at: Option<u64>,
}

pub async fn delivery(db: &D1Database, id: &str) -> ApiResult<Option<DeliveryRow>> {
    let sql = format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ?1");
    first(db, &sql, &[Arg::Text(id)]).await
}

/// A webhook's most recent deliveries, newest first.
pub async fn deliveries_of_webhook(
    db: &D1Database,
    tenant_id: &str,
    webhook_id: &str,
    limit: u64,
) -> ApiResult<Vec<DeliveryRow>> {
    let sql = format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ?1 AND tenant_id = ?2 \
         ORDER BY created_at DESC, id DESC LIMIT ?3"
    );
    all(
        db,
        &sql,
        &[Arg::Text(webhook_id), Arg::Text(tenant_id), int(limit)?],
    )
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct AttemptRow {
    pub delivery_id: String,
    pub attempt: u64,
    pub started_at: u64,
    pub duration_ms: u64,
    pub http_status: Option<u16>,
    pub outcome: String,
    pub error: Option<String>,
}

/// Attempts of these deliveries, in order.
pub async fn attempts_of(db: &D1Database, delivery_ids: &[String]) -> ApiResult<Vec<AttemptRow>> {
    let mut out = Vec::new();
    for chunk in delivery_ids.chunks(D1_BOUND_PARAMS_MAX) {
        let sql = format!(
            "SELECT delivery_id, attempt, started_at, duration_ms, http_status, outcome, error \
             FROM webhook_attempts WHERE delivery_id IN ({}) ORDER BY delivery_id, attempt",
            numbered(1, chunk.len())
        );
        let args: Vec<Arg<'_>> = chunk.iter().map(|t| Arg::Text(t)).collect();
        out.extend(all::<AttemptRow>(db, &sql, &args).await?);
    }
    Ok(out)
}

/// What one attempt ended with.
pub struct AttemptRecord<'a> {
    pub delivery_id: &'a str,
    pub webhook_id: &'a str,
    pub attempt: u64,
    pub started_at: u64,
    pub duration_ms: u64,
    pub http_status: Option<u16>,
    /// `succeeded`, `retry` or `failed`.
    pub outcome: &'a str,
    pub error: Option<&'a str>,
    /// The delivery's new status: `pending` (a retry is scheduled at
    /// `next_attempt_at`), `succeeded` or `failed`.
    pub status: &'a str,
    pub next_attempt_at: Option<u64>,
}

/// Records the attempt, moves the delivery on and stamps the webhook's
/// lastTriggeredAt, atomically.
pub async fn record_attempt(db: &D1Database, a: &AttemptRecord<'_>) -> ApiResult<()> {
    let done = a.status != STATUS_PENDING;
    let completed_at = if done {
        int(a.started_at.saturating_add(a.duration_ms))?
    } else {
        Arg::Null
    };
    let http = a.http_status.map_or(Arg::Null, |s| Arg::Int(i64::from(s)));
    batch(
        db,
        vec![
            stmt(
                db,
                "INSERT OR REPLACE INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, \
                 http_status, outcome, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &[
                    Arg::Text(a.delivery_id),
                    int(a.attempt)?,
                    int(a.started_at)?,
                    int(a.duration_ms)?,
                    a.http_status.map_or(Arg::Null, |s| Arg::Int(i64::from(s))),
                    Arg::Text(a.outcome),
                    a.error.map_or(Arg::Null, Arg::Text),
                ],
            )?,
            // Only the attempt that owns the delivery moves it on.
            stmt(
                db,
                "UPDATE webhook_deliveries SET status = ?2, next_attempt_at = ?3, last_http_status = ?4, \
                 last_error = ?5, completed_at = ?6 WHERE id = ?1 AND status = 'delivering'",
                &[
                    Arg::Text(a.delivery_id),
                    Arg::Text(a.status),
                    a.next_attempt_at.map_or(Ok(Arg::Null), int)?,
                    http,
                    a.error.map_or(Arg::Null, Arg::Text),
                    completed_at,
                ],
            )?,
            stmt(
                db,
                "UPDATE webhooks SET last_triggered_at = MAX(COALESCE(last_triggered_at, 0), ?2) \
                 WHERE id = ?1",
                &[Arg::Text(a.webhook_id), int(a.started_at)?],
            )?,
        ],
    )
    .await?;
    Ok(())
}

/// Ends a delivery without an attempt (its webhook was disabled or deleted).
pub async fn cancel(db: &D1Database, id: &str, reason: &str, now_ms: u64) -> ApiResult<()> {
    run(
        db,
        "UPDATE webhook_deliveries SET status = 'canceled', next_attempt_at = NULL, last_error = ?2, \
         completed_at = ?3 WHERE id = ?1 AND status IN ('pending', 'delivering')",
        &[Arg::Text(id), Arg::Text(reason), int(now_ms)?],
    )
    .await?;
    Ok(())
}

#[derive(Debug, Deserialize)]
pub struct DueRow {
    pub id: String,
}

/// Deliveries whose next attempt (or expired lease) is due, oldest first.
pub async fn due(db: &D1Database, now_ms: u64, limit: u64) -> ApiResult<Vec<DueRow>> {
    all(
        db,
        "SELECT id FROM webhook_deliveries WHERE status IN ('pending', 'delivering') \
         AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2",
        &[int(now_ms)?, int(limit)?],
    )
    .await
}

// ---------------------------------------------------------------- ledger events

#[derive(Debug, Clone, Deserialize)]
pub struct EventRow {
    pub id: String,
    pub tenant_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub payload: String,
    pub created_at: u64,
}

/// Events not yet moved to deliveries, oldest first.
pub async fn pending_events(ledger: &D1Database, limit: u64) -> ApiResult<Vec<EventRow>> {
    all(
        ledger,
        "SELECT id, tenant_id, type, payload, created_at FROM events WHERE dispatched_at IS NULL \
         ORDER BY created_at, id LIMIT ?1",
        &[int(limit)?],
    )
    .await
}

pub fn mark_dispatched(
    ledger: &D1Database,
    ids: &[String],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(D1_BOUND_PARAMS_MAX - 1) {
        let sql = format!(
            "UPDATE events SET dispatched_at = ?1 WHERE dispatched_at IS NULL AND id IN ({})",
            numbered(2, chunk.len())
        );
        let mut args = vec![int(now_ms)?];
        args.extend(chunk.iter().map(|i| Arg::Text(i)));
        out.push(stmt(ledger, &sql, &args)?);
    }
    Ok(out)
}

/// Adds an event once (its id is deterministic).
pub async fn insert_event_once(
    ledger: &D1Database,
    id: &str,
    tenant_id: &str,
    kind: &str,
    payload: &str,
    now_ms: u64,
) -> ApiResult<()> {
    run(
        ledger,
        "INSERT OR IGNORE INTO events (id, tenant_id, type, payload, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        &[
            Arg::Text(id),
            Arg::Text(tenant_id),
            Arg::Text(kind),
            Arg::Text(payload),
            int(now_ms)?,
        ],
    )
    .await?;
    Ok(())
}

/// A submission with how many of its deltas are verified.
#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionProgress {
    pub id: String,
    pub tenant_id: String,
    pub kind: String,
    pub items_root: String,
    pub item_count: u64,
    pub received_at: u64,
    pub verified: u64,
    pub verified_at: Option<u64>,
}

/// The tenant's submissions with this items root, with their progress.
pub async fn submission_progress(
    ledger: &D1Database,
    tenant_id: &str,
    items_root: &str,
) -> ApiResult<Vec<SubmissionProgress>> {
    all(
        ledger,
        "SELECT s.id, s.tenant_id, s.kind, s.items_root, s.item_count, s.received_at, \
         SUM(CASE WHEN d.status = 'VERIFIED' THEN 1 ELSE 0 END) AS verified, \
         MAX(d.verified_at) AS verified_at \
         FROM submissions s JOIN deltas d ON d.submission_id = s.id \
         WHERE s.tenant_id = ?1 AND s.items_root = ?2 GROUP BY s.id",
        &[Arg::Text(tenant_id), Arg::Text(items_root)],
    )
    .await
}
