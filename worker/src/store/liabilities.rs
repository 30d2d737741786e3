//! Liabilities statements (issue 31 part B, migrations 0110/0111): the
//! statement rows, phase 1's ledger snapshot and phase 2's tree nodes.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId, Env};
use serde::Deserialize;
use worker::D1Database;

use super::{args, over_json, queries, row, statements, Query, Statements};
use crate::error::ApiResult;
use crate::ids::{StatementId, TenantId};

super::text_enum! {
    /// A statement's `status`: phase 1 (SNAPSHOT), phase 2 (BUILDING),
    /// built and waiting for the log (QUEUED), in the log (PUBLISHED), or
    /// never to be (FAILED).
    pub enum StatementStatus {
        Snapshot = "SNAPSHOT",
        Building = "BUILDING",
        Queued = "QUEUED",
        Published = "PUBLISHED",
        Failed = "FAILED",
    }
}

row! {
    $ select_statements from "liability_statements";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct StatementRow {
        id: StatementId, tenant_id: TenantId, environment: Env, period: String, status: StatementStatus,
        builder_state: String, snapshot_cursor: String, ledger_count: u64,
        build_cursor: String, built_count: u64, statement_json: Option<String>,
        item_hash: Option<Hash32>, supersedes: Option<Hash32>, superseded_by: Option<Hash32>,
        liabilities_total: Option<String>, liabilities_count: Option<u64>,
        receivables_total: Option<String>, receivables_count: Option<u64>,
        failure: Option<String>, created_at: u64, updated_at: u64,
        leaf_index: Option<u64>, tree_size: Option<u64>, published_at: Option<u64>,
        purged_at: Option<u64>,
        /// Whose balances it sums (issue 43): `''` the default asset.
        asset: Asset,
    }
}

row! {
    $ select_ledgers from "liability_ledgers";
    #[derive(Debug, Clone, Deserialize)]
    pub struct LedgerRow {
        order_key: String, customer_id: CustomerId,
        #[serde(deserialize_with = "super::amount")]
        balance: Amount,
        liabilities_index: Option<u64>, receivables_index: Option<u64>,
    }
}

/// A ledger's balance at the period's end, for phase 1.
#[derive(Debug, Clone, Deserialize)]
pub struct BalanceRow {
    pub customer_id: CustomerId,
    #[serde(deserialize_with = "super::opt_amount")]
    pub balance: Option<Amount>,
}

/// A stored node.
#[derive(Debug, Clone, Deserialize)]
pub struct NodeRow {
    pub tree: String,
    pub level: u8,
    pub idx: u64,
    pub hash: Hash32,
    #[serde(deserialize_with = "super::amount")]
    pub sum: Amount,
}

const INSERT: &str = "INSERT INTO liability_statements (id, tenant_id, environment, period, \
     status, builder_state, created_at, updated_at, asset) \
     VALUES (?1, ?2, ?3, ?4, 'SNAPSHOT', ?5, ?6, ?6, ?7)";
const SELECT_ONE: &str = select_statements!("WHERE id = ?1 AND tenant_id = ?2");
const SELECT_BY_ID: &str = select_statements!("WHERE id = ?1");
/// The tenant's newest statement of a period that is not FAILED.
const SELECT_LATEST_LIVE: &str = select_statements!(
    "WHERE tenant_id = ?1 AND period = ?2 AND asset = ?3 AND status != 'FAILED' \
     ORDER BY created_at DESC, id DESC LIMIT 1"
);
/// The tenant's newest PUBLISHED statement of a period.
const SELECT_LATEST_PUBLISHED: &str = select_statements!(
    "WHERE tenant_id = ?1 AND period = ?2 AND asset = ?3 AND status = 'PUBLISHED' \
     ORDER BY published_at DESC, id DESC LIMIT 1"
);
const SELECT_OF_PERIOD: &str = select_statements!(
    "WHERE tenant_id = ?1 AND period = ?2 AND asset = ?4 ORDER BY created_at DESC, id DESC LIMIT ?3"
);
const SELECT_BY_ITEM: &str =
    select_statements!("WHERE item_hash = ?1 AND status = 'PUBLISHED' LIMIT 1");
