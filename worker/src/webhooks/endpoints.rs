//! A tenant's webhook endpoints as the dashboard manages them: create
//! (within the plan's limit; the secret is sealed and shown once), list,
//! read, toggle, delete, send a test or sample event now, and list recent
//! deliveries with their attempts. Another tenant's webhook id is 404.

use bvs_core::types::Env;
use worker::Url;

use super::delivery::{self, Mode, Report};
use super::signing::EndpointKey;
use super::{dispatch, samples, EVENT_TEST};
use crate::app::App;
use crate::auth;
use crate::auth::limit::{self, Rate};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids;
use crate::ids::{DeliveryId, EventId, TenantId, WebhookId};
use crate::owned;
use crate::secret;
use crate::store::webhooks::{self as store, DeliveryOf, NewDelivery, NewWebhook};
pub use crate::store::webhooks::{AttemptRow, DeliveryRow, WebhookRow};

/// Characters of a secret after its `whsec_` prefix (base62, ~190 bits).
pub const SECRET_CHARS: usize = 32;
/// Deliveries listed by the deliveries route.
pub const DELIVERIES_LISTED_MAX: u64 = 50;
/// Test events per tenant: 10 at once, then one every 6 seconds, so the
/// test route cannot turn the service into a request cannon. // spec: silent
pub const TEST_EVENTS_PER_TENANT: Rate = Rate {
    rate_per_sec: 1.0 / 6.0,
    burst: 10.0,
};

fn not_found(id: &WebhookId) -> ApiError {
    ApiError::NotFound(format!("No webhook {id}"))
}

/// A webhook to create: where, for which events, described how.
pub struct NewEndpoint<'a> {
    pub tenant_id: &'a TenantId,
    pub url: &'a Url,
    pub events: &'a [String],
    pub description: &'a str,
}

/// Creates a webhook within the plan's limit (counted inside the insert);
/// returns it as stored and its secret (shown once, stored sealed).
///
/// # Errors
/// 402 above the plan's webhook limit; D1 errors.
pub async fn create(app: &App, w: &NewEndpoint<'_>) -> ApiResult<(WebhookRow, String)> {
    let db = app.control_db()?;
    let plan = auth::tenant_plan(app, w.tenant_id).await?;
    let id = WebhookId::new()?;
    let secret_text = new_secret()?;
    let sealed = secret::seal(&super::secret_key(app)?, secret_text.as_bytes())?;
    // Webhooks a tenant may hold at once, per plan; counted inside the insert.
    let max = plan.webhooks_max();
    let inserted = store::insert_within(
        &db,
        &NewWebhook {
            id: &id,
            tenant_id: w.tenant_id,
            url: w.url.as_str(),
            events: &serde_json::to_string(w.events)?,
            description: w.description,
            secret_sealed: &sealed,
        },
        app.now_ms,
        max,
    )
    .await?;
    if !inserted {
        return Err(ApiError::coded(
            ErrorCode::PlanLimitExceeded,
            format!(
                "Plan limit exceeded: the {} plan holds at most {max} webhooks; delete one first, \
                 or upgrade",
                plan.label()
            ),
        ));
    }
    let row = store::of_tenant(&db, w.tenant_id, &id)
        .await?
        .ok_or_else(|| ApiError::internal("created webhook not found"))?;
    Ok((row, secret_text))
}

/// The tenant's webhooks.
///
/// # Errors
/// D1 errors.
pub async fn list(app: &App, tenant_id: &TenantId) -> ApiResult<Vec<WebhookRow>> {
    store::list(&app.control_db()?, tenant_id).await
}

