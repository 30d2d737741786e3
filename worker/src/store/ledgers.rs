//! Ledgers (one per tenant and customer) with their running aggregates, and
//! the monthly windows kept per ledger (`ledger_windows`) and per tenant
//! (`tenant_windows`) by the sequencer.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::{args, over_json, queries, row, Query, Statements};
use crate::error::ApiResult;
use crate::ids::TenantId;

row! {
    $ select_ledgers from "ledgers";
    #[derive(Debug, Clone, Deserialize)]
    pub struct LedgerRow {
        tenant_id: TenantId, customer_id: CustomerId, asset: Asset, ledger_id: Hash32, verified_count: u64,
        #[serde(deserialize_with = "super::amount")]
        computed_balance: Amount,
        first_activity_at: Option<u64>, last_activity_at: Option<u64>,
        latest_items_root: Option<Hash32>, created_at: u64,
    }
}
row! {
    $ select_windows from "ledger_windows";
    #[derive(Debug, Clone, Deserialize)]
    pub struct WindowRow {
        window: String, first_seq: u64, last_seq: u64,
        #[serde(deserialize_with = "super::amount")]
        balance_before: Amount,
        #[serde(deserialize_with = "super::amount")]
        balance_after: Amount,
        first_verified_at: u64, last_verified_at: u64, frontier: String, first_leaf: u64,
        last_leaf: u64,
    }
}
row! {
    $ select_tenant_windows from "tenant_windows";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct TenantWindowRow {
        tenant_id: TenantId, window: String, deltas_count: u64,
        #[serde(deserialize_with = "super::amount")]
        net_delta: Amount,
        first_leaf: u64, last_leaf: u64, frontier: String,
    }
}

const SELECT_ONE: &str =
    select_ledgers!("WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3");
/// Every asset's row of one customer, the default asset first.
const SELECT_ASSETS_OF: &str =
    select_ledgers!("WHERE tenant_id = ?1 AND customer_id = ?2 ORDER BY asset ASC");
/// The tenant's customers are their default-asset rows (one each: the
/// emit writes it with any asset's first delta).
const SELECT_PAGE: &str = select_ledgers!(
    "WHERE tenant_id = ?1 AND asset = '' ORDER BY customer_id ASC LIMIT ?2 OFFSET ?3"
);
const COUNT_OF_TENANT: &str =
    "SELECT COUNT(*) AS n FROM ledgers WHERE tenant_id = ?1 AND asset = ''";
/// The named-asset rows of the customers `?2` (a JSON array) of tenant `?1`.
const SELECT_NAMED_OF_SET: &str = select_ledgers!(
    "WHERE tenant_id = ?1 AND customer_id IN (SELECT value FROM json_each(?2)) \
     AND asset != '' ORDER BY customer_id ASC, asset ASC"
);
/// Customer ids from `?2` (a prefix) up to `?3` (the prefix followed by
/// `{`, past every character a customer id may hold): the ids that start
/// with the prefix, read off the primary key (issue 30).
const SELECT_PAGE_IN_RANGE: &str = select_ledgers!(
    "WHERE tenant_id = ?1 AND customer_id >= ?2 AND customer_id < ?3 AND asset = '' \
     ORDER BY customer_id ASC LIMIT ?4 OFFSET ?5"
);
const COUNT_IN_RANGE: &str = "SELECT COUNT(*) AS n FROM ledgers \
     WHERE tenant_id = ?1 AND customer_id >= ?2 AND customer_id < ?3 AND asset = ''";
