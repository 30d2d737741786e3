//! One delivery attempt: claim the delivery, POST the signed body, record
//! the attempt, and schedule the next one when the failure is retryable.
//!
//! Invariant: a delivery that got a 2xx is never sent again. Only the
//! caller whose conditional `claim` succeeded sends; the claim moves the
//! delivery to `delivering` with a lease, and only that attempt's record
//! moves it on. A second doorbell for the same delivery finds nothing to
//! claim. (If the Worker dies between the receiver's 2xx and the record,
//! the lease expires and the delivery is sent again: receivers drop such a
//! replay by its delivery id, see docs/webhooks.md.)

use std::time::Duration;

use bvs_core::types::Env;
use futures_util::future::{select, Either};
use serde::Serialize;
use serde_json::value::RawValue;
use worker::{
    AbortController, Delay, Fetch, Headers, Method, Request, RequestInit, RequestRedirect,
};

use super::signing::{
    endpoint_key_root, signature_header, signed_content, standard_signatures, EndpointKey,
    HEADER_DELIVERY_ID, HEADER_EVENT, HEADER_SIGNATURE, HEADER_TIMESTAMP, HEADER_WEBHOOK_ID,
    HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP,
};
use super::url_safety;
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::{DeliveryId, EventId};
use crate::jobs::{Job, QUEUE_WEBHOOKS};
use crate::secret;
use crate::store::webhooks::{self as store, AttemptOutcome, AttemptRecord, Claim, DeliveryStatus};
use crate::views::iso;

/// How long one attempt waits for the receiver's response.
pub const ATTEMPT_TIMEOUT_MS: u64 = 10_000;
/// How long a claimed attempt owns its delivery: longer than the time-out
/// plus recording, so a live attempt is never overtaken; a dead one is
/// retried after it.
pub const ATTEMPT_LEASE_MS: u64 = 60_000;
/// Waits before retry n (after attempt n failed), in seconds: exponential
/// from 1 minute, capped at 10 hours, 12 attempts in all over about 2.8
/// days (docs/webhooks.md). Stripe's horizon is 3 days.
pub const RETRY_DELAYS_SECS: &[u64] = &[
    60, 300, 1_800, 7_200, 18_000, 36_000, 36_000, 36_000, 36_000, 36_000, 36_000,
];
/// Attempts in all: the first one plus one per retry delay.
pub const ATTEMPTS_MAX: u64 = RETRY_DELAYS_SECS.len() as u64 + 1;
/// DEV_MODE only: a webhook url holding this fails every attempt after its
/// claim and before its record (the capped-attempts test).
pub const DEV_FAULT_UNRECORDED: &str = "bvs-fault=unrecorded";

/// The claim lease; in DEV_MODE `WEBHOOK_LEASE_MS` (at least 1 s) may
/// shorten it so a test sees expired leases within seconds.
fn lease_ms(app: &App) -> u64 {
    if !app.dev_mode() {
        return ATTEMPT_LEASE_MS;
    }
    app.var("WEBHOOK_LEASE_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms >= 1000)
        .unwrap_or(ATTEMPT_LEASE_MS)
}

/// In DEV_MODE the schedule runs this many times faster (1 minute becomes
/// 1 second), unless `WEBHOOK_RETRY_DELAY_DIVISOR` says otherwise, so a
/// local test sees a retry within seconds.
pub const DEV_RETRY_DELAY_DIVISOR: u64 = 60;
/// Longest delay a queue message accepts (Cloudflare Queues: 12 hours).
const QUEUE_DELAY_SECS_MAX: u64 = 43_200;
/// Characters of an error message kept per attempt.
const ERROR_CHARS_MAX: usize = 300;

/// Scheduled deliveries retry; the dashboard's test event reports once; a
/// resend from the event log is one attempt now, after which a delivery
/// that was still on its schedule keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Scheduled,
    Test,
    Resend { keep_schedule: bool },
}

/// A resend is one more attempt whatever the delivery spent: its claim
/// allows up to this many in all (resends are limited per tenant by the
/// test-event rate, `endpoints::TEST_EVENTS_PER_TENANT`).
pub const RESEND_ATTEMPTS_MAX: u64 = 1_000;

#[expect(
    dead_code,
    reason = "the attempt outcome is recorded whole; the caller reads part of it"
)]
/// What an attempt came to.
#[derive(Debug, Clone)]
pub struct Report {
    /// Whether this call made an attempt (false: not due, or done already).
    pub attempted: bool,
    pub success: bool,
    /// The receiver's status; `None` when no response came back.
    pub http_status: Option<u16>,
    pub message: String,
}

