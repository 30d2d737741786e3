//! Webhooks, deliveries and attempts (control database). The ledger
//! databases' event outbox the dispatcher reads is `store::events`.

use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{
    args, batch, batch_rows, bind_text, changes, chunked, int, opt_text, queries, row, Arg,
    ListSql, Query, Statements,
};
use crate::error::ApiResult;
use crate::ids::{DeliveryId, EventId, TenantId, WebhookId};

row! {
    $ select_webhooks from "webhooks";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct WebhookRow {
        id: WebhookId, tenant_id: TenantId, url: String,
        /// JSON array of event names.
        events: String,
        description: String, secret_sealed: String, active: i64, created_at: u64,
        updated_at: u64, last_triggered_at: Option<u64>,
        /// The secret before the latest rotation, sealed, while it still
        /// signs (until `previous_secret_expires_at`).
        previous_secret_sealed: Option<String>, previous_secret_expires_at: Option<u64>,
        /// The generation of the endpoint's signing key (issue 40: 1 at
        /// creation, one more per rotation); the previous generation signs
        /// beside it while the previous secret does.
        key_generation: u64,
    }
}
macro_rules! select_deliveries {
    ($tail:literal) => {
        concat!(
            "SELECT id, webhook_id, tenant_id, env, event_id, event_type, url, payload, \
             event_created_at, status, attempts, next_attempt_at, last_http_status, last_error, \
             created_at, completed_at, data_purged, purged_at FROM webhook_deliveries ",
            $tail
        )
    };
}

/// Inserts the webhook only while the tenant holds fewer than `?8`: the
/// count and the insert are one statement, so concurrent creations never
/// pass the limit together.
const INSERT_WEBHOOK_WITHIN: &str =
    "INSERT INTO webhooks (id, tenant_id, url, events, description, secret_sealed, active, \
     created_at, updated_at, last_triggered_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7, NULL \
     WHERE (SELECT COUNT(*) FROM webhooks WHERE tenant_id = ?2) < ?8";
const SELECT_OF_TENANT: &str = select_webhooks!("WHERE id = ?1 AND tenant_id = ?2");
const SELECT_BY_ID: &str = select_webhooks!("WHERE id = ?1");
const SELECT_LIST: &str = select_webhooks!("WHERE tenant_id = ?1 ORDER BY created_at, id");
const TOGGLE: &str =
    "UPDATE webhooks SET active = 1 - active, updated_at = ?3 WHERE id = ?1 AND tenant_id = ?2";
/// A new secret and the next signing key; the current ones keep signing
/// until `?5` (an overlap of 0 drops them at once: `?5` is then NULL).
const ROTATE: &str = "UPDATE webhooks SET previous_secret_sealed = CASE WHEN ?5 IS NULL THEN NULL \
     ELSE secret_sealed END, previous_secret_expires_at = ?5, secret_sealed = ?3, updated_at = ?4, \
     key_generation = key_generation + 1 WHERE id = ?1 AND tenant_id = ?2";
const DELETE_WEBHOOK: &str = "DELETE FROM webhooks WHERE id = ?1 AND tenant_id = ?2";
const CANCEL_OF_WEBHOOK: &str =
    "UPDATE webhook_deliveries SET status = 'canceled', completed_at = ?3, \
     next_attempt_at = NULL, last_error = 'webhook deleted' \
     WHERE webhook_id = ?1 AND tenant_id = ?2 AND status IN ('pending', 'delivering')";
/// The active webhooks of the tenants `?1` (a JSON array).
const SELECT_ACTIVE_FOR_TENANTS: &str =
    select_webhooks!("WHERE active = 1 AND tenant_id IN (SELECT value FROM json_each(?1))");
/// New deliveries (`?1`: `[id, webhook_id, tenant_id, env, event_id,
/// event_type, url, payload, event_created_at]` each), pending and due at
/// `?2` (issue 27: one statement per JSON set).
const INSERT_DELIVERY_SET: &str =
    "INSERT OR IGNORE INTO webhook_deliveries (id, webhook_id, tenant_id, env, event_id, \
     event_type, url, payload, event_created_at, status, attempts, next_attempt_at, created_at) \
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
     json_extract(value, '$[5]'), json_extract(value, '$[6]'), json_extract(value, '$[7]'), \
     json_extract(value, '$[8]'), 'pending', 0, ?2, ?2 FROM json_each(?1)";
