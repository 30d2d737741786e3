//! Cron work: bounded per run, never panics; errors are logged and the next
//! run continues where this one stopped.

use crate::ledger::LogId;

use crate::app::App;
use crate::error::ApiResult;
use crate::ids::DeliveryId;
use crate::store;

/// The every-minute sweeper's schedule (wrangler.toml `[triggers]`).
pub const CRON_SWEEP: &str = "* * * * *";
/// The daily retention run's schedule.
pub const CRON_RETENTION: &str = "17 3 * * *";
/// An item QUEUED longer than this has lost its doorbell (a dropped queue
/// message, a crash): the sweeper rings again.
pub const QUEUED_STALE_MS: u64 = 30_000;
/// Due webhook deliveries re-queued per sweep; the next minute continues.
pub const SWEEP_DELIVERIES_MAX: u64 = 500;

pub async fn run(app: &App, cron: &str) {
    match cron {
        CRON_SWEEP => {
            for log in crate::ledger::shard::all(app) {
                if let Err(e) = sweep_queued(app, log).await {
                    worker::console_error!("sweep {}: {e:?}", log.path_name());
                }
            }
            for log in crate::ledger::shard::all(app) {
                sweep_backfill(app, log).await;
            }
            for log in crate::ledger::shard::all(app) {
                if let Err(e) = crate::liabilities::sweep(app, log).await {
                    worker::console_error!("sweep liabilities {}: {e:?}", log.path_name());
                }
            }
            if let Err(e) = sweep_idempotency(app).await {
                worker::console_error!("sweep idempotency keys: {e:?}");
            }
            for log in crate::ledger::shard::all(app) {
                // Witnesses: resubmit after back-off, refresh an idle head.
                let trigger = crate::witness::Trigger::Sweep;
                if let Err(e) = crate::witness::cosign(app, log, trigger).await {
                    worker::console_error!("sweep witnesses {}: {e:?}", log.path_name());
                }
            }
            for log in crate::ledger::shard::all(app) {
                let queries = crate::webhooks::dispatch::SWEEP_QUERIES_MAX;
                if let Err(e) = crate::webhooks::dispatch::run(app, log, queries).await {
                    worker::console_error!("sweep webhook dispatch {}: {e:?}", log.path_name());
                }
            }
            if let Err(e) = sweep_deliveries(app).await {
                worker::console_error!("sweep webhook deliveries: {e:?}");
            }
            if let Err(e) =
                crate::auth::mailer::sweep(app, QUEUED_STALE_MS, SWEEP_DELIVERIES_MAX).await
            {
                worker::console_error!("sweep mail requests: {e:?}");
            }
            if let Err(e) = crate::request_log::purge_expired(app).await {
                worker::console_error!("sweep request log: {e:?}");
            }
        }
        CRON_RETENTION => {
            match crate::retention::purge(app, app.now_ms, crate::retention::ROWS_PER_RUN_MAX).await
            {
                Ok(r) => worker::console_log!("retention at {}: {r:?}", app.now_ms),
                Err(e) => worker::console_error!("retention at {}: {e:?}", app.now_ms),
            }
            if let Err(e) = crate::request_log::purge_old_meters(app).await {
                worker::console_error!("request log meters: {e:?}");
            }
        }
        other => worker::console_warn!("unknown cron schedule {other}"),
    }
}

/// Re-rings the sequencer when something has been QUEUED too long. Ringing
/// twice is harmless: the sequencer appends each item once.
async fn sweep_queued(app: &App, log: LogId) -> ApiResult<()> {
    let db = crate::ledger::db(app, log)?;
    if let Some(at) = store::deltas::oldest_queued_at(&db).await? {
        if at + QUEUED_STALE_MS <= app.now_ms {
            worker::console_log!(
                "sweep {}: re-ringing for items queued since {at}",
                log.path_name()
            );
            crate::ledger::doorbell::ring(app, log).await;
        }
    }
    Ok(())
}

/// The bounded slices of `ledger::backfill`: per-ledger roots of deltas
/// from before them, and checkpoint records not checked yet.
async fn sweep_backfill(app: &App, log: LogId) {
    if let Err(e) = crate::ledger::backfill::ledger_roots(app, log).await {
        worker::console_error!("sweep ledger roots {}: {e:?}", log.path_name());
    }
    if let Err(e) = crate::ledger::backfill::checkpoint_records(app, log).await {
        worker::console_error!("sweep checkpoint records {}: {e:?}", log.path_name());
    }
}

/// Re-rings the delivery queue for webhook deliveries that are due (a lost
/// message, a crash mid-attempt). Ringing twice is harmless: an attempt
/// first claims its delivery.
async fn sweep_deliveries(app: &App) -> ApiResult<()> {
    let due = store::webhooks::due(&app.control_db()?, app.now_ms, SWEEP_DELIVERIES_MAX).await?;
    let ids: Vec<DeliveryId> = due.into_iter().map(|d| d.id).collect();
    crate::webhooks::delivery::ring_all(app, &ids).await;
    Ok(())
}

async fn sweep_idempotency(app: &App) -> ApiResult<()> {
    for log in crate::ledger::shard::all(app) {
        let ledger = crate::ledger::db(app, log)?;
        store::idempotency::delete_expired_results(&ledger, app.now_ms).await?;
        store::emit::delete_expired_claims(&ledger, app.now_ms).await?;
    }
    Ok(())
}
