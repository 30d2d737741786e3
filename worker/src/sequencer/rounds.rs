//! One round of a run: reads the queue (one snapshot), takes what fits
//! the run's budget, applies it (splitting what fails), and logs its
//! DEV_MODE line.

use worker::D1Database;

use super::apply::{self, Phases};
use super::state::{self, Run, Taken};
use crate::app::{self, App};
use crate::error::ApiResult;
use crate::ids::TenantId;
use crate::ledger::{LogId, LogKey};
use crate::sequencer::queue::{self, Item};

/// One round: reads the queue, plans what fits, applies it, and splits
/// what fails. Returns whether the run should go on.
pub async fn round(
    app: &App,
    (log, key): (LogId, &LogKey),
    db: &D1Database,
    run: &mut Run,
) -> ApiResult<bool> {
    let started = app::clock_ms();
    if !run.spend(queue::READ_QUERIES) {
        return Ok(false);
    }
    let snapshot = queue::read(db, &run.cursor, &run.skip).await?;
    let mut phases = Phases {
        read: app::clock_ms().saturating_sub(started),
        ..Phases::default()
    };
    run.cursor = snapshot.next_cursor;
    if snapshot.tiles_size < snapshot.head.tree_size {
        // The log grew without tiles meanwhile (an older Worker): the next
        // run migrates first.
        run.more = true;
        return Ok(false);
    }
    let items = match state::take(run, snapshot.items) {
        Taken::Items(items) => items,
        Taken::SetAside => return Ok(true),
        Taken::Nothing => return Ok(false),
    };
    let taken = items.len();
    let mut tenants: Vec<&TenantId> = items.iter().map(Item::tenant).collect();
    tenants.sort_unstable();
    tenants.dedup();
    let tenants = tenants.len();
    let size = snapshot.head.tree_size;
    let Some(statements) =
        apply::apply_splitting(app, (log, key, db), run, items, size, &mut phases).await?
    else {
        return Ok(false);
    };
    if app.dev_mode() {
        let ms = app::clock_ms().saturating_sub(started);
        round_line(log, (taken, tenants), statements, ms, &phases);
    }
    Ok(true)
}

/// DEV_MODE: one structured line per round (issue 27): the items it took
/// and the tenants they belong to, the statements its writes took, and its
/// milliseconds.
fn round_line(
    log: LogId,
    (items, tenants): (usize, usize),
    statements: usize,
    ms: u64,
    phases: &Phases,
) {
    let line = serde_json::json!({
        "sequencerRound": log.path_name(),
        "items": items,
        "tenants": tenants,
        "statements": statements,
        "ms": ms,
        "readMs": phases.read,
        "prepareMs": phases.prepare,
        "computeMs": phases.compute,
        "writeMs": phases.write,
    });
    worker::console_log!("{line}");
}
