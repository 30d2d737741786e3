//! What the dashboard's charts read (issue 30): a customer's balance after
//! each verified delta (downsampled in SQL past a number of points), and
//! the per-day delta figures of `delta_days`
//! (migrations/ledger/0090_request_log.sql) that the webhook dispatcher
//! raises.

use bvs_core::amount::Amount;
use bvs_core::types::CustomerId;
use serde::Deserialize;
use worker::D1Database;

use super::ledgers::LedgerRow;
use super::Query;
use super::{queries, row};
use crate::error::ApiResult;
use crate::ids::{AnchorId, TenantId};

/// The ledger's verified deltas in ledger order: every one while there are
/// at most `?3`, else every k-th (k = ceil(total / `?3`)) with the first
/// and the last. One pass over the ledger's index (`deltas_by_ledger`).
const SELECT_HISTORY: &str =
    "SELECT d.anchor_id, d.ledger_seq, d.verified_at, d.delta, d.balance_after FROM deltas d, \
     (SELECT verified_count AS total FROM ledgers WHERE tenant_id = ?1 AND customer_id = ?2 \
     AND asset = '') n \
     WHERE d.tenant_id = ?1 AND d.customer_id = ?2 AND d.asset = '' AND d.ledger_seq IS NOT NULL \
     AND (d.ledger_seq = 1 OR d.ledger_seq = n.total \
     OR d.ledger_seq % ((n.total + ?3 - 1) / ?3) = 0) ORDER BY d.ledger_seq";
row! {
    /// One point: the balance after a verified delta.
    #[derive(Debug, Clone, Deserialize)]
    pub struct PointRow {
        anchor_id: AnchorId, ledger_seq: u64, verified_at: u64,
        #[serde(deserialize_with = "super::amount")]
        delta: Amount,
        #[serde(deserialize_with = "super::amount")]
        balance_after: Amount,
    }
}

/// The ledger and its points, read concurrently (one round trip's time).
///
/// # Errors
/// D1 errors.
pub async fn history(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    points_max: u64,
) -> ApiResult<(Option<LedgerRow>, Vec<PointRow>)> {
    futures_util::future::try_join(
        super::ledgers::ledger(db, tenant_id, customer_id, &bvs_core::types::Asset::Default),
        points(db, tenant_id, customer_id, points_max),
    )
    .await
}

queries! {
    fn points(tenant_id: &TenantId, customer_id: &CustomerId, points_max: u64) -> Vec<PointRow>
        = all(SELECT_HISTORY);
}

/// Raises (tenant, day, bucket) counts from the JSON set `?1` (`[tenant_id,
/// day, bucket, n]` each: one statement whatever the number, issue 27);
/// `changes()` guards the whole statement: it runs only if the batch's
/// previous statement changed a row.
const RAISE_DAYS: &str = "INSERT INTO delta_days (tenant_id, day, bucket, n) \
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]') FROM json_each(?1) \
     WHERE changes() > 0 \
     ON CONFLICT (tenant_id, day, bucket) DO UPDATE SET n = n + excluded.n";
const SELECT_DAYS: &str = "SELECT day, bucket, n FROM delta_days \
     WHERE tenant_id = ?1 AND day >= ?2 AND day <= ?3 ORDER BY day, bucket";

/// One raise of a day's bucket.
pub struct DayRaise {
    pub tenant_id: TenantId,
    pub day: String,
    pub bucket: u32,
    pub n: u64,
}

/// Statements raising `raises`, for the batch right after a statement
/// whose change they depend on: each runs only if the statement before it
/// changed a row (a raise changes at least one, so they chain).
///
/// # Errors
/// A value that cannot be bound.
pub fn raise_days<'a>(raises: &[DayRaise]) -> ApiResult<Vec<Query<'a>>> {
    let rows: Vec<(&str, &str, u32, u64)> = raises
        .iter()
        .map(|r| (r.tenant_id.as_str(), r.day.as_str(), r.bucket, r.n))
        .collect();
    super::sets::over_json(RAISE_DAYS, &rows, &[])
}

row! {
    #[derive(Debug, Clone, Deserialize)]
    pub struct DayRow { day: String, bucket: u32, n: u64 }
}

queries! {
    /// The tenant's day figures from `from` to `to` (YYYY-MM-DD, inclusive).
    pub fn days(tenant_id: &TenantId, from: &str, to: &str) -> Vec<DayRow> = all(SELECT_DAYS);
}