/// The ledgers of the keys `?1` (`[tenant_id, customer_id, asset]` each).
const SELECT_FOR_KEY_SET: &str = select_ledgers!(
    "WHERE (tenant_id, customer_id, asset) IN (SELECT json_extract(value, '$[0]'), \
     json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?1))"
);
/// A round's ledgers (`?1`: `[tenant_id, customer_id, verified_count,
/// computed_balance, latest_items_root, asset]` each), verified at `?2`.
const UPDATE_AGGREGATES_SET: &str = "UPDATE ledgers SET \
     verified_count = json_extract(j.value, '$[2]'), \
     computed_balance = json_extract(j.value, '$[3]'), \
     first_activity_at = COALESCE(first_activity_at, ?2), last_activity_at = ?2, \
     latest_items_root = json_extract(j.value, '$[4]') FROM json_each(?1) AS j \
     WHERE ledgers.tenant_id = json_extract(j.value, '$[0]') \
     AND ledgers.customer_id = json_extract(j.value, '$[1]') \
     AND ledgers.asset = json_extract(j.value, '$[5]')";
/// A round's ledger windows of window `?2` at `?3` (`?1`: `[tenant_id,
/// customer_id, first_seq, last_seq, balance_before, balance_after,
/// frontier, first_leaf, last_leaf, asset]` each).
const UPSERT_WINDOW_SET: &str =
    "INSERT INTO ledger_windows (tenant_id, customer_id, window, first_seq, last_seq, \
     balance_before, balance_after, first_verified_at, last_verified_at, frontier, first_leaf, \
     last_leaf, asset) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?2, \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
     json_extract(value, '$[5]'), ?3, ?3, json_extract(value, '$[6]'), \
     json_extract(value, '$[7]'), json_extract(value, '$[8]'), json_extract(value, '$[9]') \
     FROM json_each(?1) WHERE true \
     ON CONFLICT (tenant_id, customer_id, asset, window) DO UPDATE SET last_seq = excluded.last_seq, \
     balance_after = excluded.balance_after, last_verified_at = excluded.last_verified_at, \
     frontier = excluded.frontier, last_leaf = excluded.last_leaf";
/// The frontiers of window `?2` of the keys `?1`.
const SELECT_WINDOW_FRONTIER_SET: &str =
    "SELECT tenant_id, customer_id, asset, frontier FROM ledger_windows WHERE window = ?2 \
     AND (tenant_id, customer_id, asset) IN (SELECT json_extract(value, '$[0]'), \
     json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?1))";
const SELECT_WINDOWS_AFTER: &str = select_windows!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND last_seq > ?3 \
     ORDER BY first_seq ASC"
);
const SELECT_WINDOW: &str =
    select_windows!("WHERE tenant_id = ?1 AND customer_id = ?2 AND window = ?3 AND asset = ?4");
const SELECT_TENANT_WINDOW: &str = select_tenant_windows!("WHERE tenant_id = ?1 AND window = ?2");
/// The tenant's first month with a verified delta, read off the primary
/// key (`tenant_windows` is written by the sequencer and never purged).
const SELECT_FIRST_TENANT_WINDOW: &str =
    "SELECT window FROM tenant_windows WHERE tenant_id = ?1 ORDER BY window ASC LIMIT 1";
/// The tenant windows of window `?2` of the tenants `?1`.
const SELECT_TENANT_WINDOW_SET: &str =
    select_tenant_windows!("WHERE window = ?2 AND tenant_id IN (SELECT value FROM json_each(?1))");
/// A round's tenant windows of window `?2` (`?1`: `[tenant_id,
/// deltas_count, net_delta, first_leaf, last_leaf, frontier]` each).
const UPSERT_TENANT_WINDOW_SET: &str =
    "INSERT INTO tenant_windows (tenant_id, window, deltas_count, net_delta, first_leaf, last_leaf, \
     frontier) SELECT json_extract(value, '$[0]'), ?2, json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
     json_extract(value, '$[5]') FROM json_each(?1) WHERE true \
     ON CONFLICT (tenant_id, window) DO UPDATE SET deltas_count = excluded.deltas_count, \
     net_delta = excluded.net_delta, last_leaf = excluded.last_leaf, \
     frontier = excluded.frontier";

