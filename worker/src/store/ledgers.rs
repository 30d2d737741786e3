//! Ledgers (one per tenant and customer) with their running aggregates, and
//! the monthly windows kept per ledger (`ledger_windows`) and per tenant
//! (`tenant_windows`) by the sequencer.

use bvs_core::amount::Amount;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{args, batch_rows, bind_pair, bind_text, chunked, queries, row, stmt, ListSql};
use crate::error::ApiResult;

row! {
    $ select_ledgers from "ledgers";
    #[derive(Debug, Clone, Deserialize)]
    pub struct LedgerRow {
        tenant_id: String, customer_id: String, ledger_id: String, verified_count: u64,
        #[serde(deserialize_with = "super::amount")]
        computed_balance: Amount,
        first_activity_at: Option<u64>, last_activity_at: Option<u64>,
        latest_items_root: Option<String>, created_at: u64,
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
    #[derive(Debug, Clone, Deserialize)]
    pub struct TenantWindowRow {
        tenant_id: String, window: String, deltas_count: u64,
        #[serde(deserialize_with = "super::amount")]
        net_delta: Amount,
        first_leaf: u64, last_leaf: u64, frontier: String,
    }
}

const SELECT_ONE: &str = select_ledgers!("WHERE tenant_id = ?1 AND customer_id = ?2");
const SELECT_PAGE: &str =
    select_ledgers!("WHERE tenant_id = ?1 ORDER BY customer_id ASC LIMIT ?2 OFFSET ?3");
const COUNT_OF_TENANT: &str = "SELECT COUNT(*) AS n FROM ledgers WHERE tenant_id = ?1";
/// Customer ids from `?2` (a prefix) up to `?3` (the prefix followed by
/// `{`, past every character a customer id may hold): the ids that start
/// with the prefix, read off the primary key (issue 30).
const SELECT_PAGE_IN_RANGE: &str = select_ledgers!(
    "WHERE tenant_id = ?1 AND customer_id >= ?2 AND customer_id < ?3 \
     ORDER BY customer_id ASC LIMIT ?4 OFFSET ?5"
);
const COUNT_IN_RANGE: &str = "SELECT COUNT(*) AS n FROM ledgers \
     WHERE tenant_id = ?1 AND customer_id >= ?2 AND customer_id < ?3";
const SELECT_FOR_KEYS: ListSql = ListSql {
    sql: select_ledgers!("WHERE (tenant_id, customer_id) IN (VALUES {list})"),
    cols: 2,
};
const UPDATE_AGGREGATES: &str = "UPDATE ledgers SET verified_count = ?3, computed_balance = ?4, \
     first_activity_at = COALESCE(first_activity_at, ?5), last_activity_at = ?5, \
     latest_items_root = ?6 WHERE tenant_id = ?1 AND customer_id = ?2";
const UPSERT_WINDOW: &str =
    "INSERT INTO ledger_windows (tenant_id, customer_id, window, first_seq, last_seq, balance_before, \
     balance_after, first_verified_at, last_verified_at, frontier, first_leaf, last_leaf) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11) \
     ON CONFLICT (tenant_id, customer_id, window) DO UPDATE SET last_seq = excluded.last_seq, \
     balance_after = excluded.balance_after, last_verified_at = excluded.last_verified_at, \
     frontier = excluded.frontier, last_leaf = excluded.last_leaf";
const SELECT_WINDOW_FRONTIERS: ListSql = ListSql {
    sql: "SELECT tenant_id, customer_id, frontier FROM ledger_windows WHERE window = ?1 \
          AND (tenant_id, customer_id) IN (VALUES {list})",
    cols: 2,
};
const SELECT_WINDOWS_AFTER: &str = select_windows!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND last_seq > ?3 ORDER BY first_seq ASC"
);
const SELECT_WINDOW: &str =
    select_windows!("WHERE tenant_id = ?1 AND customer_id = ?2 AND window = ?3");
const SELECT_TENANT_WINDOW: &str = select_tenant_windows!("WHERE tenant_id = ?1 AND window = ?2");
const SELECT_TENANT_WINDOWS_FOR: ListSql = ListSql {
    sql: select_tenant_windows!("WHERE window = ?1 AND tenant_id IN ({list})"),
    cols: 1,
};
const UPSERT_TENANT_WINDOW: &str =
    "INSERT INTO tenant_windows (tenant_id, window, deltas_count, net_delta, first_leaf, last_leaf, \
     frontier) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (tenant_id, window) DO UPDATE SET \
     deltas_count = excluded.deltas_count, net_delta = excluded.net_delta, \
     last_leaf = excluded.last_leaf, frontier = excluded.frontier";

