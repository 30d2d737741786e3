//! Liabilities statements (issue 31 part B, docs/liabilities.md): built by
//! a resumable job over `core::liabilities`, published into the log by
//! the sequencer (item kind `liabilities`), and each customer's proof read
//! back from the stored nodes.
//!
//! The job runs in the tenant's ledger shard, a bounded number of pages
//! per queue message (`Job::Liabilities`), each page one atomic batch
//! guarded by the cursor it read, so a redelivered or doubled message
//! writes nothing twice:
//!
//! - phase 1 (`SNAPSHOT`): every ledger's balance at the period's end
//!   (after its last delta verified by then: `ledger_windows`), with its
//!   order key (the shuffle, from the statement's secret seed);
//! - phase 2 (`BUILDING`): the snapshot in order-key order through
//!   `StatementBuilder::push`, the page's completed nodes and leaf indexes
//!   written with the new builder state;
//! - then the statement is `QUEUED` for the sequencer, which appends its
//!   item hash and marks it `PUBLISHED`.

use bvs_core::hash::Hash32;
use bvs_core::liabilities::statement::{ledger_id, Seed, StatementBuilder};
use bvs_core::types::{Asset, Env, Period};
use serde::Serialize;
use worker::D1Database;

mod proof;

pub use proof::{for_receipt, not_purged, proof, proof_by_checkpoint, public_answer};

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{StatementId, TenantId};
use crate::jobs::{Job, QUEUE_WEBHOOKS};
use crate::ledger::{db, LogId};
use crate::meter;
use crate::plan::Plan;
use crate::store::liabilities::{self as store_l, Finished, StatementRow, StatementStatus};
use crate::store::meters;
use crate::{ids, store, views};

/// Ledgers read per phase 1 page.
pub const SNAPSHOT_PAGE: u64 = 2_000;
/// Ledgers pushed per phase 2 page.
pub const BUILD_PAGE: u64 = 2_000;
/// Pages one job message runs before it hands on to the next message.
pub const PAGES_PER_RUN: usize = 12;
/// Closed periods' statements the cron starts per sweep and shard.
pub const CRON_STARTS_MAX: u64 = 5;
/// A job not moved for this long has lost its message: the cron rings it.
pub const STALLED_MS: u64 = 120_000;
/// Statements of one period a tenant may have (each new one supersedes
/// the last).
pub const STATEMENTS_PER_PERIOD_MAX: u64 = 12;

/// A statement as the API shows it (never the seed, leaves or nodes).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementView {
    pub id: StatementId,
    pub environment: String,
    pub period: String,
    /// `snapshot`, `building`, `queued`, `published` or `failed`.
    pub status: String,
    pub ledgers_snapshotted: u64,
    pub ledgers_built: u64,
    pub statement_hash: Option<Hash32>,
    pub supersedes: Option<Hash32>,
    pub superseded_by: Option<Hash32>,
    pub liabilities: Option<TotalView>,
    pub receivables: Option<TotalView>,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    pub created_at: String,
    pub published_at: Option<String>,
    pub failure: Option<String>,
    /// When retention purged its snapshot and nodes (its proofs answer
    /// 410); absent before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purged_at: Option<String>,
    /// The asset whose balances it sums (issue 43); absent for the default.
    #[serde(skip_serializing_if = "Asset::is_default")]
    pub asset: Asset,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TotalView {
    pub total: String,
    pub leaf_count: u64,
}