/// A ledger's latest root `?3` (a batch's, handed out before per-ledger
/// roots) replaced by its own ledger's root `?4`.
const SET_LATEST_ROOT: &str = "UPDATE ledgers SET latest_items_root = ?4 \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND latest_items_root = ?3";

super::statements! {
    /// For the ledger roots backfill (`ledger::backfill`).
    pub fn replace_latest_root<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, old: &'a Hash32, new: &'a Hash32)
        = SET_LATEST_ROOT;
}

queries! {
    pub fn ledger(tenant_id: &TenantId, customer_id: &CustomerId, asset: &Asset) -> Option<LedgerRow> = first(SELECT_ONE);
    /// Every asset's row of one customer, the default asset first.
    pub fn assets_of(tenant_id: &TenantId, customer_id: &CustomerId) -> Vec<LedgerRow> = all(SELECT_ASSETS_OF);
    /// The named-asset rows of the customers `customers` (a JSON array).
    pub fn named_of(tenant_id: &TenantId, customers: String) -> Vec<LedgerRow> = all(SELECT_NAMED_OF_SET);
    pub fn page(tenant_id: &TenantId, limit: u64, offset: u64) -> Vec<LedgerRow> = all(SELECT_PAGE);
    pub fn count_of_tenant(tenant_id: &TenantId) -> u64 = count(COUNT_OF_TENANT);
    /// A page of the ledgers whose customer id is in [`from`, `to`).
    pub fn page_in_range(tenant_id: &TenantId, from: &str, to: &str, limit: u64, offset: u64)
        -> Vec<LedgerRow> = all(SELECT_PAGE_IN_RANGE);
    pub fn count_in_range(tenant_id: &TenantId, from: &str, to: &str) -> u64 = count(COUNT_IN_RANGE);
}

/// A round's read of the ledgers it touches (`keys`: (tenant, customer,
/// asset key)),
/// their frontiers in `window`, and their tenants' windows: three
/// statements for the round's read batch, in that order (rows:
/// [`LedgerRow`], [`FrontierRow`], [`TenantWindowRow`]).
///
/// # Errors
/// A value that cannot be bound.
pub fn round_reads<'a>(
    keys: &[(TenantId, CustomerId, String)],
    tenants: &[TenantId],
    window: &'a str,
) -> ApiResult<[Query<'a>; 4]> {
    let pairs = serde_json::to_string(keys)?;
    let tenant_set = serde_json::to_string(tenants)?;
    Ok([
        Query::new(SELECT_FOR_KEY_SET, args![pairs.clone()]),
        Query::new(SELECT_WINDOW_FRONTIER_SET, args![pairs, window]),
        Query::new(SELECT_TENANT_WINDOW_SET, args![tenant_set.clone(), window]),
        Query::new(SELECT_FLOOR_SET, args![tenant_set]),
    ])
}

/// The default floors of the tenants `?1` (issue 43): their assets with a
/// `balance_at_least` (code `''`: the default asset).
const SELECT_FLOOR_SET: &str = "SELECT tenant_id, code, balance_at_least FROM assets \
     WHERE balance_at_least IS NOT NULL AND tenant_id IN (SELECT value FROM json_each(?1))";

/// A tenant's default floor of one asset, as [`round_reads`] reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct FloorRow {
    pub tenant_id: TenantId,
    /// The asset's code; `''` for the default asset.
    pub code: String,
    #[serde(deserialize_with = "super::amount")]
    pub balance_at_least: Amount,
}

/// A ledger window's frontier, as [`round_reads`] reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct FrontierRow {
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub asset: Asset,
    pub frontier: String,
}

row! {
    pub struct LedgerUpdate<'a> {
        tenant_id: &'a TenantId, customer_id: &'a CustomerId, asset: &'a Asset, old_count: u64, new_count: u64,
        old_balance: Amount, new_balance: Amount,
        /// Bound as `""` when None (no verified delta).
        latest_items_root: Option<Hash32>,
        /// The window's frontier after this round, and the log positions of
        /// the round's first and last delta of this ledger.
        frontier: String,
        first_leaf: u64, last_leaf: u64,
    }
}