/// A ledger's latest root `?3` (a batch's, handed out before per-ledger
/// roots) replaced by its own ledger's root `?4`.
const SET_LATEST_ROOT: &str = "UPDATE ledgers SET latest_items_root = ?4 \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND latest_items_root = ?3";

super::statements! {
    /// For the ledger roots backfill (`ledger::backfill`).
    pub fn replace_latest_root(tenant_id: &str, customer_id: &str, old: &str, new: &str)
        = SET_LATEST_ROOT;
}

queries! {
    pub fn ledger(tenant_id: &str, customer_id: &str) -> Option<LedgerRow> = first(SELECT_ONE);
    pub fn page(tenant_id: &str, limit: u64, offset: u64) -> Vec<LedgerRow> = all(SELECT_PAGE);
    pub fn count_of_tenant(tenant_id: &str) -> u64 = count(COUNT_OF_TENANT);
    /// A page of the ledgers whose customer id is in [`from`, `to`).
    pub fn page_in_range(tenant_id: &str, from: &str, to: &str, limit: u64, offset: u64)
        -> Vec<LedgerRow> = all(SELECT_PAGE_IN_RANGE);
    pub fn count_in_range(tenant_id: &str, from: &str, to: &str) -> u64 = count(COUNT_IN_RANGE);
}

/// The ledgers of `(tenant_id, customer_id)` pairs.
pub async fn for_keys(db: &D1Database, keys: &[(String, String)]) -> ApiResult<Vec<LedgerRow>> {
    let statements = chunked(db, &SELECT_FOR_KEYS, &[], keys, bind_pair)?;
    batch_rows(db, statements).await
}

row! {
    pub struct LedgerUpdate<'a> {
        tenant_id: &'a str, customer_id: &'a str, old_count: u64, new_count: u64,
        old_balance: Amount, new_balance: Amount, verified_at: u64, latest_items_root: &'a str,
        window: String,
        /// The window's frontier after this round, and the log positions of
        /// the round's first and last delta of this ledger.
        frontier: String,
        first_leaf: u64, last_leaf: u64,
    }
}

/// The ledger's aggregates and its current window, for one sequencer round.
pub fn update(db: &D1Database, u: &LedgerUpdate<'_>) -> ApiResult<Vec<D1PreparedStatement>> {
    let (old_balance, new_balance) = (u.old_balance.to_string(), u.new_balance.to_string());
    let aggregates = args![
        u.tenant_id,
        u.customer_id,
        u.new_count,
        &new_balance,
        u.verified_at,
        u.latest_items_root
    ];
    let window = args![
        u.tenant_id,
        u.customer_id,
        &u.window,
        u.old_count + 1,
        u.new_count,
        &old_balance,
        &new_balance,
        u.verified_at,
        &u.frontier,
        u.first_leaf,
        u.last_leaf
    ];
    Ok(vec![
        stmt(db, UPDATE_AGGREGATES, &aggregates)?,
        stmt(db, UPSERT_WINDOW, &window)?,
    ])
}

/// The frontiers of ledger windows `(tenant, customer)` in `window`.
pub async fn window_frontiers(
    db: &D1Database,
    keys: &[(String, String)],
    window: &str,
) -> ApiResult<Vec<(String, String, String)>> {
    #[derive(Deserialize)]
    struct Row {
        tenant_id: String,
        customer_id: String,
        frontier: String,
    }
    let fixed = args![window];
    let statements = chunked(db, &SELECT_WINDOW_FRONTIERS, &fixed, keys, bind_pair)?;
    let rows = batch_rows::<Row>(db, statements).await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.tenant_id, r.customer_id, r.frontier))
        .collect())
}

queries! {
    /// The window row of one period of a ledger.
    pub fn window(tenant_id: &str, customer_id: &str, period: &str) -> Option<WindowRow>
        = first(SELECT_WINDOW);
    pub fn tenant_window(tenant_id: &str, window: &str) -> Option<TenantWindowRow>
        = first(SELECT_TENANT_WINDOW);
}

pub async fn tenant_windows_for(
    db: &D1Database,
    tenants: &[String],
    window: &str,
) -> ApiResult<Vec<TenantWindowRow>> {
    let fixed = args![window];
    let statements = chunked(db, &SELECT_TENANT_WINDOWS_FOR, &fixed, tenants, bind_text)?;
    batch_rows(db, statements).await
}