impl StatementView {
    pub fn of(row: &StatementRow) -> StatementView {
        let total = |t: &Option<String>, c: Option<u64>| match (t, c) {
            (Some(t), Some(c)) => Some(TotalView {
                total: t.clone(),
                leaf_count: c,
            }),
            _ => None,
        };
        StatementView {
            id: row.id.clone(),
            environment: row.environment.as_str().to_owned(),
            period: row.period.clone(),
            status: row.status.as_str().to_ascii_lowercase(),
            ledgers_snapshotted: row.ledger_count,
            ledgers_built: row.built_count,
            statement_hash: row.item_hash,
            supersedes: row.supersedes,
            superseded_by: row.superseded_by,
            liabilities: total(&row.liabilities_total, row.liabilities_count),
            receivables: total(&row.receivables_total, row.receivables_count),
            leaf_index: row.leaf_index,
            tree_size: row.tree_size,
            created_at: views::iso(row.created_at),
            published_at: row.published_at.map(views::iso),
            failure: row.failure.clone(),
            purged_at: row.purged_at.map(views::iso),
            asset: row.asset.clone(),
        }
    }
}

/// A period is closed once it is over: a delta's verification time is the
/// sequencer's clock, so nothing can be verified into a month after it
/// ends, and every balance at its end is final (docs/liabilities.md §1).
pub fn is_closed(period: Period, now_ms: u64) -> bool {
    i64::try_from(now_ms).is_ok_and(|now| period.end_ms() <= now)
}

/// A statement covers a month from the one of the tenant's first
/// verified delta on (to the last closed one, [`is_closed`]): an earlier
/// month has no ledger to state, and refusing it keeps a key from storing
/// a row and queueing a job for every month back to `0000-01` (issue 40).
///
/// # Errors
/// 400 naming `period` when it is before the first delta's month, or the
/// tenant has no verified delta yet; D1 errors.
async fn check_after_first_delta(
    db: &D1Database,
    tenant_id: &TenantId,
    period: Period,
) -> ApiResult<()> {
    let first = crate::store::ledgers::first_tenant_window(db, tenant_id).await?;
    let Some(first) = first else {
        return Err(ApiError::field(
            "period",
            "the environment has no verified delta yet; a statement covers the months from its first delta's to the last closed one",
        ));
    };
    let first_period = Period::parse(&first.window)
        .map_err(|e| ApiError::internal(format!("stored window: {e}")))?;
    if period < first_period {
        return Err(ApiError::field(
            "period",
            format!(
                "must be {first_period} or later: the month of the environment's first verified delta (a statement covers the months from it to the last closed one)"
            ),
        ));
    }
    Ok(())
}

/// Starts a statement of `period` for the tenant (or returns the one
/// being built): `(row, created)`.
///
/// # Errors
/// 409 when the period is not closed or has too many statements; 400
/// when it is before the tenant's first delta's month; D1 errors.
pub async fn request(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    (period, asset): (Period, &Asset),
) -> ApiResult<(StatementRow, bool)> {
    if !is_closed(period, app.now_ms) {
        return Err(ApiError::coded(
            ErrorCode::PeriodNotClosed,
            format!(
                "period: {period} is not closed until {}; a statement covers a month that is over",
                views::iso(u64::try_from(period.end_ms()).unwrap_or(0))
            ),
        ));
    }
    let db = db(app, log)?;
    check_after_first_delta(&db, tenant_id, period).await?;
    let period_text = period.to_string();
    if let Some(live) = store_l::latest_live(&db, tenant_id, &period_text, asset).await? {
        if matches!(
            live.status,
            StatementStatus::Snapshot | StatementStatus::Building | StatementStatus::Queued
        ) {
            return Ok((live, false));
        }
    }
    let made = store_l::count_of_period(&db, tenant_id, &period_text, asset).await?;
    if made >= STATEMENTS_PER_PERIOD_MAX {
        return Err(ApiError::coded(
            ErrorCode::Conflict,
            format!(
                "period: {period} already has {made} statements, the most a period may have ({STATEMENTS_PER_PERIOD_MAX})"
            ),
        ));
    }
    let seed: [u8; 32] = ids::random_bytes(32)?
        .try_into()
        .map_err(|_| ApiError::internal("seed length"))?;
    let builder = StatementBuilder::new(Seed(seed));
    let id = StatementId::new()?;
    store::batch(
        &db,
        vec![store_l::insert_stmt(
            &id,
            tenant_id,
            log.env,
            &period_text,
            &builder.to_text(),
            (app.now_ms, asset),
        )?],
    )
    .await?;
    let row = store_l::statement_by_id(&db, &id)
        .await?
        .ok_or_else(|| ApiError::internal("statement vanished after insert"))?;
    ring(app, log, &id).await;
    Ok((row, true))
}