/// One of the tenant's webhooks.
///
/// # Errors
/// 404 for an unknown id or another tenant's; D1 errors.
pub async fn get(app: &App, tenant_id: &TenantId, id: &WebhookId) -> ApiResult<WebhookRow> {
    store::of_tenant(&app.control_db()?, tenant_id, id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Enables a disabled webhook or disables an enabled one; returns it as
/// stored.
///
/// # Errors
/// 404 for an unknown id or another tenant's; D1 errors.
pub async fn toggle(app: &App, tenant_id: &TenantId, id: &WebhookId) -> ApiResult<WebhookRow> {
    let db = app.control_db()?;
    owned::toggled(
        store::toggle(&db, tenant_id, id, app.now_ms),
        store::of_tenant(&db, tenant_id, id),
        || not_found(id),
    )
    .await
}

/// How long the previous secret keeps signing after a rotation, unless the
/// request says otherwise. // spec: silent; a day to roll a new secret out
/// to every receiver, as Svix and Stripe default to.
pub const ROTATION_OVERLAP_DEFAULT_MS: u64 = 24 * 60 * 60 * 1000;
/// The longest overlap a rotation may ask for (a week: Stripe's longest).
pub const ROTATION_OVERLAP_MAX_HOURS: u64 = 7 * 24;

/// A new secret for the webhook (shown once, stored sealed) and its next
/// signing key; the current ones keep signing beside them for `overlap_ms`
/// (0: stop at once). Returns the new secret and the webhook as stored.
///
/// # Errors
/// 404 for an unknown id or another tenant's; D1 errors.
pub async fn rotate_secret(
    app: &App,
    tenant_id: &TenantId,
    id: &WebhookId,
    overlap_ms: u64,
) -> ApiResult<(String, WebhookRow)> {
    let db = app.control_db()?;
    let secret_text = new_secret()?;
    let sealed = secret::seal(&super::secret_key(app)?, secret_text.as_bytes())?;
    let until = (overlap_ms > 0).then(|| app.now_ms.saturating_add(overlap_ms));
    if store::rotate(&db, tenant_id, id, &sealed, app.now_ms, until).await? == 0 {
        return Err(not_found(id));
    }
    let row = store::of_tenant(&db, tenant_id, id)
        .await?
        .ok_or_else(|| not_found(id))?;
    Ok((secret_text, row))
}

/// `whsec_` + 32 base62 characters: they are base64 characters too, 24
/// bytes once decoded, the key Standard Webhooks' `v1` signs with.
fn new_secret() -> ApiResult<String> {
    Ok(format!(
        "{}{}",
        super::signing::SECRET_PREFIX,
        ids::random_token(SECRET_CHARS)?
    ))
}

/// The public halves of a webhook's signing keys, as its answers show
/// them: the current key, and the previous one with when it stops signing.
pub struct PublicKeys {
    pub current: String,
    pub previous: Option<(String, u64)>,
}

/// The webhook's public keys (`whpk_…`).
///
/// # Errors
/// Internal error when the production log's seed is missing.
pub fn public_keys(app: &App, row: &WebhookRow) -> ApiResult<PublicKeys> {
    let keys = delivery::live_keys(app, row)?;
    let mut public = keys.iter().map(EndpointKey::public_key);
    let current = public
        .next()
        .ok_or_else(|| ApiError::internal("a webhook without a key"))?;
    let previous = public.next().zip(row.previous_secret_expires_at);
    Ok(PublicKeys { current, previous })
}

/// Deletes a webhook and cancels its pending deliveries.
///
/// # Errors
/// 404 for an unknown id or another tenant's; D1 errors.
pub async fn delete(app: &App, tenant_id: &TenantId, id: &WebhookId) -> ApiResult<()> {
    let db = app.control_db()?;
    owned::deleted(store::delete(&db, tenant_id, id, app.now_ms), || {
        not_found(id)
    })
    .await
}

/// Sends `event_type` to `row` now, once, signed like a real delivery:
/// `test`, or any other event as its sample (`webhooks::samples`), which
/// names the sandbox's first log like a real delivery does. Spends one of
/// the tenant's test events first. Returns the delivery's id and what the
/// receiver answered.
///
/// # Errors
/// 429 when the tenant's test events are spent; D1 errors.
pub async fn send_test(
    app: &App,
    row: &WebhookRow,
    event_type: String,
) -> ApiResult<(DeliveryId, Report)> {
    limit::take(
        app,
        &format!("webhook-test:{}", row.tenant_id),
        TEST_EVENTS_PER_TENANT,
    )
    .await?;
    let db = app.control_db()?;
    let is_test = event_type == EVENT_TEST;
    let event_id = EventId::from_text(ids::new_id(if is_test {
        "evt_test"
    } else {
        "evt_sample"
    })?);
    let delivery_id = dispatch::delivery_id(&event_id, &row.id);
    let payload = samples::data(&event_type, &row.id, app.now_ms)?
        .ok_or_else(|| ApiError::internal(format!("no sample for {event_type}")))?;
    // A sample names a log like a real delivery does (the sandbox's first
    // shard); `test` is about no log.
    let payload = if is_test {
        payload
    } else {
        let sandbox = crate::ledger::LogId {
            env: Env::Sandbox,
            shard: 0,
        };
        dispatch::with_log(&payload, &dispatch::log_member(app, sandbox)?)
    };
    crate::store::batch(
        &db,
        store::insert_deliveries(
            &[NewDelivery {
                of: DeliveryOf {
                    id: delivery_id.clone(),
                    webhook_id: row.id.clone(),
                    tenant_id: row.tenant_id.clone(),
                    // Samples read like real sandbox deliveries; `test` has
                    // no environment.
                    env: (!is_test).then_some(Env::Sandbox),
                    event_id,
                    event_type,
                    event_created_at: app.now_ms,
                },
                url: row.url.clone(),
                payload,
            }],
            app.now_ms,
        )?,
    )
    .await?;
    let report = delivery::attempt(app, &delivery_id, Mode::Test).await?;
    Ok((delivery_id, report))
}

/// The webhook's latest deliveries (at most `DELIVERIES_LISTED_MAX`) and
/// every attempt of them.
///
/// # Errors
/// 404 for an unknown id or another tenant's; D1 errors.
pub async fn deliveries(
    app: &App,
    tenant_id: &TenantId,
    id: &WebhookId,
) -> ApiResult<(Vec<DeliveryRow>, Vec<AttemptRow>)> {
    let db = app.control_db()?;
    store::of_tenant(&db, tenant_id, id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let rows = store::deliveries_of_webhook(&db, tenant_id, id, DELIVERIES_LISTED_MAX).await?;
    let ids: Vec<DeliveryId> = rows.iter().map(|r| r.of.id.clone()).collect();
    let attempts = store::attempts_of(&db, &ids).await?;
    Ok((rows, attempts))
}

/// Resends one of the tenant's deliveries now: one attempt, recorded as
/// its next, signed like the others; a delivery still on its retry
/// schedule keeps it, a finished one ends with this attempt's outcome.
/// Spends one of the tenant's test events first. Returns what the
/// receiver answered.
///
/// # Errors
/// 404 for another tenant's or an unknown delivery; 409 while an attempt
/// runs, when the payload was removed by retention, or when its webhook is
/// disabled or deleted; 429 when the tenant's test events are spent.
pub async fn resend(
    app: &App,
    tenant_id: &TenantId,
    delivery_id: &DeliveryId,
) -> ApiResult<Report> {
    let db = app.control_db()?;
    let row = store::delivery_of_tenant(&db, delivery_id, tenant_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No delivery {delivery_id}")))?;
    let conflict = |why: &str| {
        ApiError::coded(
            ErrorCode::Conflict,
            format!("Delivery {delivery_id} cannot be resent: {why}"),
        )
    };
    match store::by_id(&db, &row.of.webhook_id).await? {
        None => return Err(conflict("its webhook was deleted")),
        Some(w) if w.active == 0 => {
            return Err(conflict("its webhook is disabled; enable it first"))
        }
        Some(_) => {}
    }
    if row.payload.is_none() {
        return Err(conflict("its payload was removed by retention"));
    }
    limit::take(
        app,
        &format!("webhook-test:{tenant_id}"),
        TEST_EVENTS_PER_TENANT,
    )
    .await?;
    let keep_schedule = row.status == store::DeliveryStatus::Pending;
    if !store::reopen(&db, delivery_id, tenant_id, app.now_ms).await? {
        return Err(conflict("an attempt is running now; try again in a minute"));
    }
    delivery::attempt(app, delivery_id, Mode::Resend { keep_schedule }).await
}

/// The tenant's deliveries of these events with every attempt, and the
/// tenant's webhooks (their urls and state).
///
/// # Errors
/// D1 errors.
pub async fn of_events(
    app: &App,
    tenant_id: &TenantId,
    event_ids: &[EventId],
) -> ApiResult<(Vec<DeliveryRow>, Vec<AttemptRow>)> {
    let db = app.control_db()?;
    let rows = store::deliveries_of_events(&db, tenant_id, event_ids).await?;
    let ids: Vec<DeliveryId> = rows.iter().map(|r| r.of.id.clone()).collect();
    let attempts = store::attempts_of(&db, &ids).await?;
    Ok((rows, attempts))
}