const SELECT_COUNT: &str =
    "SELECT COUNT(*) AS n FROM liability_statements WHERE tenant_id = ?1 AND period = ?2 AND asset = ?3";
const SELECT_QUEUED: &str =
    select_statements!("WHERE status = 'QUEUED' ORDER BY created_at ASC LIMIT ?1");
/// Tenants active in a closed period (their tenant window) with no
/// statement of it yet: the cron's candidates.
const SELECT_DUE_TENANTS: &str = "SELECT w.tenant_id AS tenant_id FROM tenant_windows w \
     WHERE w.window = ?1 AND NOT EXISTS (SELECT 1 FROM liability_statements s \
     WHERE s.tenant_id = w.tenant_id AND s.period = ?1 AND s.asset = '') ORDER BY w.tenant_id LIMIT ?2";
/// Statements neither PUBLISHED nor FAILED whose job may have lost its
/// message (not touched for `?1` ms).
const SELECT_STALLED: &str = select_statements!(
    "WHERE status IN ('SNAPSHOT', 'BUILDING') AND updated_at < ?1 ORDER BY updated_at LIMIT ?2"
);
/// Phase 1: a page of the tenant's ledgers after `?2` (by customer id),
/// each with the balance after its last delta verified in a month up to
/// the period `?3` (NULL: no delta verified by the period's end).
const SELECT_BALANCES: &str = "SELECT l.customer_id AS customer_id, \
     (SELECT w.balance_after FROM ledger_windows w WHERE w.tenant_id = l.tenant_id \
      AND w.customer_id = l.customer_id AND w.asset = ?5 AND w.window <= ?3 \
      ORDER BY w.window DESC LIMIT 1) AS balance \
     FROM ledgers l WHERE l.tenant_id = ?1 AND l.asset = ?5 AND l.customer_id > ?2 \
     ORDER BY l.customer_id LIMIT ?4";
/// Phase 1's rows (`?1`: `[order_key, customer_id, balance]` each).
const INSERT_LEDGERS_SET: &str = "INSERT OR IGNORE INTO liability_ledgers \
     (statement_id, order_key, customer_id, balance) SELECT ?2, json_extract(j.value, '$[0]'), \
     json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]') FROM json_each(?1) AS j";
/// Phase 1's progress, guarded by the cursor it read.
const SET_SNAPSHOT: &str = "UPDATE liability_statements SET snapshot_cursor = ?2, \
     ledger_count = ledger_count + ?3, status = ?4, updated_at = ?5 \
     WHERE id = ?1 AND status = 'SNAPSHOT' AND snapshot_cursor = ?6";
/// Phase 2: the next page in order-key order.
const SELECT_PAGE: &str =
    select_ledgers!("WHERE statement_id = ?1 AND order_key > ?2 ORDER BY order_key LIMIT ?3");
/// Phase 2's nodes (`?1`: `[tree, level, idx, hash, sum]` each).
const INSERT_NODES_SET: &str = "INSERT OR REPLACE INTO liability_nodes \
     (statement_id, tree, level, idx, hash, sum) SELECT ?2, json_extract(j.value, '$[0]'), \
     json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), \
     json_extract(j.value, '$[4]') FROM json_each(?1) AS j";
/// Phase 2's leaf indexes (`?1`: `[order_key, customer_id, balance,
/// liabilities_index, receivables_index]`): each row written again whole
/// by its primary key. (An `UPDATE ... FROM json_each` here was planned
/// as a scan of the statement's rows per set row: minutes a page at
/// 100,000 ledgers.)
const SET_INDEXES_SET: &str = "INSERT OR REPLACE INTO liability_ledgers \
     (statement_id, order_key, customer_id, balance, liabilities_index, receivables_index) \
     SELECT ?2, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), \
     json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]') \
     FROM json_each(?1) AS j";