/// A claim: only while attempts remain (`?4` is the cap), so a delivery
/// whose attempts keep ending before their record cannot be tried forever.
const CLAIM: &str =
    "UPDATE webhook_deliveries SET status = 'delivering', attempts = attempts + 1, \
     next_attempt_at = ?3 \
     WHERE id = ?1 AND status IN ('pending', 'delivering') AND next_attempt_at <= ?2 \
     AND attempts < ?4";
/// Before a claim: an attempt whose lease expired while `delivering` ended
/// without a record (the Worker died, or it failed before recording). It
/// gets one now, so every attempt shows in the deliveries list.
const NOTE_LOST: &str =
    "INSERT OR IGNORE INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, \
     http_status, outcome, error) \
     SELECT id, attempts, MAX(0, next_attempt_at - ?3), 0, NULL, \
     CASE WHEN attempts >= ?4 THEN 'failed' ELSE 'retry' END, \
     'the attempt ended before it was recorded (lease expired)' \
     FROM webhook_deliveries WHERE id = ?1 AND status = 'delivering' AND next_attempt_at <= ?2";
/// After a claim that found no attempt left: the final state, `failed`.
const GIVE_UP: &str =
    "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ?3, \
     completed_at = ?2 WHERE id = ?1 AND status IN ('pending', 'delivering') \
     AND next_attempt_at <= ?2 AND attempts >= ?4";
const SELECT_DELIVERY: &str = select_deliveries!("WHERE id = ?1");
const SELECT_DELIVERIES_OF_WEBHOOK: &str = select_deliveries!(
    "WHERE webhook_id = ?1 AND tenant_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?3"
);
const SELECT_ATTEMPTS_OF: ListSql = ListSql {
    sql: "SELECT delivery_id, attempt, started_at, duration_ms, http_status, outcome, error \
          FROM webhook_attempts WHERE delivery_id IN ({list}) ORDER BY delivery_id, attempt",
    cols: 1,
};
const INSERT_ATTEMPT: &str =
    "INSERT OR REPLACE INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, \
     http_status, outcome, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
/// Only the attempt that owns the delivery moves it on.
const FINISH_ATTEMPT: &str =
    "UPDATE webhook_deliveries SET status = ?2, next_attempt_at = ?3, last_http_status = ?4, \
     last_error = ?5, completed_at = ?6 WHERE id = ?1 AND status = 'delivering'";
const STAMP_TRIGGERED: &str =
    "UPDATE webhooks SET last_triggered_at = MAX(COALESCE(last_triggered_at, 0), ?2) WHERE id = ?1";
const CANCEL: &str =
    "UPDATE webhook_deliveries SET status = 'canceled', next_attempt_at = NULL, last_error = ?2, \
     completed_at = ?3 WHERE id = ?1 AND status IN ('pending', 'delivering')";
const SELECT_DUE: &str =
    "SELECT id FROM webhook_deliveries WHERE status IN ('pending', 'delivering') \
     AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2";

// ---------------------------------------------------------------- webhooks

impl WebhookRow {
    /// The subscribed event names (a row always holds a JSON array).
    pub fn event_names(&self) -> Vec<String> {
        serde_json::from_str(&self.events).unwrap_or_default()
    }

    pub fn subscribes_to(&self, event_type: &str) -> bool {
        self.event_names().iter().any(|e| e == event_type)
    }
}

row! {
    pub struct NewWebhook<'a> {
        id: &'a WebhookId, tenant_id: &'a TenantId, url: &'a str, events: &'a str, description: &'a str,
        secret_sealed: &'a str,
    }
}

