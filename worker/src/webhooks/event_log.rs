//! The event log (issue 30, docs/dashboard.md "Events"): every event of a
//! tenant's environment (the outbox rows of its shard, `store::events`),
//! newest first, each with its deliveries to every endpoint (control
//! database) and their attempts. Events are kept as long as the outbox
//! keeps them: for the tenant's retention window, or forever.

use bvs_core::types::Env;

use super::endpoints::{self, AttemptRow, DeliveryRow};
use crate::app::App;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::ids::{EventId, TenantId};
use crate::ledger::LogId;
use crate::store::events::{self as store, LoggedEventRow};

/// Events per page by default, and at most.
pub const PAGE_DEFAULT: u64 = 25;
pub const PAGE_MAX: u64 = 100;

/// An event with its deliveries and their attempts.
pub struct Logged {
    pub env: Option<Env>,
    /// `None` when only deliveries remain (a test event, or an event the
    /// outbox no longer keeps).
    pub event: Option<LoggedEventRow>,
    pub deliveries: Vec<DeliveryRow>,
    pub attempts: Vec<AttemptRow>,
}

async fn shard_of(app: &App, tenant_id: &TenantId, env: Env) -> ApiResult<Option<LogId>> {
    Ok(auth::contracts::for_env(app, tenant_id, env)
        .await?
        .map(|c| LogId::new(env, c.shard)))
}

/// One page of the environment's events, newest first, strictly older
/// than `before` (created_at, id), with their deliveries; and whether more
/// follow.
///
/// # Errors
/// D1 errors.
pub async fn page(
    app: &App,
    tenant_id: &TenantId,
    env: Env,
    kind: Option<&str>,
    before: Option<(u64, String)>,
    limit: u64,
) -> ApiResult<(Vec<Logged>, bool)> {
    let Some(log) = shard_of(app, tenant_id, env).await? else {
        return Ok((Vec::new(), false));
    };
    let db = crate::ledger::db(app, log)?;
    let (t, id) = before.unwrap_or((u64::MAX >> 11, String::new()));
    let mut rows = store::page_of_tenant(&db, tenant_id, kind, (t, &id), limit + 1).await?;
    rows.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    let more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let ids: Vec<EventId> = rows.iter().map(|e| e.id.clone()).collect();
    let (deliveries, attempts) = endpoints::of_events(app, tenant_id, &ids).await?;
    let logged = rows
        .into_iter()
        .map(|e| {
            let mine: Vec<DeliveryRow> = deliveries
                .iter()
                .filter(|d| d.of.event_id == e.id)
                .cloned()
                .collect();
            let their_attempts = attempts_of(&attempts, &mine);
            Logged {
                env: Some(env),
                event: Some(e),
                deliveries: mine,
                attempts: their_attempts,
            }
        })
        .collect();
    Ok((logged, more))
}

fn attempts_of(attempts: &[AttemptRow], deliveries: &[DeliveryRow]) -> Vec<AttemptRow> {
    attempts
        .iter()
        .filter(|a| deliveries.iter().any(|d| d.of.id == a.delivery_id))
        .cloned()
        .collect()
}

/// One of the tenant's events, from either environment, with its
/// deliveries and their attempts. An event the outbox no longer has (or a
/// test event, which never was in it) is still found by its deliveries.
///
/// # Errors
/// 404 when neither the event nor a delivery of it exists for this tenant.
pub async fn one(app: &App, tenant_id: &TenantId, event_id: &EventId) -> ApiResult<Logged> {
    let mut found: Option<(Env, LoggedEventRow)> = None;
    for env in [Env::Sandbox, Env::Production] {
        let Some(log) = shard_of(app, tenant_id, env).await? else {
            continue;
        };
        let db = crate::ledger::db(app, log)?;
        if let Some(e) = store::one_of_tenant(&db, event_id, tenant_id).await? {
            found = Some((env, e));
            break;
        }
    }
    let (deliveries, attempts) =
        endpoints::of_events(app, tenant_id, std::slice::from_ref(event_id)).await?;
    if found.is_none() && deliveries.is_empty() {
        return Err(ApiError::NotFound(format!("No event {event_id}")));
    }
    let env = found
        .as_ref()
        .map(|(env, _)| *env)
        .or_else(|| deliveries.iter().find_map(|d| d.of.env));
    Ok(Logged {
        env,
        event: found.map(|(_, e)| e),
        deliveries,
        attempts,
    })
}