/// Phase 2's progress, guarded by the cursor it read.
const SET_BUILT: &str = "UPDATE liability_statements SET builder_state = ?2, build_cursor = ?3, \
     built_count = built_count + ?4, updated_at = ?5 \
     WHERE id = ?1 AND status = 'BUILDING' AND build_cursor = ?6";
const SET_QUEUED: &str = "UPDATE liability_statements SET status = 'QUEUED', statement_json = ?2, \
     item_hash = ?3, supersedes = ?4, liabilities_total = ?5, liabilities_count = ?6, \
     receivables_total = ?7, receivables_count = ?8, updated_at = ?9 \
     WHERE id = ?1 AND status = 'BUILDING'";
const SET_FAILED: &str = "UPDATE liability_statements SET status = 'FAILED', failure = ?2, \
     updated_at = ?3 WHERE id = ?1 AND status IN ('SNAPSHOT', 'BUILDING', 'QUEUED')";
/// A round's statements (`?1`: `[id, leaf_index]` each) PUBLISHED into the
/// head of size `?2` at `?3`, and the one each supersedes marked so.
const MARK_PUBLISHED_SET: &str = "UPDATE liability_statements SET status = 'PUBLISHED', \
     leaf_index = json_extract(j.value, '$[1]'), tree_size = ?2, published_at = ?3, updated_at = ?3 \
     FROM json_each(?1) AS j WHERE liability_statements.id = json_extract(j.value, '$[0]') \
     AND +liability_statements.status = 'QUEUED'";
const MARK_SUPERSEDED_SET: &str = "UPDATE liability_statements SET superseded_by = \
     json_extract(j.value, '$[1]') FROM json_each(?1) AS j \
     WHERE liability_statements.item_hash = json_extract(j.value, '$[0]')";
const SELECT_LEDGER_OF: &str = select_ledgers!("WHERE statement_id = ?1 AND customer_id = ?2");
/// The nodes a proof needs (`?2`: `[tree, level, idx]` each). `CROSS
/// JOIN` keeps the set the outer loop (SQLite does not reorder it): one
/// primary-key lookup per node, not a scan of the statement's nodes per
/// set row (14 s a proof at 100,000 ledgers).
const SELECT_NODES_SET: &str = "SELECT n.tree AS tree, n.level AS level, n.idx AS idx, \
     n.hash AS hash, n.sum AS sum FROM json_each(?2) AS j CROSS JOIN liability_nodes n \
     ON n.statement_id = ?1 AND n.tree = json_extract(j.value, '$[0]') \
     AND n.level = json_extract(j.value, '$[1]') AND n.idx = json_extract(j.value, '$[2]')";

/// DEV_MODE benchmark fixture: `?3` ledgers `bench-<i>` of tenant `?1`
/// with a window in period `?2` whose balance is a spread of positive,
/// zero and negative whole amounts (about one in five negative).
const SEED_LEDGERS: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3) \
     INSERT OR IGNORE INTO ledgers (tenant_id, customer_id, ledger_id, verified_count, computed_balance, created_at) \
     SELECT ?1, printf('bench-%07d', i), 'bench', 1, CAST(((i * 7919) % 100000) - 20000 AS TEXT), ?4 FROM n";
const SEED_WINDOWS: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3) \
     INSERT OR IGNORE INTO ledger_windows (tenant_id, customer_id, window, first_seq, last_seq, \
     balance_before, balance_after, first_verified_at, last_verified_at) \
     SELECT ?1, printf('bench-%07d', i), ?2, 1, 1, '0', CAST(((i * 7919) % 100000) - 20000 AS TEXT), ?4, ?4 FROM n";