/// The round's ledger aggregates and current windows (`window`), verified
/// at `now`: one statement per table and JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn update_all<'a>(updates: &[LedgerUpdate<'_>], window: &'a str, now: u64) -> Statements<'a> {
    let aggregates: Vec<(&str, &str, u64, String, String, String)> = updates
        .iter()
        .map(|u| {
            (
                u.tenant_id.as_str(),
                u.customer_id.as_str(),
                u.new_count,
                u.new_balance.to_string(),
                u.latest_items_root.map(|h| h.to_hex()).unwrap_or_default(),
                u.asset.key(),
            )
        })
        .collect();
    type WindowSet<'a> = (
        &'a str,
        &'a str,
        u64,
        u64,
        String,
        String,
        &'a str,
        u64,
        u64,
        String,
    );
    let windows: Vec<WindowSet<'_>> = updates
        .iter()
        .map(|u| {
            (
                u.tenant_id.as_str(),
                u.customer_id.as_str(),
                u.old_count + 1,
                u.new_count,
                u.old_balance.to_string(),
                u.new_balance.to_string(),
                u.frontier.as_str(),
                u.first_leaf,
                u.last_leaf,
                u.asset.key(),
            )
        })
        .collect();
    let mut out = over_json(UPDATE_AGGREGATES_SET, &aggregates, &args![now])?;
    out.extend(over_json(UPSERT_WINDOW_SET, &windows, &args![window, now])?);
    Ok(out)
}

/// The month of a tenant's first verified delta (`YYYY-MM`).
#[derive(Debug, Clone, Deserialize)]
pub struct FirstWindow {
    pub window: String,
}

queries! {
    /// The tenant's first month with a verified delta, if any.
    pub fn first_tenant_window(tenant_id: &TenantId) -> Option<FirstWindow>
        = first(SELECT_FIRST_TENANT_WINDOW);
    /// The window row of one period of a ledger.
    pub fn window(tenant_id: &TenantId, customer_id: &CustomerId, period: &str, asset: &Asset) -> Option<WindowRow>
        = first(SELECT_WINDOW);
    pub fn tenant_window(tenant_id: &TenantId, window: &str) -> Option<TenantWindowRow>
        = first(SELECT_TENANT_WINDOW);
}

/// The round's tenant windows (all of window `window`): one statement
/// per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn upsert_tenant_windows<'a>(rows: &[TenantWindowRow], window: &'a str) -> Statements<'a> {
    let set: Vec<(&str, u64, String, u64, u64, &str)> = rows
        .iter()
        .map(|w| {
            (
                w.tenant_id.as_str(),
                w.deltas_count,
                w.net_delta.to_string(),
                w.first_leaf,
                w.last_leaf,
                w.frontier.as_str(),
            )
        })
        .collect();
    over_json(UPSERT_TENANT_WINDOW_SET, &set, &args![window])
}

/// Windows ending after a starting delta named as `store::deltas::StartAt`
/// names it (`?1` tenant, `?2` customer, `?3` the name).
const SELECT_WINDOWS_AFTER_ITEMS_ROOT: &str = select_windows!(concat!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND last_seq > ",
    super::deltas::start_seq_by_items_root!("?4"),
    " ORDER BY first_seq ASC"
));
const SELECT_WINDOWS_AFTER_ANCHOR_ID: &str = select_windows!(concat!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND last_seq > ",
    super::deltas::start_seq_by_anchor_id!("?4"),
    " ORDER BY first_seq ASC"
));

super::statements! {
    /// Windows of a ledger that end after ledger_seq `after_seq`, oldest first.
    fn windows_after_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, after_seq: u64, asset: &'a Asset)
        = SELECT_WINDOWS_AFTER;
    pub(super) fn ledger_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, asset: &'a Asset) = SELECT_ONE;
}