/// A statement of the tenant.
///
/// # Errors
/// 404 when the tenant has no such statement.
pub async fn status(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    id: &StatementId,
) -> ApiResult<StatementRow> {
    store_l::statement(&db(app, log)?, id, tenant_id)
        .await?
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::RecordNotFound,
                format!("No liabilities statement with id {id}"),
            )
        })
}

/// The tenant's statements of `period`, newest first (at most
/// [`STATEMENTS_PER_PERIOD_MAX`]).
///
/// # Errors
/// D1 errors.
pub async fn of_period(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    (period, asset): (Period, &Asset),
) -> ApiResult<Vec<StatementRow>> {
    store_l::of_period(
        &db(app, log)?,
        tenant_id,
        &period.to_string(),
        STATEMENTS_PER_PERIOD_MAX,
        asset,
    )
    .await
}

/// DEV_MODE benchmark fixture: `n` ledgers of the tenant with a balance
/// at the end of `period` (no deltas), so a statement of 100,000 ledgers
/// can be built without emitting 100,000 deltas first.
///
/// # Errors
/// D1 errors.
pub async fn seed_bench(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    period: Period,
    n: u64,
) -> ApiResult<()> {
    app.require_dev_mode()?;
    store_l::seed_bench(
        &db(app, log)?,
        tenant_id,
        &period.to_string(),
        n,
        app.now_ms,
    )
    .await
}

/// Sends the job's next message. A lost one only delays: the cron rings
/// stalled statements again.
pub async fn ring(app: &App, log: LogId, id: &StatementId) {
    let job = Job::Liabilities {
        env: log.env,
        shard: log.shard,
        id: id.clone(),
    };
    let sent = match app.env.queue(QUEUE_WEBHOOKS) {
        Ok(q) => match crate::roundtrips::outbound().await {
            Ok(()) => q.send(job).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("liabilities job {id} not rung: {e}");
    }
}

/// One job message: up to [`PAGES_PER_RUN`] pages, then the next message
/// if work is left.
///
/// # Errors
/// D1 errors (the message is retried; every page is guarded).
pub async fn run(app: &App, env: Env, shard: u32, id: &StatementId) -> ApiResult<()> {
    let log = LogId::new(env, shard);
    let db = db(app, log)?;
    for _ in 0..PAGES_PER_RUN {
        let Some(row) = store_l::statement_by_id(&db, id).await? else {
            return Ok(());
        };
        let step = match row.status {
            StatementStatus::Snapshot => snapshot_page(app, &db, &row).await,
            StatementStatus::Building => build_page(app, log, &db, &row).await,
            _ => return Ok(()),
        };
        match step {
            Ok(Step::More) => {}
            Ok(Step::Queued) => {
                crate::ledger::doorbell::ring(app, log).await;
                return Ok(());
            }
            Err(Stop::Fail(why)) => {
                worker::console_warn!("liabilities {id}: failed: {why}");
                store_l::fail(&db, id, &why, app.now_ms).await?;
                return Ok(());
            }
            Err(Stop::Error(e)) => return Err(e),
        }
    }
    ring(app, log, id).await;
    Ok(())
}

enum Step {
    More,
    Queued,
}

/// Why a page stops: a failure of the statement (it ends FAILED, kept with
/// why) or an error to retry.
enum Stop {
    Fail(String),
    Error(ApiError),
}

impl From<ApiError> for Stop {
    fn from(e: ApiError) -> Self {
        Stop::Error(e)
    }
}

fn builder_of(row: &StatementRow) -> Result<StatementBuilder, Stop> {
    StatementBuilder::from_text(&row.builder_state)
        .map_err(|e| Stop::Error(ApiError::internal(format!("builder state: {e}"))))
}

async fn plan_of(app: &App, tenant_id: &TenantId) -> ApiResult<Plan> {
    store::accounts::tenant_plan(&app.control_db()?, tenant_id).await
}

/// Stored bytes of `rows` text fields, for the storage meter.
fn stored<'a>(texts: impl Iterator<Item = &'a str>, fixed_per_row: u64) -> u64 {
    texts.map(|t| t.len() as u64 + fixed_per_row).sum()
}