impl Report {
    fn skipped(message: &str) -> Report {
        Report {
            attempted: false,
            success: false,
            http_status: None,
            message: message.to_string(),
        }
    }
}

/// The body receivers get. `data` is the stored event payload, byte for byte.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    id: &'a DeliveryId,
    event: &'a str,
    /// When this attempt was made (also in `X-Service-Timestamp`).
    timestamp: String,
    event_id: &'a EventId,
    created_at: String,
    environment: Option<&'a str>,
    data: &'a RawValue,
}

/// How a response (or its absence) is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Success,
    Retry,
    Fail,
}

fn verdict(http_status: Option<u16>) -> Verdict {
    match http_status {
        Some(s) if (200..300).contains(&s) => Verdict::Success,
        // Network error or time-out, rate limited, server error: try again.
        None => Verdict::Retry,
        Some(429) => Verdict::Retry,
        Some(s) if s >= 500 => Verdict::Retry,
        // Other 4xx, and 3xx (redirects are not followed): the receiver
        // refused this request; the same request will not fare better.
        Some(_) => Verdict::Fail,
    }
}

/// The wait after failed attempt `attempt` (1-based), or `None` when the
/// schedule is spent.
pub fn retry_delay_ms(attempt: u64, divisor: u64) -> Option<u64> {
    let i = usize::try_from(attempt.checked_sub(1)?).ok()?;
    RETRY_DELAYS_SECS
        .get(i)
        .map(|s| (s * 1000 / divisor.max(1)).max(1000))
}

fn divisor(app: &App) -> u64 {
    app.var("WEBHOOK_RETRY_DELAY_DIVISOR")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|d| *d > 0)
        .unwrap_or(if app.dev_mode() {
            DEV_RETRY_DELAY_DIVISOR
        } else {
            1
        })
}