queries! {
    /// Inserts the webhook if the tenant holds fewer than `max`; returns
    /// whether it did.
    pub fn insert_within(w: &NewWebhook<'_>, now_ms: u64, max: u64) -> bool = changed(
        INSERT_WEBHOOK_WITHIN; w.id, w.tenant_id, w.url, w.events, w.description, w.secret_sealed, now_ms, max
    );
}

queries! {
    pub fn of_tenant(tenant_id: &TenantId, id: &WebhookId) -> Option<WebhookRow> = first(SELECT_OF_TENANT; id, tenant_id);
    pub fn by_id(id: &WebhookId) -> Option<WebhookRow> = first(SELECT_BY_ID);
    /// A tenant's webhooks, oldest first.
    pub fn list(tenant_id: &TenantId) -> Vec<WebhookRow> = all(SELECT_LIST);
    /// Seals in a new secret and moves to the next key generation, keeping
    /// the current ones as the previous until `previous_until` (`None`: not
    /// at all); returns rows changed.
    pub fn rotate(tenant_id: &TenantId, id: &WebhookId, sealed: &str, now_ms: u64, previous_until: Option<u64>) -> u64
        = run(ROTATE; id, tenant_id, sealed, now_ms, previous_until);
    /// Flips `active`; returns rows changed (0: no such webhook of this tenant).
    pub fn toggle(tenant_id: &TenantId, id: &WebhookId, now_ms: u64) -> u64 = run(TOGGLE; id, tenant_id, now_ms);
}

/// Deletes the webhook (and with it its sealed secret) and cancels its
/// deliveries still waiting, atomically. Returns webhooks deleted.
pub async fn delete(
    db: &D1Database,
    tenant_id: &TenantId,
    id: &WebhookId,
    now_ms: u64,
) -> ApiResult<u64> {
    let of_tenant = args![id, tenant_id];
    let cancel = args![id, tenant_id, now_ms];
    let statements = vec![
        Query::new(DELETE_WEBHOOK, of_tenant),
        Query::new(CANCEL_OF_WEBHOOK, cancel),
    ];
    let results = batch(db, statements).await?;
    results.first().map_or(Ok(0), changes)
}

/// Active webhooks of these tenants (the dispatcher filters by event).
pub async fn active_for_tenants(
    db: &D1Database,
    tenant_ids: &[TenantId],
) -> ApiResult<Vec<WebhookRow>> {
    let set = serde_json::to_string(tenant_ids)?;
    super::all(
        db,
        Query::new(SELECT_ACTIVE_FOR_TENANTS, args![set.as_str()]),
    )
    .await
}

// ---------------------------------------------------------------- deliveries

super::text_enum! {
    /// A delivery's `status` (the SQL constants compare with the same words).
    pub enum DeliveryStatus {
        Pending = "pending",
        Delivering = "delivering",
        Succeeded = "succeeded",
        Failed = "failed",
        Canceled = "canceled",
    }
}

super::text_enum! {
    /// What one attempt ended with (`webhook_delivery_attempts.outcome`).
    pub enum AttemptOutcome {
        Succeeded = "succeeded",
        Retry = "retry",
        Failed = "failed",
    }
}

/// What a delivery carries of its event and webhook, as written and read.
#[derive(Debug, Clone, Deserialize)]
pub struct DeliveryOf {
    pub id: DeliveryId,
    pub webhook_id: WebhookId,
    pub tenant_id: TenantId,
    pub env: Option<Env>,
    pub event_id: EventId,
    pub event_type: String,
    pub event_created_at: u64,
}

/// A delivery to insert: its event, and where and what to POST.
pub struct NewDelivery {
    pub of: DeliveryOf,
    pub url: String,
    pub payload: String,
}

/// INSERT OR IGNORE: a delivery id is derived from (event, webhook), so a
/// second dispatch of the same event adds nothing.
pub fn insert_deliveries<'a>(deliveries: &[NewDelivery], now_ms: u64) -> Statements<'a> {
    type Row<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Option<&'a str>,
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        u64,
    );
    let rows: Vec<Row<'_>> = deliveries
        .iter()
        .map(|d| {
            let of = &d.of;
            (
                of.id.as_str(),
                of.webhook_id.as_str(),
                of.tenant_id.as_str(),
                of.env.map(Env::as_str),
                of.event_id.as_str(),
                of.event_type.as_str(),
                d.url.as_str(),
                d.payload.as_str(),
                of.event_created_at,
            )
        })
        .collect();
    super::over_json(INSERT_DELIVERY_SET, &rows, &args![now_ms])
}

