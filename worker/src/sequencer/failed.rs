//! A run's last phase: the items that failed alone end FAILED, each with
//! why and its once-only `verification.failed` event.

use worker::D1Database;

use super::state::Run;
use crate::app;
use crate::error::{ApiError, ApiResult};
use crate::ids::{EventId, TenantId};
use crate::sequencer::queue::Item;
use crate::store;
use crate::store::checkpoints;
use crate::store::deltas;
use crate::store::events::{self, FailedItem, NewEvent};
use crate::store::facts;
use crate::store::log as log_store;
use crate::store::Query;
use crate::views;

/// Marks the items that failed alone FAILED, each with why and its
/// `verification.failed` event (once: the event's id is the item's), if
/// the database takes writes, so that the failure is the item's: some
/// round of the run committed, or else a probe write succeeds (a lone
/// poisoned item on a quiet shard has no other round to commit; without
/// the probe it stayed QUEUED for ever). Otherwise they stay QUEUED for
/// the next run, and the run reports the failure.
pub async fn fail_isolated(db: &D1Database, run: &mut Run) -> ApiResult<()> {
    let isolated = std::mem::take(&mut run.isolated);
    if isolated.is_empty() {
        return Ok(());
    }
    let now = app::clock_ms();
    let takes_writes = run.committed
        || isolated.iter().all(|(_, _, certain)| *certain)
        || match store::exec(db, log_store::probe_write(now)?).await {
            Ok(()) => true,
            Err(e) => {
                worker::console_error!("sequencer: the probe write failed too: {e:?}");
                false
            }
        };
    let (isolated, unsure): (Vec<_>, Vec<_>) = isolated
        .into_iter()
        .partition(|(_, _, certain)| *certain || takes_writes);
    let mut statements = Vec::new();
    for (item, message, _) in &isolated {
        statements.extend(mark_failed(item, message, now)?);
    }
    if !statements.is_empty() {
        store::batch(db, statements).await?;
    }
    if !unsure.is_empty() {
        return Err(ApiError::internal(format!(
            "{} item(s) failed alone and the database took no write: left QUEUED",
            unsure.len()
        )));
    }
    Ok(())
}

/// The statements that mark one item FAILED with why, then add its
/// `verification.failed` event if (and only if) the item is FAILED.
fn mark_failed<'a>(item: &'a Item, message: &'a str, now: u64) -> ApiResult<Vec<Query<'a>>> {
    let failed = |id: String, tenant_id: &TenantId, payload: String| NewEvent {
        id: EventId::from_text(id),
        tenant_id: tenant_id.clone(),
        kind: crate::store::events::EventKind::VerificationFailed,
        payload,
    };
    Ok(match item {
        Item::Delta(d) => {
            let failure = views::Failure::append(message);
            let stored = serde_json::to_string(&failure)?;
            let payload = views::delta_failed_event_payload(d, failure)?;
            let event = failed(format!("evt_failed_{}", d.anchor_id), &d.tenant_id, payload);
            vec![
                deltas::mark_failed(&d.anchor_id, stored)?,
                store::meters::release_backlog_if_changed(&d.tenant_id)?,
                events::insert_if_failed(event, FailedItem::Delta(&d.anchor_id), now)?,
            ]
        }
        Item::Fact(f) => {
            let payload = views::fact_failed_event_payload(f, message)?;
            // A content hash is per tenant: the tenant is part of the id.
            let id = format!("evt_failed_fact_{}_{}", f.tenant_id, f.content_hash);
            let event = failed(id, &f.tenant_id, payload);
            vec![
                facts::mark_failed(&f.tenant_id, &f.content_hash, message)?,
                events::insert_if_failed(event, FailedItem::Fact(&f.content_hash), now)?,
            ]
        }
        Item::Checkpoint(c) => {
            let payload = views::checkpoint_failed_event_payload(c, message)?;
            let event = failed(format!("evt_failed_{}", c.id), &c.tenant_id, payload);
            vec![
                checkpoints::mark_failed(&c.id, message)?,
                events::insert_if_failed(event, FailedItem::Checkpoint(&c.id), now)?,
            ]
        }
        // A statement that can never be appended ends FAILED with why; the
        // vendor sees it on GET /api/v1/liabilities/{id} (no event yet).
        Item::Statement(st) => vec![crate::store::liabilities::mark_failed(
            &st.id, message, now,
        )?],
    })
}