/// Seeds `n` ledgers with a window in `period` (DEV_MODE benchmark).
///
/// # Errors
/// D1 errors.
pub async fn seed_bench(
    db: &D1Database,
    tenant_id: &TenantId,
    period: &str,
    n: u64,
    now_ms: u64,
) -> ApiResult<()> {
    let args = args![tenant_id, period, n, now_ms];
    super::batch(
        db,
        vec![
            Query::new(SEED_LEDGERS, args.clone()),
            Query::new(SEED_WINDOWS, args),
        ],
    )
    .await?;
    Ok(())
}

/// A new statement in phase 1.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_stmt<'a>(
    id: &'a StatementId,
    tenant_id: &'a TenantId,
    environment: Env,
    period: &'a str,
    builder_state: &'a str,
    (now_ms, asset): (u64, &'a Asset),
) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        INSERT,
        args![
            id,
            tenant_id,
            environment,
            period,
            builder_state,
            now_ms,
            asset
        ],
    ))
}

queries! {
    pub fn statement(id: &StatementId, tenant_id: &TenantId) -> Option<StatementRow> = first(SELECT_ONE);
    pub fn statement_by_id(id: &StatementId) -> Option<StatementRow> = first(SELECT_BY_ID);
    pub fn latest_live(tenant_id: &TenantId, period: &str, asset: &Asset) -> Option<StatementRow> = first(SELECT_LATEST_LIVE);
    pub fn latest_published(tenant_id: &TenantId, period: &str, asset: &Asset) -> Option<StatementRow>
        = first(SELECT_LATEST_PUBLISHED);
    pub fn of_period(tenant_id: &TenantId, period: &str, limit: u64, asset: &Asset) -> Vec<StatementRow>
        = all(SELECT_OF_PERIOD);
    pub fn published_by_item(item_hash: &Hash32) -> Option<StatementRow> = first(SELECT_BY_ITEM);
    pub fn count_of_period(tenant_id: &TenantId, period: &str, asset: &Asset) -> u64 = count(SELECT_COUNT);
    pub fn balances(tenant_id: &TenantId, after: &str, period: &str, limit: u64, asset: &Asset) -> Vec<BalanceRow>
        = all(SELECT_BALANCES);
    pub fn page(statement_id: &StatementId, after: &str, limit: u64) -> Vec<LedgerRow> = all(SELECT_PAGE);
    pub fn ledger_of(statement_id: &StatementId, customer_id: &CustomerId) -> Option<LedgerRow>
        = first(SELECT_LEDGER_OF);
    pub fn stalled(before_ms: u64, limit: u64) -> Vec<StatementRow> = all(SELECT_STALLED);
    pub fn fail(id: &StatementId, failure: &str, now_ms: u64) -> u64 = run(SET_FAILED);
}

/// Tenants due a statement of `period` (the cron's sweep).
///
/// # Errors
/// D1 errors.
pub async fn due_tenants(db: &D1Database, period: &str, limit: u64) -> ApiResult<Vec<TenantId>> {
    #[derive(Deserialize)]
    struct T {
        tenant_id: TenantId,
    }
    let rows: Vec<T> = super::all(db, Query::new(SELECT_DUE_TENANTS, args![period, limit])).await?;
    Ok(rows.into_iter().map(|t| t.tenant_id).collect())
}

statements! {
    /// For a sequencer round's read batch: the queued statements in order.
    pub fn queued_statement<'a>(limit: u64) = SELECT_QUEUED;
}

statements! {
    /// Phase 1's progress (`status` `SNAPSHOT`, or `BUILDING` when done).
    pub fn set_snapshot<'a>(id: &'a StatementId, cursor: &'a str, added: u64, status: StatementStatus, now_ms: u64, read_cursor: &'a str)
        = SET_SNAPSHOT;
}

statements! {
    /// Phase 2's progress.
    pub fn set_built<'a>(id: &'a StatementId, state: &'a str, cursor: &'a str, added: u64, now_ms: u64, read_cursor: &'a str)
        = SET_BUILT;
}

