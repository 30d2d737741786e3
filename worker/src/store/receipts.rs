//! Receipts handed out: what a receipt's itemsRoot covers, so public
//! verify can resolve it; and what a receipt reads (issue 16: one batch).

use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::agreement::{self, LoggedKey, LoggedStatement};
use super::checkpoints::{self, CheckpointRow};
use super::deltas::{self, DeltaRow};
use super::ledgers::{self, LedgerRow, WindowRow};
use super::log::{self, HeadRow};
use super::rows;
use super::{args, batch, Query};
use crate::error::ApiResult;
use crate::ids::TenantId;

const INSERT: &str =
    "INSERT OR IGNORE INTO receipts (items_root, tenant_id, customer_id, period, from_seq, to_seq, \
     delta_count, generated_at, asset) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const SELECT_BY_ROOT: &str =
    "SELECT items_root, tenant_id, customer_id, asset, period, from_seq, to_seq, delta_count, \
     generated_at FROM receipts WHERE items_root = ?1 ORDER BY tenant_id ASC, customer_id ASC LIMIT 10";

#[derive(Debug, Clone, Deserialize)]
pub struct ReceiptRow {
    pub items_root: Hash32,
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub asset: Asset,
    pub period: Option<String>,
    pub from_seq: u64,
    pub to_seq: u64,
    pub delta_count: u64,
    pub generated_at: u64,
}

/// The receipt's record, for the batch that reads its proofs' stored
/// hashes (`ledger::tiles::inclusion_proofs_with`).
///
/// # Errors
/// A value that cannot be bound.
pub fn record<'a>(r: &'a ReceiptRow) -> ApiResult<Query<'a>> {
    let args = args![
        &r.items_root,
        &r.tenant_id,
        &r.customer_id,
        r.period.as_deref(),
        r.from_seq,
        r.to_seq,
        r.delta_count,
        r.generated_at,
        &r.asset
    ];
    Ok(Query::new(INSERT, args))
}

/// Whose receipt: a customer's whole ledger (`period` None) or one period.
pub struct ReceiptOf<'a> {
    pub tenant_id: &'a TenantId,
    pub customer_id: &'a CustomerId,
    pub asset: &'a Asset,
    pub period: Option<&'a str>,
    /// The customer's ledger id (`ledgers::ledger_id`).
    pub ledger_id: &'a Hash32,
    /// Read at most this many deltas.
    pub deltas_max: u64,
}

/// What a receipt reads, in one round trip (one batch: one snapshot):
/// the ledger, the period's window, the deltas (`ledger_seq` from 1, or
/// the window's), the log's head, and for its agreement side the
/// committed checkpoints of the customer that can have its root, the
/// ledger's key and the statements about those checkpoints (with their
/// log positions).
pub struct ReceiptRead {
    pub ledger: Option<LedgerRow>,
    pub window: Option<WindowRow>,
    pub deltas: Vec<DeltaRow>,
    pub head: Option<HeadRow>,
    pub checkpoints: Vec<CheckpointRow>,
    /// Every key of the ledger, oldest first.
    pub keys: Vec<LoggedKey>,
    pub statements: Vec<LoggedStatement>,
    /// The published forms of the newest witnessed head and of the latest
    /// head (issue 28), newest first.
    pub witnessed: Vec<super::witness::WitnessedRow>,
    /// The ledger's refused deltas of the span (issue 43), in log order:
    /// at most `deltas_max + 1`.
    pub refusals: Vec<DeltaRow>,
}

/// Reads a [`ReceiptRead`].
///
/// # Errors
/// D1 errors.
pub async fn read(db: &D1Database, r: &ReceiptOf<'_>) -> ApiResult<ReceiptRead> {
    let (tenant, customer, asset) = (r.tenant_id, r.customer_id, r.asset);
    let deltas = match r.period {
        None => deltas::of_ledger_statement(tenant, customer, 1, r.deltas_max, asset)?,
        Some(p) => deltas::of_window_statement(tenant, customer, p, r.deltas_max, asset)?,
    };
    let mut statements = vec![
        ledgers::ledger_statement(tenant, customer, asset)?,
        deltas,
        log::latest_head_statement()?,
        checkpoints::RECEIPT_CANDIDATES.statement(tenant, customer, (r.period, asset))?,
        agreement::logged_keys(tenant, r.ledger_id)?,
        agreement::LOGGED_STATEMENTS.statement(tenant, customer, (r.period, asset))?,
        super::witness::published_candidates_statement()?,
    ];
    // Refused in the period's month (whose positions are the span's), or
    // ever for a whole history.
    let (from_ms, to_ms) = match r.period.map(bvs_core::types::Period::parse) {
        Some(Ok(p)) => (p.start_ms(), p.end_ms()),
        _ => (0, i64::MAX),
    };
    let (from_ms, to_ms) = (
        u64::try_from(from_ms).unwrap_or(0),
        u64::try_from(to_ms).unwrap_or(0),
    );
    let max = r.deltas_max + 1;
    statements.push(super::refusals::refusals_statement(
        tenant, customer, asset, from_ms, to_ms, max,
    )?);
    if let Some(p) = r.period {
        statements.push(ledgers::window_statement(tenant, customer, p, asset)?);
    }
    let results = batch(db, statements).await?;
    Ok(ReceiptRead {
        ledger: rows(&results, 0)?.into_iter().next(),
        deltas: rows(&results, 1)?,
        head: rows(&results, 2)?.into_iter().next(),
        checkpoints: rows(&results, 3)?,
        keys: rows(&results, 4)?,
        statements: rows(&results, 5)?,
        witnessed: rows(&results, 6)?,
        refusals: rows(&results, 7)?,
        window: match r.period {
            Some(_) => rows(&results, 8)?.into_iter().next(),
            None => None,
        },
    })
}

super::statements! {
    /// Receipts with items root `root`, for a caller's batch (`store::proofs`).
    pub fn by_root_statement<'a>(root: &'a Hash32) = SELECT_BY_ROOT;
}
