//! Refused deltas (issue 43, docs/balance.md "Conditions"): the round's
//! FAILED marks with their refusal items, and the reads of a ledger's
//! refusals for receipts and derive.

use bvs_core::types::{Asset, CustomerId};

use super::deltas::select_deltas;
use super::{args, over_json, Statements};
use crate::ids::TenantId;

/// A delta a round refused (issue 43): its refusal item's text and leaf,
/// and its `failure` as stored.
pub struct RefusedDelta<'a> {
    pub anchor_id: &'a str,
    pub leaf_index: u64,
    /// The position it met: the asset's verified deltas before it.
    pub sequence: u64,
    pub refusal: String,
    pub failure: String,
}

const MARK_REFUSED_SET: &str = "UPDATE deltas SET status = 'FAILED', \
     refusal_leaf = json_extract(j.value, '$[1]'), refusal = json_extract(j.value, '$[2]'), \
     failure = json_extract(j.value, '$[3]'), refusal_seq = json_extract(j.value, '$[4]'), \
     tree_size = ?2, refused_at = ?3 \
     FROM json_each(?1) AS j \
     WHERE deltas.anchor_id = json_extract(j.value, '$[0]') AND +deltas.status = 'QUEUED'";

/// Marks a round's refused deltas FAILED with their refusal items (all
/// into one head, at one time): one statement per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn mark_refused_all<'a>(
    refused: &[RefusedDelta<'_>],
    tree_size: u64,
    refused_at: u64,
) -> Statements<'a> {
    let rows: Vec<(&str, u64, &str, &str, u64)> = refused
        .iter()
        .map(|r| {
            let (refusal, failure) = (r.refusal.as_str(), r.failure.as_str());
            (r.anchor_id, r.leaf_index, refusal, failure, r.sequence)
        })
        .collect();
    over_json(MARK_REFUSED_SET, &rows, &args![tree_size, refused_at])
}

/// A ledger's refused deltas (issue 43) refused from `?4` to before `?5`,
/// at most `?6`, in log order (the partial index
/// `deltas_refused_by_ledger`).
const SELECT_REFUSALS: &str = select_deltas!(
    " WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND refusal_leaf IS NOT NULL \
     AND refused_at >= ?4 AND refused_at < ?5 ORDER BY refusal_seq ASC, refusal_leaf ASC LIMIT ?6"
);
/// A ledger's refused deltas that met positions `?4 ..= ?5` (derive's
/// page from genesis), at most `DERIVE_REFUSALS_MAX`, in log order.
const SELECT_REFUSALS_OF_SPAN: &str = select_deltas!(
    " WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND refusal_leaf IS NOT NULL \
     AND refusal_seq >= ?4 AND refusal_seq <= ?5 ORDER BY refusal_seq ASC, refusal_leaf ASC LIMIT 100"
);

super::statements! {
    /// A ledger's refused deltas of `[from_ms, to_ms)`, at most `max`,
    /// for a receipt's or derive's batch.
    pub fn refusals_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, asset: &'a Asset, from_ms: u64, to_ms: u64, max: u64)
        = SELECT_REFUSALS;
    /// A ledger's refused deltas that met positions `from ..= to`.
    pub fn refusals_of_span_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, asset: &'a Asset, from_seq: u64, to_seq: u64)
        = SELECT_REFUSALS_OF_SPAN;
}