statements! {
    /// Marks a statement failed (it can never be appended or built), keeping why.
    pub fn mark_failed<'a>(id: &'a StatementId, failure: &'a str, now_ms: u64) = SET_FAILED;
}

row! {
    /// The finished statement, QUEUED for the log.
    pub struct Finished<'a> {
        statement_json: &'a str, item_hash: &'a Hash32, supersedes: Option<&'a Hash32>,
        liabilities_total: Amount, liabilities_count: u64,
        receivables_total: Amount, receivables_count: u64,
    }
}

statements! {
    /// The statement marking `id` QUEUED with what it states.
    pub fn set_queued<'a>(id: &'a StatementId, f: &'a Finished<'a>, now_ms: u64) = SET_QUEUED, [
        id, f.statement_json, f.item_hash, f.supersedes, f.liabilities_total,
        f.liabilities_count, f.receivables_total, f.receivables_count, now_ms,
    ];
}

/// Phase 1's rows: `(order_key, customer_id, balance)` each.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_ledgers<'a>(
    statement_id: &'a StatementId,
    rows: &[(String, CustomerId, String)],
) -> Statements<'a> {
    over_json(INSERT_LEDGERS_SET, rows, &args![statement_id])
}

/// Phase 2's nodes: `(tree, level, idx, hash, sum)` each.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_nodes<'a>(
    statement_id: &'a StatementId,
    rows: &[(&'static str, u8, u64, String, String)],
) -> Statements<'a> {
    over_json(INSERT_NODES_SET, rows, &args![statement_id])
}

/// Phase 2's leaf indexes: `(order_key, customer_id, balance,
/// liabilities_index, receivables_index)` (the rows rewritten whole; the
/// balance as its canonical decimal text, as phase 1 wrote it).
///
/// # Errors
/// A value that cannot be bound.
pub fn set_indexes<'a>(
    statement_id: &'a StatementId,
    rows: &[(&str, &str, String, u64, Option<u64>)],
) -> Statements<'a> {
    over_json(SET_INDEXES_SET, rows, &args![statement_id])
}

/// A round's statements PUBLISHED (`(id, leaf_index)` each), and those
/// they supersede (`(old item hash, new item hash)` each) marked so.
///
/// # Errors
/// A value that cannot be bound.
pub fn mark_published_all<'a>(
    published: &[(&str, u64)],
    superseded: &[(&Hash32, &Hash32)],
    tree_size: u64,
    now_ms: u64,
) -> Statements<'a> {
    let mut out = over_json(MARK_PUBLISHED_SET, published, &args![tree_size, now_ms])?;
    if !superseded.is_empty() {
        out.extend(over_json(MARK_SUPERSEDED_SET, superseded, &[])?);
    }
    Ok(out)
}

/// The nodes `(tree, level, idx)` of a statement, in one read.
///
/// # Errors
/// D1 errors.
pub fn nodes_statement<'a>(
    statement_id: &'a StatementId,
    addrs: &[(&'static str, u8, u64)],
) -> ApiResult<Query<'a>> {
    let set = serde_json::to_string(addrs)?;
    Ok(Query::new(SELECT_NODES_SET, args![statement_id, set]))
}

row! {
    $ select_cosignatures from "liability_cosignatures";
    /// A customer's co-signature of its inclusion in a statement (issue 31
    /// part D, migration 0120).
    #[derive(Debug, Clone, Deserialize)]
    pub struct CosignatureRow {
        item_hash: Hash32, statement_id: StatementId, ledger_id: Hash32, tenant_id: TenantId,
        customer_id: CustomerId, verifier_key: String, statement: String, created_at: u64,
    }
}

/// A replayed co-signature (the same canonical note) writes nothing.
const INSERT_COSIGNATURE: &str =
    "INSERT OR IGNORE INTO liability_cosignatures (item_hash, statement_id, \
     ledger_id, tenant_id, customer_id, verifier_key, statement, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
