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

mod apply;
pub mod balances;
pub mod budget;
mod failed;
mod migrate;
pub mod queue;
pub mod round;
mod rounds;
mod state;

use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::tiles::Migration;
use crate::ledger::{db, open_log, LogId};

/// Rounds per invocation; the run's query budget usually ends it first.
/// The next doorbell (the run rings one when items are left) continues.
pub const ROUNDS_MAX: usize = 60;
pub const DEV_HOLD_SECS: u64 = 30;

/// Runs rounds until nothing is queued, `ROUNDS_MAX` rounds, or the run's
/// query budget is spent (then it rings the doorbell again). Returns the
/// number of items appended.
pub async fn run(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    let key = open_log(app, log, &db).await?;
    let mut run = state::Run::new();
    let mut result = migrate::migrate(app, &db, &mut run).await;
    if matches!(result, Ok(Migration::Done)) {
        for _ in 0..ROUNDS_MAX {
            match rounds::round(app, (log, &key), &db, &mut run).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    let failed = failed::fail_isolated(&db, &mut run).await;
    if run.more {
        crate::ledger::doorbell::ring(app, log).await;
    }
    result?;
    failed?;
    Ok(run.appended)
}