/// Takes the delivery for one attempt when it is due: pending and due, or
/// delivering with an expired lease. Returns whether this caller owns it;
/// at most one caller does at a time.
/// What a claim came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This caller owns the attempt.
    Claimed,
    /// Not due, or owned by a live attempt, or done.
    NotDue,
    /// Every attempt is spent: the delivery is now `failed`.
    GaveUp,
}

/// Claims the delivery for one attempt, atomically with its bookkeeping:
/// an expired attempt without a record is noted, and a delivery with no
/// attempt left is failed instead (`attempts_max`).
pub async fn claim(
    db: &D1Database,
    id: &DeliveryId,
    now_ms: u64,
    lease_ms: u64,
    attempts_max: u64,
) -> ApiResult<Claim> {
    let note = args![id, now_ms, lease_ms, attempts_max];
    let claim = args![id, now_ms, now_ms.saturating_add(lease_ms), attempts_max];
    let reason = format!("gave up after {attempts_max} attempts");
    let give_up = args![id, now_ms, reason.as_str(), attempts_max];
    let results = batch(
        db,
        vec![
            Query::new(NOTE_LOST, note),
            Query::new(CLAIM, claim),
            Query::new(GIVE_UP, give_up),
        ],
    )
    .await?;
    let changed = |i: usize| -> ApiResult<bool> {
        Ok(match results.get(i) {
            Some(r) => changes(r)? > 0,
            None => false,
        })
    };
    Ok(if changed(1)? {
        Claim::Claimed
    } else if changed(2)? {
        Claim::GaveUp
    } else {
        Claim::NotDue
    })
}

row! {
    #[derive(Debug, Clone, Deserialize)]
    pub struct DeliveryRow {
        #[serde(flatten)]
        of: DeliveryOf,
        /// NULL once purged.
        url: Option<String>,
        payload: Option<String>, status: DeliveryStatus, attempts: u64, next_attempt_at: Option<u64>,
        last_http_status: Option<u16>, last_error: Option<String>, created_at: u64,
        completed_at: Option<u64>, data_purged: u64, purged_at: Option<u64>,
    }
}

queries! {
    pub fn delivery(id: &DeliveryId) -> Option<DeliveryRow> = first(SELECT_DELIVERY);
    /// A webhook's most recent deliveries, newest first.
    pub fn deliveries_of_webhook(tenant_id: &TenantId, webhook_id: &WebhookId, limit: u64) -> Vec<DeliveryRow>
        = all(SELECT_DELIVERIES_OF_WEBHOOK; webhook_id, tenant_id, limit);
}

row! {
    #[derive(Debug, Clone, Deserialize)]
    pub struct AttemptRow {
        delivery_id: DeliveryId, attempt: u64, started_at: u64, duration_ms: u64,
        http_status: Option<u16>, outcome: AttemptOutcome, error: Option<String>,
    }
}

/// Attempts of these deliveries, in order.
pub async fn attempts_of(
    db: &D1Database,
    delivery_ids: &[DeliveryId],
) -> ApiResult<Vec<AttemptRow>> {
    let statements = chunked(&SELECT_ATTEMPTS_OF, &[], delivery_ids, bind_text)?;
    batch_rows(db, statements).await
}

row! {
    /// What one attempt ended with.
    pub struct AttemptRecord<'a> {
        delivery_id: &'a DeliveryId, webhook_id: &'a WebhookId, attempt: u64, started_at: u64,
        duration_ms: u64, http_status: Option<u16>,
        outcome: AttemptOutcome,
        error: Option<&'a str>,
        /// The delivery's new status: `pending` (a retry is scheduled at
        /// `next_attempt_at`), `succeeded` or `failed`.
        status: DeliveryStatus,
        next_attempt_at: Option<u64>,
    }
}