/// Phase 1: one page of balances at the period's end.
async fn snapshot_page(app: &App, db: &D1Database, row: &StatementRow) -> Result<Step, Stop> {
    let builder = builder_of(row)?;
    let page = store_l::balances(
        db,
        &row.tenant_id,
        &row.snapshot_cursor,
        &row.period,
        SNAPSHOT_PAGE,
        &row.asset,
    )
    .await?;
    let Some(last) = page.last().map(|b| b.customer_id.clone()) else {
        if row.ledger_count == 0 {
            return Err(Stop::Fail(format!(
                "no ledger had a verified delta by the end of {}",
                row.period
            )));
        }
        let s = store_l::set_snapshot(
            &row.id,
            &row.snapshot_cursor,
            0,
            StatementStatus::Building,
            app.now_ms,
            &row.snapshot_cursor,
        )?;
        store::batch(db, vec![s]).await?;
        return Ok(Step::More);
    };
    let mut rows = Vec::with_capacity(page.len());
    for b in &page {
        // A ledger with no delta verified by the period's end was not a
        // customer yet: it has no leaf.
        let Some(balance) = b.balance else { continue };
        let ledger = ledger_id(row.tenant_id.as_str(), b.customer_id.as_str());
        let key = builder.seed().order_key(&ledger).to_hex();
        // Stored as its canonical decimal text (a JSON string, not a number).
        rows.push((key, b.customer_id.clone(), balance.to_string()));
    }
    let plan = plan_of(app, &row.tenant_id).await?;
    let bytes = stored(rows.iter().map(|r| r.1.as_str()), 64 + 24 + 32);
    let raise = meter::bytes(&row.tenant_id, bytes, plan);
    let mut statements = vec![meters::raise(&raise)?];
    statements.extend(store_l::insert_ledgers(&row.id, &rows)?);
    statements.push(store_l::set_snapshot(
        &row.id,
        last.as_str(),
        rows.len() as u64,
        StatementStatus::Snapshot,
        app.now_ms,
        &row.snapshot_cursor,
    )?);
    match meters::batch_within_caps(db, statements, &[raise]).await? {
        Ok(_) => Ok(Step::More),
        Err(_) => Err(Stop::Fail(
            "the plan's storage is full: the statement's snapshot does not fit".into(),
        )),
    }
}

