//! The daily retention purge (docs/retention.md). For every tenant with a
//! `dataRetentionDays` window, raw business context older than the window
//! is removed: delta reason/referenceId/metadata, fact metadata, dispatched
//! outbox events, and the payload and url of completed webhook deliveries.
//! Permanent data (ids, receipt ids, item hashes, amounts, customer ids,
//! timestamps, status, the log and checkpoints) is never touched, so every
//! proof still verifies.
//!
//! Bounded: at most `rows_max` rows per run, `ROWS_PER_STATEMENT_MAX` per
//! statement. Each statement nulls a row's raw fields and marks it purged
//! at once, so a run stopped anywhere leaves no row half-purged, and the
//! next run continues with what is left.

use worker::D1Database;

use crate::app::App;
use crate::error::ApiResult;
use crate::store;

/// Rows purged per daily run, all tables together.
pub const ROWS_PER_RUN_MAX: u64 = 20_000;
/// Rows one statement purges: keeps each D1 write short.
pub const ROWS_PER_STATEMENT_MAX: u64 = 500;
/// Tenants read per page.
pub const TENANTS_PER_PAGE: u32 = 100;
const DAY_MS: u64 = 86_400_000;

#[derive(Debug, Default, Clone, Copy)]
pub struct Report {
    pub tenants: u64,
    pub deltas: u64,
    pub facts: u64,
    pub events: u64,
    pub deliveries: u64,
    /// False when the row budget ran out; the next run continues.
    pub complete: bool,
}

#[derive(Clone, Copy)]
enum Table {
    Deltas,
    Facts,
    Events,
    Deliveries,
}

/// Purges what is past each tenant's window at `now_ms`, at most
/// `rows_max` rows.
///
/// # Errors
/// Internal error on storage failure (whatever was purged stays purged).
pub async fn purge(app: &App, now_ms: u64, rows_max: u64) -> ApiResult<Report> {
    let control = app.control_db()?;
    // Every shard: a tenant has data on one shard per environment, and
    // the purge statements are scoped to the tenant.
    let ledgers = crate::ledger::shard::all(app)
        .into_iter()
        .map(|log| crate::ledger::db(app, log))
        .collect::<ApiResult<Vec<_>>>()?;
    let mut report = Report::default();
    let mut budget = rows_max;
    let mut after = String::new();
    loop {
        let page =
            store::accounts::tenants_with_retention(&control, &after, TENANTS_PER_PAGE).await?;
        let Some(last) = page.last() else { break };
        after.clone_from(&last.id);
        for t in &page {
            report.tenants += 1;
            let cutoff = now_ms.saturating_sub(u64::from(t.data_retention_days) * DAY_MS);
            for ledger in &ledgers {
                for table in [Table::Deltas, Table::Facts, Table::Events] {
                    let n = drain(ledger, table, &t.id, cutoff, now_ms, &mut budget).await?;
                    tally(&mut report, table, n);
                }
            }
            let n = drain(
                &control,
                Table::Deliveries,
                &t.id,
                cutoff,
                now_ms,
                &mut budget,
            )
            .await?;
            tally(&mut report, Table::Deliveries, n);
            if budget == 0 {
                return Ok(report);
            }
        }
    }
    report.complete = true;
    Ok(report)
}

fn tally(report: &mut Report, table: Table, n: u64) {
    match table {
        Table::Deltas => report.deltas += n,
        Table::Facts => report.facts += n,
        Table::Events => report.events += n,
        Table::Deliveries => report.deliveries += n,
    }
}

/// Purges one table for one tenant, statement by statement, until nothing
/// is left or the budget is spent. Returns rows purged.
async fn drain(
    db: &D1Database,
    table: Table,
    tenant_id: &str,
    cutoff_ms: u64,
    now_ms: u64,
    budget: &mut u64,
) -> ApiResult<u64> {
    let mut total = 0;
    while *budget > 0 {
        let limit = ROWS_PER_STATEMENT_MAX.min(*budget);
        let p = store::retention::Purge {
            tenant_id,
            cutoff_ms,
            now_ms,
            limit,
        };
        let n = match table {
            Table::Deltas => store::retention::purge_deltas(db, &p).await?,
            Table::Facts => store::retention::purge_facts(db, &p).await?,
            Table::Events => {
                store::retention::purge_events(db, tenant_id, cutoff_ms, limit).await?
            }
            Table::Deliveries => store::retention::purge_deliveries(db, &p).await?,
        };
        *budget = budget.saturating_sub(n);
        total += n;
        if n < limit {
            break;
        }
    }
    Ok(total)
}