/// Records the attempt, moves the delivery on and stamps the webhook's
/// lastTriggeredAt, atomically.
pub async fn record_attempt(db: &D1Database, a: &AttemptRecord<'_>) -> ApiResult<()> {
    let done = a.status != DeliveryStatus::Pending;
    let completed_at = if done {
        int(a.started_at.saturating_add(a.duration_ms))?
    } else {
        Arg::Null
    };
    let http = a.http_status.map_or(Arg::Null, |s| Arg::Int(i64::from(s)));
    let error = opt_text(a.error);
    let attempt = args![
        a.delivery_id,
        a.attempt,
        a.started_at,
        a.duration_ms,
        http.clone(),
        a.outcome,
        error.clone()
    ];
    let finish = args![
        a.delivery_id,
        a.status,
        a.next_attempt_at,
        http,
        error,
        completed_at
    ];
    let stamp = args![a.webhook_id, a.started_at];
    let statements = vec![
        Query::new(INSERT_ATTEMPT, attempt),
        Query::new(FINISH_ATTEMPT, finish),
        Query::new(STAMP_TRIGGERED, stamp),
    ];
    batch(db, statements).await?;
    Ok(())
}

queries! {
    /// Ends a delivery without an attempt (its webhook was disabled or deleted).
    pub fn cancel(id: &DeliveryId, reason: &str, now_ms: u64) -> () = exec(CANCEL);
}

#[derive(Debug, Deserialize)]
pub struct DueRow {
    pub id: DeliveryId,
}

queries! {
    /// Deliveries whose next attempt (or expired lease) is due, oldest first.
    pub fn due(now_ms: u64, limit: u64) -> Vec<DueRow> = all(SELECT_DUE);
}

// ---------------------------------------------------------------- the event log (issue 30)

const SELECT_DELIVERIES_OF_EVENTS: ListSql = ListSql {
    sql: select_deliveries!(
        "WHERE tenant_id = ?1 AND event_id IN ({list}) ORDER BY created_at, id"
    ),
    cols: 1,
};
/// Reopens a delivery for one attempt now (a resend): any state but a
/// running attempt, while its payload is kept.
const REOPEN: &str =
    "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?3, completed_at = NULL \
     WHERE id = ?1 AND tenant_id = ?2 AND status <> 'delivering' AND payload IS NOT NULL";
const SELECT_DELIVERY_OF_TENANT: &str = select_deliveries!("WHERE id = ?1 AND tenant_id = ?2");

/// The tenant's deliveries of these events (webhook_deliveries_by_event).
///
/// # Errors
/// D1 errors.
pub async fn deliveries_of_events(
    db: &D1Database,
    tenant_id: &TenantId,
    event_ids: &[EventId],
) -> ApiResult<Vec<DeliveryRow>> {
    let statements = chunked(
        &SELECT_DELIVERIES_OF_EVENTS,
        &args![tenant_id],
        event_ids,
        bind_text,
    )?;
    batch_rows(db, statements).await
}

queries! {
    /// One of the tenant's deliveries.
    pub fn delivery_of_tenant(id: &DeliveryId, tenant_id: &TenantId) -> Option<DeliveryRow> = first(SELECT_DELIVERY_OF_TENANT);
    /// Makes the delivery due now for a resend; whether it could.
    pub fn reopen(id: &DeliveryId, tenant_id: &TenantId, now_ms: u64) -> bool = changed(REOPEN);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_deliverys_environment_reads_as_env_or_none_for_a_test_delivery() {
        let of = |env: &str| -> DeliveryOf {
            serde_json::from_str(&format!(
                r#"{{"id":"d","webhook_id":"w","tenant_id":"t","env":{env},"event_id":"e","event_type":"test","event_created_at":1}}"#
            ))
            .unwrap()
        };
        assert_eq!(of(r#""production""#).env, Some(Env::Production));
        assert_eq!(of(r#""sandbox""#).env, Some(Env::Sandbox));
        assert_eq!(of("null").env, None);
    }
}
