//! The sequencer: appends every QUEUED item of a shard to its log, signs
//! the new tree head, and marks the items VERIFIED, all in one atomic D1
//! batch per round. A round reads the head and the queue (`queue`: fair
//! across tenants, one snapshot), takes as much as fits D1's limits (see
//! `budget`), reads what the append and the items' ledgers need (one
//! batch: the log's edge tiles, the ledgers, their windows), then writes
//! everything in one batch of a constant number of statements per table
//! (`round`, issue 27).
//!
//! Safe under redelivery and races: a round appends at the size it read
//! with the queue, and writes leaves, tiles (keyed by level, index and
//! width) and the head under primary keys, so two rounds starting from the
//! same size cannot both commit, and an item already VERIFIED is never
//! read again.
//!
//! A failing round cannot block the log: its items are split in halves,
//! each applied on its own, until the failing item is alone. An item
//! (delta, fact or checkpoint) that fails alone ends FAILED with why and a
//! once-only `verification.failed` event (once some other round of the run
//! committed, so an outage of the database does not fail everything;
//! until then it stays QUEUED and is skipped for the rest of the run). A
//! round that failed because another run moved the log meanwhile (a race)
//! is not split: it stops.
//!
//! A log kept as stored hashes before tiles is first migrated to tiles
//! (`tiles::migrate_step`, a few tiles per step within the run's budget);
//! rounds append only once the tiles cover the head.

use std::collections::BTreeSet;

use worker::D1Database;

use super::balances::Balances;
use super::budget;
use super::queue::{self, costs, Item};
use super::round::{self, Plan};
use super::tiles::{self, Migration};
use super::{append_and_sign, db, open_log, LogId, LogKey};
use crate::app::{self, App};
use crate::error::{ApiError, ApiResult};
use crate::ids::{EventId, TenantId};
use crate::store::checkpoints;
use crate::store::deltas;
use crate::store::events::{self, FailedItem, NewEvent};
use crate::store::facts;
use crate::store::log as log_store;
use crate::store::Query;
use crate::store::{self, meters};
use crate::views;

/// Rounds per invocation; the run's query budget usually ends it first.
/// The next doorbell (the run rings one when items are left) continues.
pub const ROUNDS_MAX: usize = 60;
pub const DEV_HOLD_SECS: u64 = 30;
/// Queries a run keeps for marking isolated items FAILED.
const FAIL_QUERIES: usize = 3;

