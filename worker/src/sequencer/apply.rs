//! Applies a round's items to the log: one attempt (its reads, then its
//! one atomic write batch) per group, splitting a group that fails in
//! halves until the failing item is alone.

use worker::D1Database;

use super::state::Run;
use super::DEV_HOLD_SECS;
use crate::app::{self, App};
use crate::error::{ApiError, ApiResult};
use crate::ledger::tiles;
use crate::ledger::{append_and_sign, LogId, LogKey};
use crate::sequencer::balances::Balances;
use crate::sequencer::budget;
use crate::sequencer::queue::{costs, Item};
use crate::sequencer::round::{self, Plan};
use crate::store;
use crate::store::log as log_store;

/// Appends `items` at `size`, splitting what fails until the failing item
/// is alone. Returns the statements written, or `None` when the run must
/// stop (its budget is spent, or another run moved the log).
pub async fn apply_splitting(
    app: &App,
    (log, key, db): (LogId, &LogKey, &D1Database),
    run: &mut Run,
    items: Vec<Item>,
    mut size: u64,
    phases: &mut Phases,
) -> ApiResult<Option<usize>> {
    let mut statements = 0;
    let mut stack = vec![items];
    while let Some(mut group) = stack.pop() {
        // An attempt's queries, and one more to tell a race from a failure.
        if !run.spend(budget::round_cost(&costs(&group)).queries + 1) {
            return Ok(None);
        }
        match attempt(app, (log, key), db, size, &group, phases).await? {
            Outcome::Appended(written) => {
                run.appended += group.len() as u64;
                run.committed = true;
                size += group.len() as u64;
                statements += written;
            }
            Outcome::Raced => return Ok(None),
            Outcome::Failed(e) if group.len() == 1 => {
                worker::console_error!("sequencer {}: item failed alone: {e:?}", log.path_name());
                let message = match &e {
                    ApiError::Internal(text) => text.clone(),
                    other => format!("{other:?}"),
                };
                for item in group {
                    run.skip.insert(item.key());
                    run.isolated.push((item, message.clone(), false));
                }
            }
            Outcome::Failed(e) => {
                worker::console_warn!(
                    "sequencer {}: a round of {} failed, splitting it: {e:?}",
                    log.path_name(),
                    group.len()
                );
                let second = group.split_off(group.len() / 2);
                stack.push(second);
                stack.push(group);
            }
        }
    }
    Ok(Some(statements))
}

/// Where a round's milliseconds went (DEV_MODE log line): the queue's
/// read, the attempts' reads (tiles, ledgers), their computing (hashes,
/// signature, events) and their write batches.
#[derive(Default)]
pub struct Phases {
    pub read: u64,
    pub prepare: u64,
    pub compute: u64,
    pub write: u64,
}

enum Outcome {
    /// Committed, with this many statements in its write batch.
    Appended(usize),
    /// Another run moved the log meanwhile.
    Raced,
    Failed(ApiError),
}

/// Appends `items` to the log of `old_size` in one atomic batch. A failure
/// of the batch (or of building it) is `Failed` unless the log moved
/// meanwhile (`Raced`); failing to read the log at all is an error of the
/// run.
async fn attempt(
    app: &App,
    (log, key): (LogId, &LogKey),
    db: &D1Database,
    old_size: u64,
    items: &[Item],
    phases: &mut Phases,
) -> ApiResult<Outcome> {
    let mut plan = Plan::of(old_size, items);
    match apply_plan(app, (log, key), db, &mut plan, phases).await {
        Ok(written) => {
            let roots = plan
                .deltas
                .iter()
                .flat_map(|d| [d.items_root, d.proof_root()]);
            crate::ledger::roots::backfill_roots(app, log, roots).await;
            Ok(Outcome::Appended(written))
        }
        Err(e) => {
            let now = log_store::latest_head(db).await?;
            if now.map(|h| h.tree_size) == Some(plan.old_size) {
                Ok(Outcome::Failed(e))
            } else {
                Ok(Outcome::Raced)
            }
        }
    }
}

/// Reads what the plan needs (one batch: the log's tiles, the ledgers and
/// windows), then writes the round (one batch). Returns the number of
/// statements written.
async fn apply_plan(
    app: &App,
    (log, key): (LogId, &LogKey),
    db: &D1Database,
    plan: &mut Plan,
    phases: &mut Phases,
) -> ApiResult<usize> {
    if app.dev_mode() && plan.has_dev_fault() {
        return Err(ApiError::internal(
            "DEV_MODE fault injection: this item cannot be appended",
        ));
    }
    if app.dev_mode() && plan.holds() {
        worker::console_log!("sequencer {}: DEV_MODE hold reached", log.path_name());
        worker::Delay::from(std::time::Duration::from_secs(DEV_HOLD_SECS)).await;
    }
    let now = app::clock_ms();
    let window = round::window_of(now);
    let coords = tiles::tiles_for_append(plan.old_size, plan.len())?;
    let mut reads = Vec::from(Balances::reads(&plan.deltas, &window)?);
    let tiles_at = reads.len();
    reads.push(log_store::tiles_statement(&coords)?);
    let results = store::batch(db, reads).await?;
    let read = app::clock_ms();
    phases.prepare += read.saturating_sub(now);
    let balances = Balances::from_results(&results, 0)?;
    // The conditions, in ledger order against the positions read (issue
    // 43): a refused delta becomes its refusal item, appended last.
    plan.refuse(balances.screen(&plan.deltas));
    let plan = &*plan;
    let tile_rows = store::rows::<log_store::TileRow>(&results, tiles_at)?;
    let have = bvs_core::tiles::Tiles::from_stored(tile_rows).map_err(ApiError::internal)?;
    let appended = append_and_sign(key, plan.old_size, &plan.leaves()?, &have, now)?;
    let mut statements = log_store::insert_tiles(&appended.tiles)?;
    statements.extend(appended.rest);
    statements.extend(round::writes(
        plan,
        &appended.head,
        (now, &window),
        balances,
    )?);
    statements.push(log_store::insert_head(&appended.head)?);
    let written = statements.len();
    let computed = app::clock_ms();
    phases.compute += computed.saturating_sub(read);
    store::batch(db, statements).await?;
    phases.write += app::clock_ms().saturating_sub(computed);
    Ok(written)
}