pub fn upsert_tenant_window(
    db: &D1Database,
    w: &TenantWindowRow,
) -> ApiResult<D1PreparedStatement> {
    let net_delta = w.net_delta.to_string();
    let args = args![
        &w.tenant_id,
        &w.window,
        w.deltas_count,
        &net_delta,
        w.first_leaf,
        w.last_leaf,
        &w.frontier
    ];
    stmt(db, UPSERT_TENANT_WINDOW, &args)
}

/// Windows ending after a starting delta named as `store::deltas::StartAt`
/// names it (`?1` tenant, `?2` customer, `?3` the name).
const SELECT_WINDOWS_AFTER_ITEMS_ROOT: &str = select_windows!(concat!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND last_seq > ",
    super::deltas::start_seq_by_items_root!(),
    " ORDER BY first_seq ASC"
));
const SELECT_WINDOWS_AFTER_ANCHOR_ID: &str = select_windows!(concat!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND last_seq > ",
    super::deltas::start_seq_by_anchor_id!(),
    " ORDER BY first_seq ASC"
));

super::statements! {
    /// Windows of a ledger that end after ledger_seq `after_seq`, oldest first.
    fn windows_after_statement(tenant_id: &str, customer_id: &str, after_seq: u64)
        = SELECT_WINDOWS_AFTER;
    pub(super) fn ledger_statement(tenant_id: &str, customer_id: &str) = SELECT_ONE;
}

super::statements! {
    /// The window row of one period of a ledger, for a caller's batch
    /// (`store::receipts`).
    pub(super) fn window_statement(tenant_id: &str, customer_id: &str, period: &str)
        = SELECT_WINDOW;
}

/// A ledger, its verified deltas with `from_seq <= ledger_seq <= to_seq`
/// and its windows ending after `after_seq`, in one round trip (one batch:
/// one snapshot).
pub struct LedgerPage {
    pub ledger: Option<LedgerRow>,
    pub deltas: Vec<super::deltas::DeltaRow>,
    pub windows: Vec<WindowRow>,
}

/// Reads a [`LedgerPage`] (issue 16: derive from genesis in one read).
///
/// # Errors
/// D1 errors.
pub async fn ledger_page(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    (from_seq, to_seq): (u64, u64),
    after_seq: u64,
) -> ApiResult<LedgerPage> {
    let results = super::batch(
        db,
        vec![
            ledger_statement(db, tenant_id, customer_id)?,
            super::deltas::of_ledger_statement(db, tenant_id, customer_id, from_seq, to_seq)?,
            windows_after_statement(db, tenant_id, customer_id, after_seq)?,
        ],
    )
    .await?;
    Ok(LedgerPage {
        ledger: super::rows(&results, 0)?.into_iter().next(),
        deltas: super::rows(&results, 1)?,
        windows: super::rows(&results, 2)?,
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
}

/// Reads a [`LedgerFrom`] (issue 16: derive from a checkpoint in one
/// read): the page is the deltas at positions `start + first ..= start +
/// last`.
///
/// # Errors
/// D1 errors.
pub async fn ledger_page_from(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    start: super::deltas::StartAt<'_>,
    page: (u64, u64),
) -> ApiResult<LedgerFrom> {
    use super::deltas::StartAt;
    let (windows_sql, name) = match start {
        StartAt::ItemsRoot(r) => (SELECT_WINDOWS_AFTER_ITEMS_ROOT, r),
        StartAt::AnchorId(a) => (SELECT_WINDOWS_AFTER_ANCHOR_ID, a),
    };
    let [at, deltas, next] =
        super::deltas::from_start_statements(db, tenant_id, customer_id, start, page)?;
    let results = super::batch(
        db,
        vec![
            ledger_statement(db, tenant_id, customer_id)?,
            at,
            deltas,
            next,
            stmt(db, windows_sql, &args![tenant_id, customer_id, name])?,
        ],
    )
    .await?;
    Ok(LedgerFrom {
        ledger: super::rows(&results, 0)?.into_iter().next(),
        start: super::rows(&results, 1)?.into_iter().next(),
        deltas: super::rows(&results, 2)?,
        next: super::rows(&results, 3)?.into_iter().next(),
        windows: super::rows(&results, 4)?,
    })
}