/// Runs rounds until nothing is queued, `ROUNDS_MAX` rounds, or the run's
/// query budget is spent (then it rings the doorbell again). Returns the
/// number of items appended.
pub async fn run(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    let key = open_log(app, log, &db).await?;
    let mut run = Run {
        queries_left: budget::RUN_QUERIES_MAX,
        appended: 0,
        committed: false,
        isolated: Vec::new(),
        skip: BTreeSet::new(),
        more: false,
        cursor: String::new(),
    };
    let mut result = migrate(app, &db, &mut run).await;
    if matches!(result, Ok(Migration::Done)) {
        for _ in 0..ROUNDS_MAX {
            match round(app, (log, &key), &db, &mut run).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    let failed = fail_isolated(&db, &mut run).await;
    if run.more {
        super::submit::ring(app, log).await;
    }
    result?;
    failed?;
    Ok(run.appended)
}

/// Migrates a log kept as stored hashes to tiles, step by step within the
/// run's budget (`tiles::migrate_step`; DEV_MODE var `TILES_MIGRATE_STEPS`
/// caps the steps per run, so a test sees it resume across runs): `Done`
/// once the tiles cover the head (at once for every log written with
/// tiles).
async fn migrate(app: &App, db: &D1Database, run: &mut Run) -> ApiResult<Migration> {
    let steps_max = app
        .dev_mode()
        .then(|| app.var("TILES_MIGRATE_STEPS"))
        .flatten()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    for _ in 0..steps_max {
        if !run.spend(tiles::MIGRATE_STEP_QUERIES) {
            return Ok(Migration::Going);
        }
        match tiles::migrate_step(db).await? {
            Migration::Covered => {
                // Only the check ran: the rest of the step's budget is the
                // rounds'.
                run.queries_left += tiles::MIGRATE_STEP_QUERIES - tiles::MIGRATE_CHECK_QUERIES;
                return Ok(Migration::Done);
            }
            Migration::Done => return Ok(Migration::Done),
            Migration::Going => {}
        }
    }
    // Steps are left: the next run goes on.
    run.more = true;
    Ok(Migration::Going)
}

/// A run's state across its rounds.
struct Run {
    queries_left: usize,
    appended: u64,
    /// Some round of this run committed: the database takes writes.
    committed: bool,
    /// Items that failed alone, with why, and whether the failure is the
    /// item's for certain (too large) rather than judged by the run.
    isolated: Vec<(Item, String, bool)>,
    /// Keys of items not to read again in this run.
    skip: BTreeSet<String>,
    /// Items are left that the budget did not reach.
    more: bool,
    /// Where the next round's fair shares start (`queue`).
    cursor: String,
}

impl Run {
    fn spend(&mut self, queries: usize) -> bool {
        if queries + FAIL_QUERIES > self.queries_left {
            self.more = true;
            return false;
        }
        self.queries_left -= queries;
        true
    }
}

/// One round: reads the queue, plans what fits, applies it, and splits
/// what fails. Returns whether the run should go on.
async fn round(
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
    let items = match take(run, snapshot.items) {
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
        apply_splitting(app, (log, key, db), run, items, size, &mut phases).await?
    else {
        return Ok(false);
    };
    if app.dev_mode() {
        let ms = app::clock_ms().saturating_sub(started);
        round_line(log, (taken, tenants), statements, ms, &phases);
    }
    Ok(true)
}

/// What a round takes of the queue's candidates.
enum Taken {
    Items(Vec<Item>),
    /// The first can never be appended: set aside to be FAILED.
    SetAside,
    /// Nothing queued, or the run's budget is spent.
    Nothing,
}

/// The candidates that fit the round and what is left of the run's budget
/// (`budget::plan`).
fn take(run: &mut Run, mut items: Vec<Item>) -> Taken {
    if items.is_empty() {
        return Taken::Nothing;
    }
    match budget::plan(
        &costs(&items),
        run.queries_left.saturating_sub(FAIL_QUERIES),
    ) {
        budget::Take::Items(n) => {
            items.truncate(n);
            Taken::Items(items)
        }
        budget::Take::TooLarge => {
            // It can never be appended: set it aside to be FAILED, and go on.
            items.truncate(1);
            for item in items {
                run.skip.insert(item.key());
                let message = "the item is larger than one D1 statement allows".to_string();
                run.isolated.push((item, message, true));
            }
            Taken::SetAside
        }
        budget::Take::Nothing => {
            run.more = true;
            Taken::Nothing
        }
    }
}

/// Appends `items` at `size`, splitting what fails until the failing item
/// is alone. Returns the statements written, or `None` when the run must
/// stop (its budget is spent, or another run moved the log).
async fn apply_splitting(
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

/// Where a round's milliseconds went (DEV_MODE log line): the queue's
/// read, the attempts' reads (tiles, ledgers), their computing (hashes,
/// signature, events) and their write batches.
#[derive(Default)]
struct Phases {
    read: u64,
    prepare: u64,
    compute: u64,
    write: u64,
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
    let plan = Plan::of(old_size, items);
    match apply_plan(app, (log, key), db, &plan, phases).await {
        Ok(written) => {
            let roots = plan
                .deltas
                .iter()
                .flat_map(|d| [d.items_root, d.proof_root()]);
            super::roots::backfill_roots(app, log, roots).await;
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
    plan: &Plan,
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
    reads.push(log_store::tiles_statement(&coords)?);
    let results = store::batch(db, reads).await?;
    let read = app::clock_ms();
    phases.prepare += read.saturating_sub(now);
    let balances = Balances::from_results(&results, 0)?;
    let have = bvs_core::tiles::Tiles::from_stored(store::rows::<log_store::TileRow>(&results, 3)?)
        .map_err(ApiError::internal)?;
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

/// Marks the items that failed alone FAILED, each with why and its
/// `verification.failed` event (once: the event's id is the item's), if
/// the database takes writes, so that the failure is the item's: some
/// round of the run committed, or else a probe write succeeds (a lone
/// poisoned item on a quiet shard has no other round to commit; without
/// the probe it stayed QUEUED for ever). Otherwise they stay QUEUED for
/// the next run, and the run reports the failure.
async fn fail_isolated(db: &D1Database, run: &mut Run) -> ApiResult<()> {
    let isolated = std::mem::take(&mut run.isolated);
    if isolated.is_empty() {
        return Ok(());
    }
    let now = app::clock_ms();
    let takes_writes = run.committed
        || isolated.iter().all(|(_, _, certain)| *certain)
        || match log_store::probe_write(db, now).await {
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
            let payload = views::delta_failed_event_payload(d, message)?;
            let event = failed(format!("evt_failed_{}", d.anchor_id), &d.tenant_id, payload);
            vec![
                deltas::mark_failed(&d.anchor_id)?,
                meters::release_backlog_if_changed(&d.tenant_id)?,
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