super::statements! {
    /// The window row of one period of a ledger, for a caller's batch
    /// (`store::receipts`).
    pub(super) fn window_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, period: &'a str, asset: &'a Asset)
        = SELECT_WINDOW;
}

/// A ledger, its verified deltas with `from_seq <= ledger_seq <= to_seq`
/// and its windows ending after `after_seq`, in one round trip (one batch:
/// one snapshot).
pub struct LedgerPage {
    pub ledger: Option<LedgerRow>,
    pub deltas: Vec<super::deltas::DeltaRow>,
    pub windows: Vec<WindowRow>,
    /// The refused deltas that met the page's positions (issue 43).
    pub refusals: Vec<super::deltas::DeltaRow>,
}

/// Reads a [`LedgerPage`] (issue 16: derive from genesis in one read).
///
/// # Errors
/// D1 errors.
pub async fn ledger_page(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    (from_seq, to_seq): (u64, u64),
    after_seq: u64,
) -> ApiResult<LedgerPage> {
    let refusals_from = from_seq.saturating_sub(1);
    let results = super::batch(
        db,
        vec![
            ledger_statement(tenant_id, customer_id, asset)?,
            super::deltas::of_ledger_statement(tenant_id, customer_id, from_seq, to_seq, asset)?,
            windows_after_statement(tenant_id, customer_id, after_seq, asset)?,
            super::refusals::refusals_of_span_statement(
                tenant_id,
                customer_id,
                asset,
                refusals_from,
                to_seq,
            )?,
        ],
    )
    .await?;
    Ok(LedgerPage {
        ledger: super::rows(&results, 0)?.into_iter().next(),
        deltas: super::rows(&results, 1)?,
        windows: super::rows(&results, 2)?,
        refusals: super::rows(&results, 3)?,
    })
}

/// A ledger read from a starting delta: the ledger, the starting delta,
/// the delta right after it, one page of deltas after it and the windows
/// ending after it, in one round trip (one batch: one snapshot).
pub struct LedgerFrom {
    pub ledger: Option<LedgerRow>,
    /// None when the start names no verified delta of this ledger.
    pub start: Option<super::deltas::DeltaRow>,
    pub next: Option<super::deltas::DeltaRow>,
    pub deltas: Vec<super::deltas::DeltaRow>,
    pub windows: Vec<WindowRow>,
    /// The refused deltas that met the page's positions (issue 43).
    pub refusals: Vec<super::deltas::DeltaRow>,
}

/// Reads a [`LedgerFrom`] (issue 16: derive from a checkpoint in one
/// read): the page is the deltas at positions `start + first ..= start +
/// last`.
///
/// # Errors
/// D1 errors.
pub async fn ledger_page_from(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    start: super::deltas::StartAt<'_>,
    page: (u64, u64),
) -> ApiResult<LedgerFrom> {
    use super::deltas::StartAt;
    let (windows_sql, name) = match start {
        StartAt::ItemsRoot(r) => (SELECT_WINDOWS_AFTER_ITEMS_ROOT, r),
        StartAt::AnchorId(a) => (SELECT_WINDOWS_AFTER_ANCHOR_ID, a),
    };
    let [at, deltas, next, refusals] =
        super::deltas::from_start_statements(tenant_id, (customer_id, asset), start, page)?;
    let results = super::batch(
        db,
        vec![
            ledger_statement(tenant_id, customer_id, asset)?,
            at,
            deltas,
            next,
            Query::new(windows_sql, args![tenant_id, customer_id, name, asset]),
            refusals,
        ],
    )
    .await?;
    Ok(LedgerFrom {
        ledger: super::rows(&results, 0)?.into_iter().next(),
        start: super::rows(&results, 1)?.into_iter().next(),
        deltas: super::rows(&results, 2)?,
        next: super::rows(&results, 3)?.into_iter().next(),
        windows: super::rows(&results, 4)?,
        refusals: super::rows(&results, 5)?,
    })
}
