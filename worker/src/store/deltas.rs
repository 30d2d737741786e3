//! Deltas: read by the routes and the sequencer, marked VERIFIED by the
//! sequencer (they are inserted with their submission, see `submissions`).

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, args, first, queries, row, stmt, ItemStatus};
use crate::error::ApiResult;

row! {
    $ select_deltas from "deltas";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct DeltaRow {
        anchor_id: String, tenant_id: String, customer_id: String, submission_id: String,
        position: u64, item_hash: Hash32, items_root: Hash32,
        #[serde(deserialize_with = "super::amount")]
        delta: Amount,
        reason: Option<String>, reference_id: Option<String>, metadata: Option<String>,
        declared_at: u64, received_at: u64, status: ItemStatus, leaf_index: Option<u64>,
        tree_size: Option<u64>, ledger_seq: Option<u64>,
        #[serde(deserialize_with = "super::opt_amount")]
        balance_after: Option<Amount>,
        verified_at: Option<u64>, data_purged: u64, purged_at: Option<u64>,
    }
}

const SELECT_QUEUED: &str = select_deltas!("WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1");
const SELECT_ONE: &str = select_deltas!("WHERE tenant_id = ?1 AND anchor_id = ?2");
const SELECT_OF_SUBMISSION_IN_TENANT: &str =
    select_deltas!("WHERE tenant_id = ?1 AND submission_id = ?2 ORDER BY position ASC");
const SELECT_OF_SUBMISSIONS_BY_ROOT: &str = select_deltas!(
    "WHERE submission_id IN (SELECT id FROM submissions WHERE items_root = ?1 LIMIT 10) \
     ORDER BY position ASC"
);
const SELECT_LEDGER_RANGE: &str = select_deltas!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND ledger_seq >= ?3 AND ledger_seq <= ?4 \
     ORDER BY ledger_seq ASC"
);
const SELECT_LEDGER_AT: &str =
    select_deltas!("WHERE tenant_id = ?1 AND customer_id = ?2 AND ledger_seq = ?3");
const SELECT_LEDGER_BY_ITEMS_ROOT: &str = select_deltas!(
    "WHERE items_root = ?3 AND tenant_id = ?1 AND customer_id = ?2 AND status = 'VERIFIED' \
     ORDER BY ledger_seq DESC LIMIT 1"
);
const SELECT_IN_LEAF_RANGE: &str = select_deltas!(
    "WHERE tenant_id = ?1 AND (?2 IS NULL OR customer_id = ?2) AND status = 'VERIFIED' \
     AND verified_at >= ?3 AND verified_at < ?4 AND leaf_index >= ?5 AND leaf_index <= ?6 \
     ORDER BY leaf_index ASC LIMIT ?7 OFFSET ?8"
);
const SELECT_LEDGER_LINES: &str = "SELECT item_hash, anchor_id, reference_id, delta FROM deltas \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND ledger_seq >= ?3 AND ledger_seq <= ?4 \
     ORDER BY ledger_seq ASC";
const COUNT_QUEUED_OF_LEDGER: &str =
    "SELECT COUNT(*) AS n FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 AND status = 'QUEUED'";
const MARK_VERIFIED: &str =
    "UPDATE deltas SET status = 'VERIFIED', leaf_index = ?2, tree_size = ?3, ledger_seq = ?4, \
     balance_after = ?5, verified_at = ?6 WHERE anchor_id = ?1 AND status = 'QUEUED'";
const SELECT_OLDEST_QUEUED: &str =
    "SELECT MIN(at) AS at FROM (SELECT MIN(received_at) AS at FROM deltas WHERE status = 'QUEUED' \
     UNION ALL SELECT MIN(created_at) AS at FROM facts WHERE status = 'QUEUED')";

super::statements! {
    /// `of_ledger` for a caller's batch (`ledgers::ledger_page`).
    pub fn of_ledger_statement(tenant_id: &str, customer_id: &str, from_seq: u64, to_seq: u64)
        = SELECT_LEDGER_RANGE;
}

super::statements! {
    /// The deltas of the submissions with items root `root` (any tenant),
    /// for a caller's batch (`store::lookup`).
    pub fn of_submissions_by_root_statement(root: &str) = SELECT_OF_SUBMISSIONS_BY_ROOT;
}

