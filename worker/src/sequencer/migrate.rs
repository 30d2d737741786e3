//! A run's first phase: a log kept as stored hashes before tiles is
//! migrated to tiles, step by step within the run's budget, before any
//! round appends.

use worker::D1Database;

use super::state::Run;
use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::tiles::{self, Migration};

/// Migrates a log kept as stored hashes to tiles, step by step within the
/// run's budget (`tiles::migrate_step`; DEV_MODE var `TILES_MIGRATE_STEPS`
/// caps the steps per run, so a test sees it resume across runs): `Done`
/// once the tiles cover the head (at once for every log written with
/// tiles).
pub async fn migrate(app: &App, db: &D1Database, run: &mut Run) -> ApiResult<Migration> {
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
