//! The dispatcher: moves a ledger database's undispatched outbox events to
//! one delivery per subscribed, active webhook, then rings the delivery
//! queue. Runs after every sequencer run and from the every-minute sweep.
//!
//! Idempotent: a delivery's id is derived from (event id, webhook id) and
//! inserted with INSERT OR IGNORE before the event is marked dispatched, so
//! a run that dies half way, or two runs at once, create each delivery once.

use crate::ledger::LogId;
use bvs_core::hash::Hash32;
use serde::Serialize;
use serde_json::json;
use worker::D1Database;

use super::delivery;
use crate::app::App;
use crate::error::ApiResult;
use crate::ids::{AnchorId, DeliveryId, EventId, SubmissionId, TenantId, WebhookId};
use crate::secret;
use crate::store::events::{self as outbox, EventKind, EventRow, NewEvent};
use crate::store::webhooks::{self as store, DeliveryOf, NewDelivery};
use crate::store::{self as db_store, submissions};
use crate::views::iso;

/// Events read per round.
pub const EVENTS_PER_ROUND: u64 = 1_000;
/// Rounds per run; the run's query budget usually ends it first.
pub const ROUNDS_MAX: usize = 60;
/// Queries a run after the sequencer's makes at most: what the
/// sequencer's run (`sequencer::budget::RUN_QUERIES_MAX`) leaves of an
/// invocation's 1,000, less a margin. A round makes at most
/// [`ROUND_QUERIES`].
pub const RUN_QUERIES_MAX: usize = 250;
/// Queries of the sweep's run per shard (every shard in one invocation):
/// a round or two; when events are left the shard's doorbell takes over.
pub const SWEEP_QUERIES_MAX: usize = 2 * ROUND_QUERIES;
/// Queries of one round, at most: the events, the webhooks, the
/// submissions' progress (two) and their completion events, the
/// deliveries (a few JSON sets), the mark.
const ROUND_QUERIES: usize = 10;

/// The delivery of `event_id` to `webhook_id`: the same pair always gives
/// the same id.
pub fn delivery_id(event_id: &EventId, webhook_id: &WebhookId) -> DeliveryId {
    let h = secret::sha256_hex(&format!("{event_id}/{webhook_id}"));
    DeliveryId::from_text(format!("dlv_{}", &h[..32]))
}

/// Dispatches the events of the shard `log` within `queries_max` queries
/// (issue 27: a round's statements are a constant number per table,
/// whatever its events); when events are left, rings the shard's doorbell
/// so that another invocation goes on. Returns the number of events
/// dispatched.
///
/// # Errors
/// Internal error on storage failure; nothing is lost, the next run
/// continues.
pub async fn run(app: &App, log: LogId, queries_max: usize) -> ApiResult<u64> {
    let ledger = crate::ledger::db(app, log)?;
    let control = app.control_db()?;
    // A new delivery is due at once: never later than the real clock,
    // whatever time a test gave the cron event that runs this.
    let now = app.now_ms.min(crate::app::clock_ms());
    let log_named = log_member(app, log)?;
    let mut total = 0;
    let mut queries = 0;
    for _ in 0..ROUNDS_MAX {
        if queries + ROUND_QUERIES > queries_max {
            crate::ledger::doorbell::ring(app, log).await;
            break;
        }
        let events = outbox::pending(&ledger, EVENTS_PER_ROUND).await?;
        if events.is_empty() {
            break;
        }
        queries += round(app, log, (&ledger, &control), &events, (&log_named, now)).await?;
        total += events.len() as u64;
        if (events.len() as u64) < EVENTS_PER_ROUND {
            break;
        }
    }
    Ok(total)
}

/// One round over `events`: the completions they finish, the deliveries
/// to their tenants' webhooks, the events marked dispatched. Events of a
/// tenant with no active webhook go nowhere: they are only marked (their
/// completions would go nowhere too). Returns the queries it made.
async fn round(
    app: &App,
    log: LogId,
    (ledger, control): (&D1Database, &D1Database),
    events: &[EventRow],
    (log_named, now): (&serde_json::Value, u64),
) -> ApiResult<usize> {
    let mut tenants: Vec<TenantId> = events.iter().map(|e| e.tenant_id.clone()).collect();
    tenants.sort();
    tenants.dedup();
    let hooks = store::active_for_tenants(control, &tenants).await?;
    let mut queries = 3;
    let hooked: Vec<&EventRow> = events
        .iter()
        .filter(|e| hooks.iter().any(|h| h.tenant_id == e.tenant_id))
        .collect();
    if !hooked.is_empty() {
        queries += completions(app, ledger, &hooked).await?;
    }
    let mut deliveries = Vec::new();
    for e in hooked {
        // One payload per event, whatever the number of its webhooks.
        let payload = with_log(&e.payload, log_named);
        for h in hooks
            .iter()
            .filter(|h| h.tenant_id == e.tenant_id && h.subscribes_to(e.kind.as_str()))
        {
            deliveries.push(NewDelivery {
                of: DeliveryOf {
                    id: delivery_id(&e.id, &h.id),
                    webhook_id: h.id.clone(),
                    tenant_id: e.tenant_id.clone(),
                    env: Some(log.env),
                    event_id: e.id.clone(),
                    event_type: e.kind.as_str().to_owned(),
                    event_created_at: e.created_at,
                },
                url: h.url.clone(),
                payload: payload.clone(),
            });
        }
    }
    if !deliveries.is_empty() {
        let statements = store::insert_deliveries(&deliveries, now)?;
        queries += statements.len();
        db_store::batch(control, statements).await?;
    }
    let event_ids: Vec<EventId> = events.iter().map(|e| e.id.clone()).collect();
    // The dashboard's per-day figures (issue 30) count these events in the
    // same batch, only if this run's mark changed them.
    let mut marks = outbox::mark_dispatched(&event_ids, now)?;
    let charts = crate::ledgers::charts::raise_statements(events)?;
    queries += charts.len();
    marks.extend(charts);
    db_store::batch(ledger, marks).await?;
    let ids: Vec<DeliveryId> = deliveries.into_iter().map(|d| d.of.id).collect();
    delivery::ring_all(app, &ids).await;
    Ok(queries)
}

