//! What a balance as of a moment reads (issue 43, docs/balance.md "As
//! of"): the boundary delta by verification time (one window's deltas at
//! most, never the history), then the span its proof lists with the
//! head to prove it into.

use bvs_core::types::{Asset, CustomerId};
use worker::D1Database;

use super::deltas::{self, select_deltas, DeltaRow};
use super::ledgers::{self, LedgerRow};
use super::log::{self, HeadRow};
use super::witness::WitnessedRow;
use super::{args, batch, rows, Query};
use crate::error::ApiResult;
use crate::ids::TenantId;

/// The last verified delta at or before `?5` ms within the latest window
/// of `?4` (`YYYY-MM`) or before: a walk of that window's deltas only.
const SELECT_BOUNDARY_IN_WINDOW: &str = select_deltas!(
    ", (SELECT first_seq AS wf, last_seq AS wl FROM ledger_windows \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND window <= ?4 \
     ORDER BY window DESC LIMIT 1) AS w \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 \
     AND ledger_seq >= w.wf AND ledger_seq <= w.wl AND verified_at <= ?5 \
     ORDER BY ledger_seq DESC LIMIT 1"
);
/// The last delta of the latest window before `?4` (when every delta of
/// `?4`'s own window is later than the moment).
const SELECT_BOUNDARY_BEFORE_WINDOW: &str = select_deltas!(
    ", (SELECT last_seq AS wl FROM ledger_windows \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND window < ?4 \
     ORDER BY window DESC LIMIT 1) AS w \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND ledger_seq = w.wl"
);

/// The ledger, and its boundary delta as of `at_ms` (in `month`) by
/// verification time: `None` before its first delta.
pub struct Boundary {
    pub ledger: Option<LedgerRow>,
    pub boundary: Option<DeltaRow>,
}

/// Reads a [`Boundary`] in one round trip.
///
/// # Errors
/// D1 errors.
pub async fn boundary(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    month: &str,
    at_ms: u64,
) -> ApiResult<Boundary> {
    let at = args![tenant_id, customer_id, asset, month, at_ms];
    let before = args![tenant_id, customer_id, asset, month];
    let results = batch(
        db,
        vec![
            ledgers::ledger_statement(tenant_id, customer_id, asset)?,
            Query::new(SELECT_BOUNDARY_IN_WINDOW, at),
            Query::new(SELECT_BOUNDARY_BEFORE_WINDOW, before),
        ],
    )
    .await?;
    let within: Option<DeltaRow> = rows(&results, 1)?.into_iter().next();
    let before: Option<DeltaRow> = rows(&results, 2)?.into_iter().next();
    Ok(Boundary {
        ledger: rows(&results, 0)?.into_iter().next(),
        boundary: within.or(before),
    })
}

/// A span of a ledger's verified deltas and the heads to prove it into.
pub struct Span {
    pub ledger: Option<LedgerRow>,
    pub deltas: Vec<DeltaRow>,
    pub head: Option<HeadRow>,
    pub witnessed: Vec<WitnessedRow>,
}

/// Reads the verified deltas `from..=to` of a ledger with its row, the
/// latest head and the published witnessed candidates, in one round trip.
///
/// # Errors
/// D1 errors.
pub async fn span(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    (from, to): (u64, u64),
) -> ApiResult<Span> {
    let results = batch(
        db,
        vec![
            ledgers::ledger_statement(tenant_id, customer_id, asset)?,
            deltas::of_ledger_statement(tenant_id, customer_id, from, to, asset)?,
            log::latest_head_statement()?,
            super::witness::published_candidates_statement()?,
        ],
    )
    .await?;
    Ok(Span {
        ledger: rows(&results, 0)?.into_iter().next(),
        deltas: rows(&results, 1)?,
        head: rows(&results, 2)?.into_iter().next(),
        witnessed: rows(&results, 3)?,
    })
}
