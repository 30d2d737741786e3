//! The daily retention purge (docs/retention.md). For every tenant with a
//! `dataRetentionDays` window, raw business context older than the window
//! is removed: delta reason/referenceId/metadata and fact metadata (of
//! verified items by verification time, of FAILED ones by the time they
//! were received), dispatched outbox events, and the payload and url of
//! completed webhook deliveries; and the snapshot and nodes of liabilities
//! statements published before the window (the statement stays, with its
//! log item; its proofs answer 410, docs/liabilities.md §12).
//! Permanent data (ids, receipt ids, item hashes, amounts, customer ids,
//! timestamps, status, the log and checkpoints) is never touched, so every
//! proof still verifies.
//!
//! Bounded: at most `rows_max` rows per run, `ROWS_PER_STATEMENT_MAX` per
//! statement. Each statement nulls a row's raw fields and marks it purged
//! at once, so a run stopped anywhere leaves no row half-purged.
//!
//! Fair: the run goes round the tenants with a window in id order,
//! starting after the last tenant the previous run visited (a cursor in
//! the control database) and wrapping around, and gives each tenant at
//! most one slice (`rows_max / TENANT_SHARES`, at least one row) per visit.
//! A run therefore visits at least `TENANT_SHARES` tenants that have work
//! (every tenant, if fewer), and no tenant waits for another's backlog:
//! with `T` tenants past their window, a tenant with `R` purgeable rows is
//! done within `ceil(R / slice) * ceil(T / TENANT_SHARES)` runs
//! (docs/retention.md).

use worker::D1Database;

use crate::app::App;
use crate::error::ApiResult;
use crate::ids::TenantId;
use crate::store;

/// Rows purged per daily run, all tables together.
pub const ROWS_PER_RUN_MAX: u64 = 20_000;
/// Rows one statement purges: keeps each D1 write short.
pub const ROWS_PER_STATEMENT_MAX: u64 = 500;
/// Tenants read per page.
pub const TENANTS_PER_PAGE: u32 = 100;
/// A run's budget is shared out in this many slices: one slice per tenant
/// visit, so a run visits at least this many tenants with work.
pub const TENANT_SHARES: u64 = 10;
const DAY_MS: u64 = 86_400_000;

#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub tenants: u64,
    pub deltas: u64,
    pub facts: u64,
    pub events: u64,
    pub deliveries: u64,
    /// Request log rows past a window shortened since they were written.
    pub requests: u64,
    /// Liabilities statements stamped purged, and their snapshot and node
    /// rows deleted.
    pub liabilities: u64,
    /// False when the row budget ran out; the next run continues.
    /// (`tenants` counts tenant visits.)
    pub complete: bool,
}

#[derive(Clone, Copy)]
enum Table {
    Deltas,
    /// FAILED deltas: by the time they were received (never verified).
    FailedDeltas,
    Facts,
    /// FAILED facts: by the time they were submitted.
    FailedFacts,
    Events,
    Deliveries,
    /// The request log (issue 30): by the time of the request.
    RequestLog,
    /// Liabilities statements published before the window: stamped purged
    /// (their proofs answer 410 from then on).
    LiabilityStatements,
    /// Then the snapshot rows of purged statements, then their nodes.
    LiabilityLedgers,
    LiabilityNodes,
}