/// The `verification.completed` payload: a submission (single emit or
/// batch) whose every delta is verified.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Completed {
    submission_id: SubmissionId,
    kind: &'static str,
    items_root: Hash32,
    receipt_id: Hash32,
    delta_count: u64,
    anchor_ids: Vec<AnchorId>,
    received_at: String,
    verified_at: Option<String>,
    verify_url: String,
}

/// Adds a `verification.completed` event for each submission these
/// `delta.verified` events finish. Its id is derived from the submission,
/// so it is added once however often this runs. Two D1 round trips
/// whatever the number of submissions: one batch reads their progress and
/// anchor ids, one adds the events (multi-row inserts). Returns the
/// queries it made.
async fn completions(app: &App, ledger: &D1Database, events: &[&EventRow]) -> ApiResult<usize> {
    // By anchor id: a payload's itemsRoot is its customer's root, not
    // necessarily its submission's.
    let mut anchors_seen: Vec<AnchorId> = events
        .iter()
        .filter(|e| e.kind == EventKind::DeltaVerified)
        .filter_map(|e| {
            let v: serde_json::Value = serde_json::from_str(&e.payload).ok()?;
            Some(AnchorId::from_text(v.get("anchorId")?.as_str()?))
        })
        .collect();
    anchors_seen.sort();
    anchors_seen.dedup();
    let (progress, anchors) = submissions::progress_of(ledger, &anchors_seen).await?;
    let mut done = Vec::new();
    for p in progress {
        let s = &p.submission;
        if p.verified < s.item_count {
            continue;
        }
        let anchor_ids = anchors
            .iter()
            .filter(|a| a.submission_id == s.id)
            .map(|a| a.anchor_id.clone())
            .collect();
        let payload = serde_json::to_string(&Completed {
            submission_id: s.id.clone(),
            kind: s.kind.as_str(),
            items_root: s.items_root,
            receipt_id: s.items_root,
            delta_count: s.item_count,
            anchor_ids,
            received_at: iso(s.received_at),
            verified_at: p.verified_at.map(iso),
            verify_url: format!("/api/v1/verify/{}", s.items_root),
        })?;
        done.push(NewEvent {
            id: EventId::from_text(format!("evt_done_{}", s.id)),
            tenant_id: s.tenant_id.clone(),
            kind: EventKind::VerificationCompleted,
            payload,
        });
    }
    let statements = outbox::insert_once_all(&done, app.now_ms)?;
    let made = 2 + statements.len();
    if !statements.is_empty() {
        db_store::batch(ledger, statements).await?;
    }
    Ok(made)
}

/// What every event says of the log (shard) its items are proven in.
///
/// # Errors
/// The log's key is not configured.
pub fn log_member(app: &App, log: LogId) -> ApiResult<serde_json::Value> {
    Ok(json!({
        "name": log.path_name(),
        "shard": log.shard,
        "origin": crate::ledger::LogKey::load(app, log)?.origin,
    }))
}

/// The event payload with `log` (name, shard, origin) appended as its last
/// member, the rest byte for byte, when it is a JSON object without one;
/// any other payload unchanged.
pub fn with_log(payload: &str, log: &serde_json::Value) -> String {
    let is_object_without_log = matches!(
        serde_json::from_str::<serde_json::Value>(payload),
        Ok(serde_json::Value::Object(map)) if !map.contains_key("log")
    );
    let body = payload.trim_end();
    match body.strip_suffix('}') {
        Some(open) if is_object_without_log => {
            let comma = if open.trim_end().ends_with('{') {
                ""
            } else {
                ","
            };
            format!("{open}{comma}\"log\":{log}}}")
        }
        _ => payload.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::with_log;
    use serde_json::json;

    #[test]
    fn the_log_is_appended_to_an_object_payload_only() {
        let log = json!({"name": "sandbox-1"});
        assert_eq!(
            with_log(r#"{"b":1,"a":2}"#, &log),
            r#"{"b":1,"a":2,"log":{"name":"sandbox-1"}}"#
        );
        assert_eq!(with_log("{}", &log), r#"{"log":{"name":"sandbox-1"}}"#);
        assert_eq!(with_log(r#"{"log":1}"#, &log), r#"{"log":1}"#);
        assert_eq!(with_log("[1]", &log), "[1]");
    }
}
