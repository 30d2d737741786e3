//! Checkpoints: a period's Merkle root over a ledger's (or all of a
//! tenant's) verified deltas, fixed when asked for and committed to the log
//! by the sequencer.

use bvs_core::amount::Amount;
use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId, Page, Period};
use worker::D1Database;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::{CheckpointId, TenantId};
use crate::ledger::{db, doorbell, LogId};
use crate::ledgers::require_ledger;
use crate::meter;
use crate::plan::Plan;
use crate::store::checkpoints;
pub use crate::store::checkpoints::{CheckpointOf, CheckpointRow};
use crate::store::meters::{self, Meter};
use crate::store::{ledgers, CheckpointStatus};

/// A listed checkpoint: its `txHash` once committed, and the same
/// ledger's previous committed checkpoint.
pub struct Listed {
    pub row: CheckpointRow,
    pub tx_hash: Option<Hash32>,
    pub previous: Option<Previous>,
}

/// The same ledger's previous committed checkpoint of a listed one.
pub struct Previous {
    pub id: CheckpointId,
    pub period: String,
    pub tree_size: Option<u64>,
}

/// A tenant's checkpoints, newest first, optionally of one customer (or
/// `all`) and one period; and how many match.
///
/// # Errors
/// D1 errors.
pub async fn list(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    customer: Option<&CheckpointOf>,
    period: Option<&str>,
    page: &Page,
) -> ApiResult<(Vec<Listed>, u64)> {
    let db = db(app, log)?;
    let (limit, offset) = (page.limit(), page.offset());
    // One round trip for the page, each row's head hash and previous
    // checkpoint, and the count (issue 25: not two reads per row).
    let (rows, total) = checkpoints::page(&db, tenant_id, customer, period, limit, offset).await?;
    let out = rows
        .into_iter()
        .map(|l| {
            let previous = match (l.row.tree_size, l.prev_id, l.prev_period) {
                (Some(_), Some(id), Some(period)) => Some(Previous {
                    id,
                    period,
                    tree_size: l.prev_tree_size,
                }),
                _ => None,
            };
            Listed {
                row: l.row,
                tx_hash: l.tx_hash,
                previous,
            }
        })
        .collect();
    Ok((out, total))
}

/// What a checkpoint covers: the window's frontier, delta count, net
/// amount and log span.
struct Window {
    frontier: String,
    count: u64,
    net: Amount,
    first_leaf: u64,
    last_leaf: u64,
}

/// Statements a caller adds to the checkpoint's own batch, made from the
/// row about to be written (an Idempotency-Key's claim and answer).
pub type Extra<'a> = &'a dyn Fn(&CheckpointRow) -> ApiResult<Vec<crate::store::Query<'a>>>;

/// Fixes the covered deltas and their root now (QUEUED) and rings the
/// sequencer, which commits the root to the log. `extra` statements join
/// the write's batch.
///
/// # Errors
/// 404 for an unknown customer; 422 when the period has no verified deltas;
/// 402 past the plan's checkpoints per month (nothing written).
pub async fn create(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    plan: Plan,
    (customer, asset): (Option<&CustomerId>, &Asset),
    period: Period,
    extra: Extra<'_>,
) -> ApiResult<CheckpointRow> {
    let db = db(app, log)?;
    if let Some(c) = customer {
        require_ledger(&db, tenant_id, c, asset).await?;
    }
    let who = CheckpointOf::of(customer);
    let Some(w) = window(&db, tenant_id, (customer, asset), &period.to_string()).await? else {
        return Err(ApiError::Unprocessable(format!(
            "No verified deltas to checkpoint for customer {} in period {period} (deltas belong to the \
             period in which they were verified)",
            customer.map_or(bvs_core::types::WHOLE_TENANT, CustomerId::as_str)
        )));
    };
    let frontier = checked_frontier(&w)?;
    let mut row = queued_row(app, tenant_id, who, period, &w, &frontier)?;
    // A whole-tenant checkpoint covers every asset (stored as '').
    if customer.is_some() {
        row.asset = asset.clone();
    }
    // Whether the records its public answer will list recompute its root,
    // checked once, now (the sweep checks one too large to do at once).
    row.records_verified = crate::ledger::backfill::check_new_checkpoint(app, log, &row).await?;
    // Counted against the plan's checkpoints per month in the same batch.
    let period_text = meter::month(app.now_ms).to_string();
    let raises = [meter::monthly(
        tenant_id,
        Meter::Checkpoints,
        &period_text,
        plan,
    )];
    let mut statements = vec![meters::raise(&raises[0])?, checkpoints::insert_stmt(&row)?];
    statements.extend(extra(&row)?);
    meters::batch_within_caps(&db, statements, &raises)
        .await?
        .map_err(|m| meter::over(m, plan, log.env, app.now_ms))?;
    crate::store::roots::insert(
        &app.control_db()?,
        &row.merkle_root,
        log.env,
        log.shard,
        app.now_ms,
    )
    .await?;
    doorbell::ring(app, log).await;
    Ok(row)
}

/// A new checkpoint of window `w` (customer `who`, or the whole tenant),
/// QUEUED with the frontier's root, nothing committed yet.
fn queued_row(
    app: &App,
    tenant_id: &TenantId,
    who: CheckpointOf,
    period: Period,
    w: &Window,
    frontier: &Frontier,
) -> ApiResult<CheckpointRow> {
    Ok(CheckpointRow {
        id: CheckpointId::new()?,
        tenant_id: tenant_id.clone(),
        customer_id: who,
        period: period.to_string(),
        merkle_root: frontier.root(),
        delta_count: w.count,
        net_delta: w.net,
        from_index: w.first_leaf,
        to_index: w.last_leaf,
        status: CheckpointStatus::Queued,
        created_at: app.now_ms,
        committed_at: None,
        leaf_index: None,
        tree_size: None,
        failure: None,
        records_verified: None,
        check_frontier: None,
        check_after_leaf: None,
        asset: Asset::Default,
    })
}

/// The window's frontier, which must cover exactly the deltas its
/// aggregates count.
fn checked_frontier(w: &Window) -> ApiResult<Frontier> {
    let frontier = Frontier::from_text(&w.frontier).map_err(ApiError::internal)?;
    if frontier.size() != w.count {
        return Err(ApiError::internal(format!(
            "window frontier covers {} deltas, aggregates say {}",
            frontier.size(),
            w.count
        )));
    }
    Ok(frontier)
}

/// The covered deltas' root, count and span, kept up to date by the
/// sequencer (`bvs_core::frontier`): O(log n) here, at any history size.
async fn window(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer, asset): (Option<&CustomerId>, &Asset),
    period: &str,
) -> ApiResult<Option<Window>> {
    match customer {
        Some(c) => {
            let Some(w) = ledgers::window(db, tenant_id, c, period, asset).await? else {
                return Ok(None);
            };
            let net = w
                .balance_after
                .checked_sub(w.balance_before)
                .map_err(|e| ApiError::internal(format!("net delta: {e}")))?;
            Ok(Some(Window {
                frontier: w.frontier,
                count: w.last_seq + 1 - w.first_seq,
                net,
                first_leaf: w.first_leaf,
                last_leaf: w.last_leaf,
            }))
        }
        None => {
            let Some(w) = ledgers::tenant_window(db, tenant_id, period).await? else {
                return Ok(None);
            };
            Ok(Some(Window {
                frontier: w.frontier,
                count: w.deltas_count,
                net: w.net_delta,
                first_leaf: w.first_leaf,
                last_leaf: w.last_leaf,
            }))
        }
    }
}