const SELECT_COSIGNATURE: &str = select_cosignatures!("WHERE item_hash = ?1");

queries! {
    /// The co-signature whose canonical note hashes to `item_hash`, if recorded.
    pub fn cosignature(item_hash: &Hash32) -> Option<CosignatureRow> = first(SELECT_COSIGNATURE);
}

/// Records a co-signature, in its write's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_cosignature<'a>(c: &'a CosignatureRow) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        INSERT_COSIGNATURE,
        args![
            &c.item_hash,
            &c.statement_id,
            &c.ledger_id,
            &c.tenant_id,
            &c.customer_id,
            &c.verifier_key,
            &c.statement,
            c.created_at
        ],
    ))
}

/// Statements published (or failed) before `?2`, not purged yet: their
/// seed goes and they are stamped purged (`?3`), at most `?4`.
const PURGE_STATEMENTS: &str =
    "UPDATE liability_statements SET builder_state = '', purged_at = ?3 \
     WHERE rowid IN (SELECT rowid FROM liability_statements WHERE tenant_id = ?1 \
     AND purged_at IS NULL AND ((status = 'PUBLISHED' AND published_at < ?2) \
     OR (status = 'FAILED' AND updated_at < ?2)) LIMIT ?4)";
/// Snapshot rows of the tenant's purged statements, at most `?2`.
const PURGE_LEDGERS: &str = "DELETE FROM liability_ledgers WHERE (statement_id, order_key) IN \
     (SELECT l.statement_id, l.order_key FROM liability_statements s \
     JOIN liability_ledgers l ON l.statement_id = s.id \
     WHERE s.tenant_id = ?1 AND s.purged_at IS NOT NULL LIMIT ?2)";
/// Nodes of the tenant's purged statements, at most `?2`.
const PURGE_NODES: &str = "DELETE FROM liability_nodes WHERE (statement_id, tree, level, idx) IN \
     (SELECT n.statement_id, n.tree, n.level, n.idx FROM liability_statements s \
     JOIN liability_nodes n ON n.statement_id = s.id \
     WHERE s.tenant_id = ?1 AND s.purged_at IS NOT NULL LIMIT ?2)";

queries! {
    /// Stamps the tenant's statements past the window purged (retention,
    /// docs/liabilities.md §12). Returns statements stamped.
    pub fn purge_statements(tenant_id: &TenantId, cutoff_ms: u64, now_ms: u64, limit: u64) -> u64
        = run(PURGE_STATEMENTS);
    /// Deletes snapshot rows of purged statements. Returns rows deleted.
    pub fn purge_ledgers(tenant_id: &TenantId, limit: u64) -> u64 = run(PURGE_LEDGERS);
    /// Deletes nodes of purged statements. Returns rows deleted.
    pub fn purge_nodes(tenant_id: &TenantId, limit: u64) -> u64 = run(PURGE_NODES);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_balances_and_statuses_are_parsed_when_read() {
        let b: BalanceRow =
            serde_json::from_str(r#"{"customer_id":"c1","balance":"-12.5"}"#).unwrap();
        assert_eq!(b.balance.unwrap().to_string(), "-12.5");
        let none: BalanceRow =
            serde_json::from_str(r#"{"customer_id":"c1","balance":null}"#).unwrap();
        assert!(none.balance.is_none());
        let l: LedgerRow = serde_json::from_str(
            r#"{"order_key":"k","customer_id":"c1","balance":"3","liabilities_index":0,"receivables_index":null}"#,
        )
        .unwrap();
        assert_eq!(l.balance.to_string(), "3");
        let s: StatementStatus = serde_json::from_str(r#""BUILDING""#).unwrap();
        assert_eq!(s, StatementStatus::Building);
        assert!(serde_json::from_str::<StatementStatus>(r#""building""#).is_err());
    }
}