queries! {
    pub fn queued(limit: usize) -> Vec<DeltaRow> = all(SELECT_QUEUED; limit as u64);
    pub fn delta(tenant_id: &str, anchor_id: &str) -> Option<DeltaRow> = first(SELECT_ONE);
    pub fn of_submission_in_tenant(tenant_id: &str, submission_id: &str) -> Vec<DeltaRow>
        = all(SELECT_OF_SUBMISSION_IN_TENANT);
    /// All deltas of a submission, any tenant (public verify resolves by root).
    /// Verified deltas of a ledger with `from_seq <= ledger_seq <= to_seq`.
    pub fn of_ledger(tenant_id: &str, customer_id: &str, from_seq: u64, to_seq: u64) -> Vec<DeltaRow>
        = all(SELECT_LEDGER_RANGE);
    pub fn of_ledger_at(tenant_id: &str, customer_id: &str, seq: u64) -> Option<DeltaRow>
        = first(SELECT_LEDGER_AT);
    /// The latest verified delta of this ledger whose itemsRoot is `items_root`.
    pub fn of_ledger_by_items_root(tenant_id: &str, customer_id: &str, items_root: &str)
        -> Option<DeltaRow> = first(SELECT_LEDGER_BY_ITEMS_ROOT);
    pub fn queued_count(tenant_id: &str, customer_id: &str) -> u64 = count(COUNT_QUEUED_OF_LEDGER);
}

/// What a pinpointing compare needs of a verified delta: its ids and amount.
#[derive(Debug, Clone, Deserialize)]
pub struct LedgerLine {
    pub item_hash: Hash32,
    pub anchor_id: String,
    pub reference_id: Option<String>,
    #[serde(deserialize_with = "super::amount")]
    pub delta: Amount,
}

/// The ids and amounts of a ledger's verified deltas with
/// `from_seq <= ledger_seq <= to_seq`, in ledger order.
pub async fn lines_of_ledger(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    from_seq: u64,
    to_seq: u64,
) -> ApiResult<Vec<LedgerLine>> {
    let args = args![tenant_id, customer_id, from_seq, to_seq];
    all(db, SELECT_LEDGER_LINES, &args).await
}

/// Verified deltas of a tenant (or of one customer: `customer` is `Some`)
/// verified in `[from_ms, to_ms)` at log positions `from_leaf..=to_leaf`,
/// by log position (paged).
pub struct LeafRange<'a> {
    pub tenant_id: &'a str,
    pub customer: Option<&'a str>,
    pub from_ms: u64,
    pub to_ms: u64,
    pub from_leaf: u64,
    pub to_leaf: u64,
}

pub async fn in_leaf_range(
    db: &D1Database,
    r: &LeafRange<'_>,
    offset: u64,
    limit: u64,
) -> ApiResult<Vec<DeltaRow>> {
    let args = args![
        r.tenant_id,
        r.customer,
        r.from_ms,
        r.to_ms,
        r.from_leaf,
        r.to_leaf,
        limit,
        offset
    ];
    all(db, SELECT_IN_LEAF_RANGE, &args).await
}

pub struct VerifiedDelta<'a> {
    pub anchor_id: &'a str,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub ledger_seq: u64,
    pub balance_after: Amount,
    pub verified_at: u64,
}

pub fn mark_verified(db: &D1Database, v: &VerifiedDelta<'_>) -> ApiResult<D1PreparedStatement> {
    let balance_after = v.balance_after.to_string();
    let args = args![
        v.anchor_id,
        v.leaf_index,
        v.tree_size,
        v.ledger_seq,
        &balance_after,
        v.verified_at
    ];
    stmt(db, MARK_VERIFIED, &args)
}

/// The receive time of the oldest QUEUED delta or fact, if any.
pub async fn oldest_queued_at(db: &D1Database) -> ApiResult<Option<u64>> {
    #[derive(Deserialize)]
    struct Oldest {
        at: Option<u64>,
    }
    let row: Option<Oldest> = first(db, SELECT_OLDEST_QUEUED, &[]).await?;
    Ok(row.and_then(|r| r.at))
}

const MARK_FAILED: &str =
    "UPDATE deltas SET status = 'FAILED' WHERE anchor_id = ?1 AND status = 'QUEUED'";

/// Marks a QUEUED delta FAILED (it can never be appended); a no-op for one
/// that is not QUEUED any more.
pub fn mark_failed(db: &D1Database, anchor_id: &str) -> ApiResult<D1PreparedStatement> {
    stmt(db, MARK_FAILED, &args![anchor_id])
}