/// Rings the delivery queue for `delivery_id`, `delay_ms` from now.
/// Failures are logged only: the sweeper re-queues due deliveries.
pub async fn ring(app: &App, delivery_id: &DeliveryId, delay_ms: u64) {
    let job = Job::Deliver {
        delivery_id: delivery_id.clone(),
    };
    let delay_secs = delay_ms.div_ceil(1000).min(QUEUE_DELAY_SECS_MAX);
    let sent = match app.env.queue(QUEUE_WEBHOOKS) {
        Ok(q) => {
            let message = worker::MessageBuilder::new(job)
                .delay_seconds(u32::try_from(delay_secs).unwrap_or(u32::MAX))
                .build();
            match crate::roundtrips::outbound().await {
                Ok(()) => q.send(message).await,
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("webhook doorbell for {delivery_id} not rung: {e}");
    }
}

/// Messages per queue batch send (Cloudflare Queues: at most 100).
const QUEUE_BATCH_MAX: usize = 100;

/// Rings the delivery queue for each of `ids`, due now, a hundred per send
/// so a large dispatch stays within the subrequest limit. Failures are
/// logged only: the sweeper re-queues due deliveries.
pub async fn ring_all(app: &App, ids: &[DeliveryId]) {
    let queue = match app.env.queue(QUEUE_WEBHOOKS) {
        Ok(q) => q,
        Err(e) => {
            worker::console_warn!("webhook doorbells not rung: {e}");
            return;
        }
    };
    for chunk in ids.chunks(QUEUE_BATCH_MAX) {
        let jobs: Vec<Job> = chunk
            .iter()
            .map(|id| Job::Deliver {
                delivery_id: id.clone(),
            })
            .collect();
        let sent = match crate::roundtrips::outbound().await {
            Ok(()) => queue.send_batch(jobs).await,
            Err(e) => Err(e),
        };
        if let Err(e) = sent {
            worker::console_warn!("{} webhook doorbells not rung: {e}", chunk.len());
        }
    }
}

/// Makes one attempt at the delivery if it is due and nobody else holds it.
///
/// # Errors
/// Internal error on storage failure; the delivery's lease then expires and
/// the sweeper tries again.
pub async fn attempt(app: &App, delivery_id: &DeliveryId, mode: Mode) -> ApiResult<Report> {
    let db = app.control_db()?;
    if let Some(skipped) = claim(app, &db, delivery_id, mode).await? {
        return Ok(skipped);
    }
    let row = store::delivery(&db, delivery_id)
        .await?
        .ok_or_else(|| ApiError::internal(format!("claimed delivery {delivery_id} vanished")))?;
    let Some(webhook) = store::by_id(&db, &row.of.webhook_id).await? else {
        store::cancel(&db, delivery_id, "webhook deleted", app.now_ms).await?;
        return Ok(Report::skipped("webhook deleted"));
    };
    if mode == Mode::Scheduled && webhook.active == 0 {
        store::cancel(&db, delivery_id, "webhook disabled", app.now_ms).await?;
        return Ok(Report::skipped("webhook disabled"));
    }
    let (Some(url), Some(payload)) = (row.url.as_deref(), row.payload.as_deref()) else {
        store::cancel(&db, delivery_id, "payload purged", app.now_ms).await?;
        return Ok(Report::skipped("payload purged"));
    };
    if app.dev_mode() && url.contains(DEV_FAULT_UNRECORDED) {
        // DEV_MODE fault injection: the attempt ends after its claim and
        // before its record, as if the Worker died there.
        return Err(ApiError::internal(
            "injected fault: the attempt ended before its record",
        ));
    }
    let secrets = live_secrets(app, &webhook)?;
    let keys = live_keys(app, &webhook)?;

    let started_at = crate::app::clock_ms();
    let body = body_of(&row, delivery_id, payload, started_at)?;
    let signatures = sign(&secrets, &keys, &row, &body, started_at)?;
    let sent = post(app, url, &body, &signatures, &row, started_at).await;
    let duration_ms = crate::app::clock_ms().saturating_sub(started_at);

    let (http_status, error) = match &sent {
        Ok(status) => (Some(*status), None),
        Err(e) => (None, Some(e.message.clone())),
    };
    let attempt_no = row.attempts;
    let (verdict, next_attempt_at) = schedule(app, mode, &sent, attempt_no, started_at);
    let (outcome, status) = stored(verdict);
    store::record_attempt(
        &db,
        &AttemptRecord {
            delivery_id,
            webhook_id: &webhook.id,
            attempt: attempt_no,
            started_at,
            duration_ms,
            http_status,
            outcome,
            error: error.as_deref(),
            status,
            next_attempt_at,
        },
    )
    .await?;
    if let Some(at) = next_attempt_at {
        ring(app, delivery_id, at.saturating_sub(app.now_ms)).await;
    }
    let message = message(&sent, verdict);
    Ok(Report {
        attempted: true,
        success: verdict == Verdict::Success,
        http_status,
        message,
    })
}

/// Claims the delivery for one attempt (within the mode's attempts):
/// `Some(report)` when it is not due, delivered or spent.
async fn claim(
    app: &App,
    db: &worker::D1Database,
    delivery_id: &DeliveryId,
    mode: Mode,
) -> ApiResult<Option<Report>> {
    let cap = match mode {
        Mode::Resend { .. } => RESEND_ATTEMPTS_MAX,
        Mode::Scheduled | Mode::Test => ATTEMPTS_MAX,
    };
    Ok(
        match store::claim(db, delivery_id, app.now_ms, lease_ms(app), cap).await? {
            Claim::Claimed => None,
            Claim::NotDue => Some(Report::skipped("not due, or delivered already")),
            Claim::GaveUp => Some(Report::skipped("every attempt is spent: failed")),
        },
    )
}

/// An attempt's stored outcome and the delivery's status after it.
fn stored(verdict: Verdict) -> (AttemptOutcome, DeliveryStatus) {
    match verdict {
        Verdict::Success => (AttemptOutcome::Succeeded, DeliveryStatus::Succeeded),
        Verdict::Retry => (AttemptOutcome::Retry, DeliveryStatus::Pending),
        Verdict::Fail => (AttemptOutcome::Failed, DeliveryStatus::Failed),
    }
}

/// The JSON body of an attempt at `started_at` (the stored payload as its `data`).
fn body_of(
    row: &store::DeliveryRow,
    delivery_id: &DeliveryId,
    payload: &str,
    started_at: u64,
) -> ApiResult<String> {
    let data = RawValue::from_string(payload.to_string())
        .map_err(|e| ApiError::internal(format!("stored payload of {delivery_id}: {e}")))?;
    Ok(serde_json::to_string(&Body {
        id: &row.of.id,
        event: &row.of.event_type,
        timestamp: iso(started_at),
        event_id: &row.of.event_id,
        created_at: iso(row.of.event_created_at),
        environment: row.of.env.map(Env::as_str),
        data: &data,
    })?)
}

/// The attempt's verdict and, for a retry, when the next attempt is due; a
/// retry past the mode's last attempt fails.
fn schedule(
    app: &App,
    mode: Mode,
    sent: &Result<u16, SendError>,
    attempt_no: u64,
    started_at: u64,
) -> (Verdict, Option<u64>) {
    let http_status = sent.as_ref().ok().copied();
    let mut verdict = match sent {
        // A refused url or an unbuildable request will not get better.
        Err(e) if !e.retryable => Verdict::Fail,
        _ => verdict(http_status),
    };
    let mut next_attempt_at = None;
    if verdict == Verdict::Retry {
        let next = match mode {
            Mode::Scheduled
            | Mode::Resend {
                keep_schedule: true,
            } if attempt_no < ATTEMPTS_MAX => retry_delay_ms(attempt_no, divisor(app)),
            _ => None,
        };
        match next {
            Some(delay) => next_attempt_at = Some(app.now_ms.max(started_at) + delay),
            None => verdict = Verdict::Fail,
        }
    }
    (verdict, next_attempt_at)
}

/// What the attempt's report says.
fn message(sent: &Result<u16, SendError>, verdict: Verdict) -> String {
    match (sent, verdict) {
        (Ok(s), Verdict::Success) => format!("Delivered: the receiver answered {s}"),
        (Ok(s), Verdict::Retry) => format!("The receiver answered {s}; will retry"),
        (Ok(s), Verdict::Fail) => format!("The receiver answered {s}; not retried"),
        (Err(e), Verdict::Retry) => format!("{}; will retry", e.message),
        (Err(e), _) => e.message.clone(),
    }
}

/// The webhook's secrets that sign now: the current one, then the previous
/// one while a rotation's overlap lasts.
fn live_secrets(app: &App, webhook: &store::WebhookRow) -> ApiResult<Vec<String>> {
    let key = super::secret_key(app)?;
    let open = |sealed: &str| {
        secret::open(&key, sealed)
            .ok()
            .flatten()
            .and_then(|b| String::from_utf8(b).ok())
    };
    let current = open(&webhook.secret_sealed)
        .ok_or_else(|| ApiError::internal(format!("webhook {} secret unreadable", webhook.id)))?;
    let mut secrets = vec![current];
    if let (Some(sealed), Some(until)) = (
        webhook.previous_secret_sealed.as_deref(),
        webhook.previous_secret_expires_at,
    ) {
        if until > app.now_ms {
            secrets.extend(open(sealed));
        }
    }
    Ok(secrets)
}

/// The webhook's signing keys that sign now (issue 40): its current
/// generation, then the previous one while a rotation's overlap lasts
/// (as long as the previous secret signs).
///
/// # Errors
/// Internal error when the production log's seed is missing.
pub fn live_keys(app: &App, row: &store::WebhookRow) -> ApiResult<Vec<EndpointKey>> {
    let root = endpoint_key_root(app)?;
    let id = row.id.as_str();
    let mut keys = vec![EndpointKey::derive(&root, id, row.key_generation)?];
    if let Some(previous) = previous_generation(app, row) {
        keys.push(EndpointKey::derive(&root, id, previous)?);
    }
    Ok(keys)
}

/// The generation before the current one, while it still signs.
fn previous_generation(app: &App, row: &store::WebhookRow) -> Option<u64> {
    let until = row.previous_secret_expires_at?;
    (row.key_generation > 1 && until > app.now_ms).then(|| row.key_generation - 1)
}

/// The signature headers' values of one attempt.
struct Signatures {
    /// Legacy `X-Service-Signature`: the current secret only.
    legacy: String,
    /// `webhook-signature`: `v1,` per live secret, then `v1a,` per live key.
    standard: String,
}

/// Signs the attempt's body: legacy with the current secret, Standard
/// Webhooks over `{id}.{timestamp}.{body}` with every live secret and every
/// live key of the webhook (issue 40: its own, never one another endpoint
/// shares).
fn sign(
    secrets: &[String],
    keys: &[EndpointKey],
    row: &store::DeliveryRow,
    body: &str,
    started_at: u64,
) -> ApiResult<Signatures> {
    let current = secrets
        .first()
        .ok_or_else(|| ApiError::internal("a webhook without a secret"))?;
    let content = signed_content(row.of.id.as_str(), started_at / 1000, body.as_bytes());
    let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    Ok(Signatures {
        legacy: signature_header(current, body.as_bytes())?,
        standard: standard_signatures(&refs, keys, &content)?,
    })
}

/// Why no HTTP response came back.
struct SendError {
    /// Network errors and time-outs are; a refused url is not.
    retryable: bool,
    message: String,
}

impl SendError {
    fn permanent(message: String) -> SendError {
        SendError {
            retryable: false,
            message,
        }
    }
}

/// POSTs the body; `Ok(status)` for any HTTP response, `Err` for a refused
/// url, a network error or a time-out.
async fn post(
    app: &App,
    url: &str,
    body: &str,
    signatures: &Signatures,
    row: &store::DeliveryRow,
    started_at: u64,
) -> Result<u16, SendError> {
    // The url was checked at creation; check again, in case the rules or
    // DEV_MODE changed since.
    url_safety::check(url, app.dev_mode())
        .map_err(|e| SendError::permanent(format!("url refused: it {e}")))?;
    let headers = Headers::new();
    let set = |k: &str, v: &str| {
        headers
            .set(k, v)
            .map_err(|e| SendError::permanent(format!("header {k}: {e}")))
    };
    set("content-type", "application/json")?;
    set("user-agent", "bvs-webhooks/1")?;
    let timestamp = (started_at / 1000).to_string();
    set(HEADER_WEBHOOK_ID, row.of.id.as_str())?;
    set(HEADER_WEBHOOK_TIMESTAMP, &timestamp)?;
    set(HEADER_WEBHOOK_SIGNATURE, &signatures.standard)?;
    set(HEADER_SIGNATURE, &signatures.legacy)?;
    set(HEADER_DELIVERY_ID, row.of.id.as_str())?;
    set(HEADER_TIMESTAMP, &timestamp)?;
    set(HEADER_EVENT, &row.of.event_type)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual)
        .with_body(Some(body.into()));
    let request = Request::new_with_init(url, &init)
        .map_err(|e| SendError::permanent(format!("request not built: {e}")))?;
    let controller = AbortController::default();
    let signal = controller.signal();
    crate::roundtrips::outbound()
        .await
        .map_err(|e| SendError::permanent(e.to_string()))?;
    let fetch = Fetch::Request(request);
    let send = Box::pin(fetch.send_with_signal(&signal));
    let timeout = Box::pin(Delay::from(Duration::from_millis(ATTEMPT_TIMEOUT_MS)));
    let result = match select(send, timeout).await {
        Either::Left((r, _)) => Some(r.map(|response| response.status_code())),
        Either::Right(((), _)) => None,
    };
    match result {
        Some(Ok(status)) => Ok(status),
        Some(Err(e)) => Err(SendError {
            retryable: true,
            message: truncate(&format!("network error: {e}")),
        }),
        None => {
            controller.abort();
            Err(SendError {
                retryable: true,
                message: format!("timed out after {ATTEMPT_TIMEOUT_MS} ms"),
            })
        }
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(ERROR_CHARS_MAX).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_network_errors_429_and_5xx_are_retried() {
        assert_eq!(verdict(Some(200)), Verdict::Success);
        assert_eq!(verdict(Some(204)), Verdict::Success);
        assert_eq!(verdict(None), Verdict::Retry);
        assert_eq!(verdict(Some(429)), Verdict::Retry);
        assert_eq!(verdict(Some(500)), Verdict::Retry);
        assert_eq!(verdict(Some(503)), Verdict::Retry);
        assert_eq!(verdict(Some(400)), Verdict::Fail);
        assert_eq!(verdict(Some(404)), Verdict::Fail);
        assert_eq!(verdict(Some(301)), Verdict::Fail);
    }

    #[test]
    fn the_schedule_is_exponential_bounded_and_about_three_days() {
        assert_eq!(retry_delay_ms(1, 1), Some(60_000));
        assert_eq!(retry_delay_ms(2, 1), Some(300_000));
        assert_eq!(retry_delay_ms(ATTEMPTS_MAX, 1), None);
        assert_eq!(retry_delay_ms(0, 1), None);
        let total: u64 = (1..ATTEMPTS_MAX).filter_map(|a| retry_delay_ms(a, 1)).sum();
        assert!(total > 2 * 86_400_000 && total <= 3 * 86_400_000, "{total}");
        assert_eq!(retry_delay_ms(1, 60), Some(1_000));
    }
}