/// Phase 2: one page pushed through the builder, its nodes stored with the
/// new state; or, with nothing left, the statement finished and QUEUED.
async fn build_page(
    app: &App,
    log: LogId,
    db: &D1Database,
    row: &StatementRow,
) -> Result<Step, Stop> {
    let mut builder = builder_of(row)?;
    let page = store_l::page(db, &row.id, &row.build_cursor, BUILD_PAGE).await?;
    let Some(last) = page.last().map(|l| l.order_key.clone()) else {
        return finish(app, log, db, row, &builder).await;
    };
    let mut nodes: Vec<(&'static str, u8, u64, String, String)> = Vec::new();
    let mut indexes: Vec<(&str, &str, String, u64, Option<u64>)> = Vec::with_capacity(page.len());
    for l in &page {
        let ledger = ledger_id(row.tenant_id.as_str(), l.customer_id.as_str());
        let balance = l.balance;
        let placed = builder
            .push(ledger, balance)
            .map_err(|e| Stop::Fail(format!("customer {}: {e}", l.customer_id)))?;
        for (kind, addr, node) in placed.nodes {
            nodes.push((
                kind.name(),
                addr.level,
                addr.index,
                node.hash.to_hex(),
                node.sum.to_string(),
            ));
        }
        indexes.push((
            l.order_key.as_str(),
            l.customer_id.as_str(),
            l.balance.to_string(),
            placed.liabilities_index,
            placed.receivables_index,
        ));
    }
    let plan = plan_of(app, &row.tenant_id).await?;
    let bytes = stored(nodes.iter().map(|n| n.4.as_str()), 64 + 24);
    let raise = meter::bytes(&row.tenant_id, bytes, plan);
    let builder_text = builder.to_text();
    let mut statements = vec![meters::raise(&raise)?];
    statements.extend(store_l::insert_nodes(&row.id, &nodes)?);
    statements.extend(store_l::set_indexes(&row.id, &indexes)?);
    statements.push(store_l::set_built(
        &row.id,
        &builder_text,
        &last,
        page.len() as u64,
        app.now_ms,
        &row.build_cursor,
    )?);
    match meters::batch_within_caps(db, statements, &[raise]).await? {
        Ok(_) => Ok(Step::More),
        Err(_) => Err(Stop::Fail(
            "the plan's storage is full: the statement's nodes do not fit".into(),
        )),
    }
}

/// The statement over every ledger pushed, superseding the period's last
/// published one, QUEUED for the log.
async fn finish(
    app: &App,
    log: LogId,
    db: &D1Database,
    row: &StatementRow,
    builder: &StatementBuilder,
) -> Result<Step, Stop> {
    let env = row.environment;
    let period = Period::parse(&row.period)
        .map_err(|e| ApiError::internal(format!("stored period: {e}")))?;
    let previous = store_l::latest_published(db, &row.tenant_id, &row.period, &row.asset).await?;
    let supersedes = previous.and_then(|p| p.item_hash);
    let statement = builder
        .finish(row.tenant_id.as_str(), env, period, supersedes)
        .map_err(|e| Stop::Fail(e.to_string()))?
        .of_asset(row.asset.clone());
    let json = statement.canonical_json();
    let item = statement.item_hash();
    let f = Finished {
        statement_json: &json,
        item_hash: &item,
        supersedes: supersedes.as_ref(),
        liabilities_total: statement.liabilities.total,
        liabilities_count: statement.liabilities.leaf_count,
        receivables_total: statement.receivables.total,
        receivables_count: statement.receivables.leaf_count,
    };
    // The public verify route finds the statement's shard by its hash (the
    // proof-root index); recorded first, so a published statement always
    // has its row (an orphan row of a failed batch names nothing).
    store::roots::insert(&app.control_db()?, &item, log.env, log.shard, app.now_ms).await?;
    store::batch(db, vec![store_l::set_queued(&row.id, &f, app.now_ms)?]).await?;
    Ok(Step::Queued)
}

/// The cron's part, per shard: starts the statements of the last closed
/// month for tenants active in it that have none (at most
/// [`CRON_STARTS_MAX`]), and rings jobs that lost their message.
///
/// # Errors
/// D1 errors.
pub async fn sweep(app: &App, log: LogId) -> ApiResult<()> {
    let db = db(app, log)?;
    let now = i64::try_from(app.now_ms).unwrap_or(i64::MAX);
    let current = Period::containing(now);
    let last_closed = Period::containing(current.start_ms() - 1);
    let due = store_l::due_tenants(&db, &last_closed.to_string(), CRON_STARTS_MAX).await?;
    for tenant in due {
        if let Err(e) = request(app, &tenant, log, (last_closed, &Asset::Default)).await {
            worker::console_error!("liabilities {tenant} {last_closed}: {e:?}");
        }
    }
    let stalled =
        store_l::stalled(&db, app.now_ms.saturating_sub(STALLED_MS), CRON_STARTS_MAX).await?;
    for s in stalled {
        ring(app, log, &s.id).await;
    }
    Ok(())
}