/// Purges what is past each tenant's window at `now_ms`, at most
/// `rows_max` rows, going round the tenants from the stored cursor.
///
/// # Errors
/// Internal error on storage failure (whatever was purged stays purged,
/// and the cursor names the last tenant finished).
pub async fn purge(app: &App, now_ms: u64, rows_max: u64) -> ApiResult<Report> {
    let control = app.control_db()?;
    // Every shard: a tenant has data on one shard per environment, and
    // the purge statements are scoped to the tenant.
    let ledgers = crate::ledger::shard::all(app)
        .into_iter()
        .map(|log| crate::ledger::db(app, log))
        .collect::<ApiResult<Vec<_>>>()?;
    let slice = (rows_max / TENANT_SHARES).max(1);
    let mut report = Report::default();
    let mut budget = rows_max;
    let mut cursor = store::retention::cursor(&control)
        .await?
        .unwrap_or_default();
    // Laps round the tenants, each starting after the cursor; another lap
    // only while some tenant filled its slice (it may have more).
    loop {
        let lap_start = cursor.clone();
        let mut after = lap_start.clone();
        let mut wrapped = lap_start.is_empty();
        let mut more_work = false;
        loop {
            let page =
                store::accounts::tenants_with_retention(&control, &after, TENANTS_PER_PAGE).await?;
            let Some(last) = page.last() else {
                if wrapped {
                    break;
                }
                // Past the last tenant: wrap round to the first.
                wrapped = true;
                after.clear();
                continue;
            };
            last.id.as_str().clone_into(&mut after);
            // Once wrapped, the lap ends at the tenant it started after.
            let lap_done =
                wrapped && !lap_start.is_empty() && last.id.as_str() >= lap_start.as_str();
            for t in &page {
                if wrapped && !lap_start.is_empty() && t.id.as_str() > lap_start.as_str() {
                    break;
                }
                report.tenants += 1;
                let cutoff = now_ms.saturating_sub(u64::from(t.data_retention_days) * DAY_MS);
                let given = slice.min(budget);
                let mut share = given;
                let window = Window { cutoff, now_ms };
                purge_tenant(&ledgers, &control, &t.id, window, &mut share, &mut report).await?;
                budget -= given - share;
                more_work |= share == 0;
                t.id.as_str().clone_into(&mut cursor);
                if budget == 0 {
                    store::retention::set_cursor(&control, &cursor, now_ms).await?;
                    return Ok(report);
                }
            }
            store::retention::set_cursor(&control, &cursor, now_ms).await?;
            if lap_done {
                break;
            }
        }
        if !more_work {
            report.complete = true;
            return Ok(report);
        }
    }
}

/// What a tenant's purge removes: rows older than `cutoff`, at `now_ms`.
#[derive(Clone, Copy)]
struct Window {
    cutoff: u64,
    now_ms: u64,
}

/// Drains one tenant's tables, on every shard and then the control
/// database, within `share` rows (left with what remains of it).
async fn purge_tenant(
    ledgers: &[D1Database],
    control: &D1Database,
    tenant_id: &TenantId,
    window: Window,
    share: &mut u64,
    report: &mut Report,
) -> ApiResult<()> {
    let Window { cutoff, now_ms } = window;
    for ledger in ledgers {
        for table in [
            Table::Deltas,
            Table::FailedDeltas,
            Table::Facts,
            Table::FailedFacts,
            Table::Events,
            Table::RequestLog,
            Table::LiabilityStatements,
            Table::LiabilityLedgers,
            Table::LiabilityNodes,
        ] {
            let n = drain(ledger, table, tenant_id, cutoff, now_ms, share).await?;
            tally(report, table, n);
        }
    }
    let n = drain(control, Table::Deliveries, tenant_id, cutoff, now_ms, share).await?;
    tally(report, Table::Deliveries, n);
    Ok(())
}

fn tally(report: &mut Report, table: Table, n: u64) {
    match table {
        Table::Deltas | Table::FailedDeltas => report.deltas += n,
        Table::Facts | Table::FailedFacts => report.facts += n,
        Table::Events => report.events += n,
        Table::Deliveries => report.deliveries += n,
        Table::RequestLog => report.requests += n,
        Table::LiabilityStatements | Table::LiabilityLedgers | Table::LiabilityNodes => {
            report.liabilities += n;
        }
    }
}

/// Purges one table for one tenant, statement by statement, until nothing
/// is left or the budget is spent. Returns rows purged.
async fn drain(
    db: &D1Database,
    table: Table,
    tenant_id: &TenantId,
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
            Table::FailedDeltas => store::retention::purge_failed_deltas(db, &p).await?,
            Table::Facts => store::retention::purge_facts(db, &p).await?,
            Table::FailedFacts => store::retention::purge_failed_facts(db, &p).await?,
            Table::Events => {
                store::retention::purge_events(db, tenant_id, cutoff_ms, limit).await?
            }
            Table::Deliveries => store::retention::purge_deliveries(db, &p).await?,
            Table::RequestLog => {
                store::request_log::purge_tenant_before(db, tenant_id, cutoff_ms, limit).await?
            }
            Table::LiabilityStatements => {
                store::liabilities::purge_statements(db, tenant_id, cutoff_ms, now_ms, limit)
                    .await?
            }
            Table::LiabilityLedgers => {
                store::liabilities::purge_ledgers(db, tenant_id, limit).await?
            }
            Table::LiabilityNodes => store::liabilities::purge_nodes(db, tenant_id, limit).await?,
        };
        *budget = budget.saturating_sub(n);
        total += n;
        if n < limit {
            break;
        }
    }
    Ok(total)
}
