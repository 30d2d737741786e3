//! SQL of the ledger databases (one per environment).

use bvs_core::hash::Hash32;
use bvs_core::log::StoredHashes;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, first, stmt, Arg, D1_BOUND_PARAMS_MAX};
use crate::error::{ApiError, ApiResult};

// ---------------------------------------------------------------- log

const SELECT_LATEST_HEAD: &str =
    "SELECT tree_size, root, note, note_hash, created_at FROM tree_heads ORDER BY tree_size DESC LIMIT 1";
const SELECT_HEAD_AT: &str =
    "SELECT tree_size, root, note, note_hash, created_at FROM tree_heads WHERE tree_size = ?1";
const SELECT_HEADS_PAGE: &str =
    "SELECT tree_size, root, note, note_hash, created_at FROM tree_heads \
     WHERE tree_size >= ?1 ORDER BY tree_size ASC LIMIT ?2";
pub const INSERT_HEAD: &str =
    "INSERT INTO tree_heads (tree_size, root, note, note_hash, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5)";
const INSERT_FIRST_HEAD: &str =
    "INSERT OR IGNORE INTO tree_heads (tree_size, root, note, note_hash, created_at) \
     VALUES (0, ?1, ?2, ?3, ?4)";
const SELECT_LEAF_BY_ITEM: &str =
    "SELECT leaf_index, item_hash, kind, ref_id, tenant_id, appended_at \
     FROM log_leaves WHERE item_hash = ?1 ORDER BY leaf_index ASC LIMIT 1";

#[derive(Debug, Clone, Deserialize)]
pub struct HeadRow {
    pub tree_size: u64,
    pub root: String,
    pub note: String,
    pub note_hash: String,
    pub created_at: u64,
}

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct LeafRow {
    pub leaf_index: u64,
    pub item_hash: String,
    pub kind: String,
    pub ref_id: String,
    pub tenant_id: String,
    pub appended_at: u64,
}

pub async fn latest_head(db: &D1Database) -> ApiResult<Option<HeadRow>> {
    first(db, SELECT_LATEST_HEAD, &[]).await
}

pub async fn head_at(db: &D1Database, size: u64) -> ApiResult<Option<HeadRow>> {
    first(db, SELECT_HEAD_AT, &[int(size)?]).await
}

pub async fn heads_from(db: &D1Database, from_size: u64, limit: u64) -> ApiResult<Vec<HeadRow>> {
    all(db, SELECT_HEADS_PAGE, &[int(from_size)?, int(limit)?]).await
}

pub async fn insert_first_head(
    db: &D1Database,
    root: &str,
    note: &str,
    note_hash: &str,
    now_ms: u64,
) -> ApiResult<()> {
    super::run(
        db,
        INSERT_FIRST_HEAD,
        &[
            Arg::Text(root),
            Arg::Text(note),
            Arg::Text(note_hash),
            int(now_ms)?,
        ],
    )
    .await?;
    Ok(())
}

pub async fn leaf_by_item(db: &D1Database, item_hash: &str) -> ApiResult<Option<LeafRow>> {
    first(db, SELECT_LEAF_BY_ITEM, &[Arg::Text(item_hash)]).await
}

#[derive(Deserialize)]
struct HashRow {
    idx: u64,
    hash: String,
}

/// Reads the stored hashes at `indexes`: one SELECT per 100 indexes (D1's
/// parameter limit), all sent in one batch round trip.
pub async fn stored_hashes(db: &D1Database, indexes: &[u64]) -> ApiResult<StoredHashes> {
    let mut out = StoredHashes::new();
    let mut statements = Vec::new();
    for chunk in indexes.chunks(D1_BOUND_PARAMS_MAX) {
        let placeholders = numbered(1, chunk.len());
        let sql = format!("SELECT idx, hash FROM log_hashes WHERE idx IN ({placeholders})");
        let args: Vec<Arg<'_>> = chunk.iter().map(|i| int(*i)).collect::<ApiResult<_>>()?;
        statements.push(stmt(db, &sql, &args)?);
    }
    if statements.is_empty() {
        return Ok(out);
    }
    for result in super::batch(db, statements).await? {
        let rows: Vec<HashRow> = result
            .results()
            .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))?;
        for r in rows {
            out.insert(r.idx, parse_hash(&r.hash)?);
        }
    }
    Ok(out)
}

/// Statements that insert stored hashes, 50 rows per statement.
pub fn insert_stored_hashes(
    db: &D1Database,
    rows: &[(u64, Hash32)],
) -> ApiResult<Vec<D1PreparedStatement>> {
    let hexes: Vec<(u64, String)> = rows.iter().map(|(i, h)| (*i, h.to_hex())).collect();
    let mut out = Vec::new();
    for chunk in hexes.chunks(D1_BOUND_PARAMS_MAX / 2) {
        let values = row_placeholders(chunk.len(), 2);
        let sql = format!("INSERT INTO log_hashes (idx, hash) VALUES {values}");
        let mut args = Vec::with_capacity(chunk.len() * 2);
        for (i, h) in chunk {
            args.push(int(*i)?);
            args.push(Arg::Text(h));
        }
        out.push(stmt(db, &sql, &args)?);
    }
    Ok(out)
}

pub struct NewLeaf {
    pub leaf_index: u64,
    pub item_hash: String,
    pub kind: &'static str,
    pub ref_id: String,
    pub tenant_id: String,
}

pub fn insert_leaves(
    db: &D1Database,
    leaves: &[NewLeaf],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    const COLS: usize = 6;
    let mut out = Vec::new();
    for chunk in leaves.chunks(D1_BOUND_PARAMS_MAX / COLS) {
        let values = row_placeholders(chunk.len(), COLS);
        let sql = format!(
            "INSERT INTO log_leaves (leaf_index, item_hash, kind, ref_id, tenant_id, appended_at) VALUES {values}"
        );
        let mut args = Vec::with_capacity(chunk.len() * COLS);
        for l in chunk {
            args.push(int(l.leaf_index)?);
            args.push(Arg::Text(&l.item_hash));
            args.push(Arg::Text(l.kind));
            args.push(Arg::Text(&l.ref_id));
            args.push(Arg::Text(&l.tenant_id));
            args.push(int(now_ms)?);
        }
        out.push(stmt(db, &sql, &args)?);
    }
    Ok(out)
}

pub fn insert_head(db: &D1Database, head: &HeadRow) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        INSERT_HEAD,
        &[
            int(head.tree_size)?,
            Arg::Text(&head.root),
            Arg::Text(&head.note),
            Arg::Text(&head.note_hash),
            int(head.created_at)?,
        ],
    )
}

// ---------------------------------------------------------------- helpers

/// `?s, ?s+1, ...` for `n` parameters.
pub fn numbered(start: usize, n: usize) -> String {
    (start..start + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(?1, ?2), (?3, ?4), ...` for `rows` rows of `cols` columns.
pub fn row_placeholders(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|r| format!("({})", numbered(r * cols + 1, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An integer argument; every integer we bind is far below 2^53.
pub fn int(v: u64) -> ApiResult<Arg<'static>> {
    i64::try_from(v)
        .map(Arg::Int)
        .map_err(|_| ApiError::internal(format!("integer {v} out of range")))
}

pub fn parse_hash(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|e| ApiError::internal(format!("stored hash {text:?}: {e}")))
}

// ---------------------------------------------------------------- emit

const INSERT_SUBMISSION: &str = "INSERT INTO submissions (id, tenant_id, contract_id, kind, items_root, item_count, received_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
const INSERT_DELTA: &str =
    "INSERT INTO deltas (anchor_id, tenant_id, customer_id, submission_id, position, item_hash, \
     items_root, delta, reason, reference_id, metadata, declared_at, received_at, status) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'QUEUED')";
const INSERT_LEDGER: &str =
    "INSERT OR IGNORE INTO ledgers (tenant_id, customer_id, ledger_id, created_at) \
     VALUES (?1, ?2, ?3, ?4)";

pub struct NewSubmission<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub contract_id: &'a str,
    pub kind: &'static str,
    pub items_root: &'a str,
    pub item_count: u64,
    pub received_at: u64,
}

pub struct NewDelta {
    pub anchor_id: String,
    pub customer_id: String,
    pub ledger_id: String,
    pub position: u64,
    pub item_hash: String,
    pub delta: String,
    pub reason: String,
    pub reference_id: Option<String>,
    pub metadata: Option<String>,
    pub declared_at: u64,
}

/// One atomic batch: the submission, its deltas (QUEUED) and any new ledgers.
pub async fn insert_submission(
    db: &D1Database,
    sub: &NewSubmission<'_>,
    deltas: &[&NewDelta],
) -> ApiResult<()> {
    let mut statements = vec![stmt(
        db,
        INSERT_SUBMISSION,
        &[
            Arg::Text(sub.id),
            Arg::Text(sub.tenant_id),
            Arg::Text(sub.contract_id),
            Arg::Text(sub.kind),
            Arg::Text(sub.items_root),
            int(sub.item_count)?,
            int(sub.received_at)?,
        ],
    )?];
    for d in deltas {
        statements.push(stmt(
            db,
            INSERT_LEDGER,
            &[
                Arg::Text(sub.tenant_id),
                Arg::Text(&d.customer_id),
                Arg::Text(&d.ledger_id),
                int(sub.received_at)?,
            ],
        )?);
        statements.push(stmt(
            db,
            INSERT_DELTA,
            &[
                Arg::Text(&d.anchor_id),
                Arg::Text(sub.tenant_id),
                Arg::Text(&d.customer_id),
                Arg::Text(sub.id),
                int(d.position)?,
                Arg::Text(&d.item_hash),
                Arg::Text(sub.items_root),
                Arg::Text(&d.delta),
                Arg::Text(&d.reason),
                opt_text(d.reference_id.as_deref()),
                opt_text(d.metadata.as_deref()),
                int(d.declared_at)?,
                int(sub.received_at)?,
            ],
        )?);
    }
    super::batch(db, statements).await?;
    Ok(())
}

// ---------------------------------------------------------------- deltas

const DELTA_COLUMNS: &str = "anchor_id, tenant_id, customer_id, submission_id, position, item_hash, items_root, delta, \
     reason, reference_id, metadata, declared_at, received_at, status, leaf_index, tree_size, ledger_seq, \
     balance_after, verified_at, data_purged, purged_at";

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct DeltaRow {
    pub anchor_id: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub submission_id: String,
    pub position: u64,
    pub item_hash: String,
    pub items_root: String,
    pub delta: String,
    pub reason: Option<String>,
    pub reference_id: Option<String>,
    pub metadata: Option<String>,
    pub declared_at: u64,
    pub received_at: u64,
    pub status: String,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    pub ledger_seq: Option<u64>,
    pub balance_after: Option<String>,
    pub verified_at: Option<u64>,
    pub data_purged: u64,
    pub purged_at: Option<u64>,
}

pub async fn queued_deltas(db: &D1Database, limit: usize) -> ApiResult<Vec<DeltaRow>> {
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1"
    );
    all(db, &sql, &[int(limit as u64)?]).await
}

pub async fn delta(
    db: &D1Database,
    tenant_id: &str,
    anchor_id: &str,
) -> ApiResult<Option<DeltaRow>> {
    let sql = format!("SELECT {DELTA_COLUMNS} FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?2");
    first(db, &sql, &[Arg::Text(tenant_id), Arg::Text(anchor_id)]).await
}

pub async fn submission_deltas(
    db: &D1Database,
    tenant_id: &str,
    submission_id: &str,
) -> ApiResult<Vec<DeltaRow>> {
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE tenant_id = ?1 AND submission_id = ?2 ORDER BY position ASC"
    );
    all(db, &sql, &[Arg::Text(tenant_id), Arg::Text(submission_id)]).await
}

/// Verified deltas of a ledger with `from_seq <= ledger_seq <= to_seq`.
pub async fn ledger_deltas(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    from_seq: u64,
    to_seq: u64,
) -> ApiResult<Vec<DeltaRow>> {
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 \
         AND ledger_seq >= ?3 AND ledger_seq <= ?4 ORDER BY ledger_seq ASC"
    );
    all(
        db,
        &sql,
        &[
            Arg::Text(tenant_id),
            Arg::Text(customer_id),
            int(from_seq)?,
            int(to_seq)?,
        ],
    )
    .await
}

pub async fn ledger_delta_at(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    seq: u64,
) -> ApiResult<Option<DeltaRow>> {
    let sql = format!("SELECT {DELTA_COLUMNS} FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 AND ledger_seq = ?3");
    first(
        db,
        &sql,
        &[Arg::Text(tenant_id), Arg::Text(customer_id), int(seq)?],
    )
    .await
}

/// The latest verified delta of this ledger whose itemsRoot is `items_root`.
pub async fn ledger_delta_by_items_root(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    items_root: &str,
) -> ApiResult<Option<DeltaRow>> {
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE items_root = ?3 AND tenant_id = ?1 AND customer_id = ?2 \
         AND status = 'VERIFIED' ORDER BY ledger_seq DESC LIMIT 1"
    );
    first(
        db,
        &sql,
        &[
            Arg::Text(tenant_id),
            Arg::Text(customer_id),
            Arg::Text(items_root),
        ],
    )
    .await
}

pub async fn queued_count(db: &D1Database, tenant_id: &str, customer_id: &str) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let row: Option<N> = first(
        db,
        "SELECT COUNT(*) AS n FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 AND status = 'QUEUED'",
        &[Arg::Text(tenant_id), Arg::Text(customer_id)],
    )
    .await?;
    Ok(row.map_or(0, |r| r.n))
}

pub struct VerifiedDelta<'a> {
    pub anchor_id: &'a str,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub ledger_seq: u64,
    pub balance_after: String,
    pub verified_at: u64,
}

pub fn mark_delta_verified(
    db: &D1Database,
    v: &VerifiedDelta<'_>,
) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "UPDATE deltas SET status = 'VERIFIED', leaf_index = ?2, tree_size = ?3, ledger_seq = ?4, \
         balance_after = ?5, verified_at = ?6 WHERE anchor_id = ?1 AND status = 'QUEUED'",
        &[
            Arg::Text(v.anchor_id),
            int(v.leaf_index)?,
            int(v.tree_size)?,
            int(v.ledger_seq)?,
            Arg::Text(&v.balance_after),
            int(v.verified_at)?,
        ],
    )
}

// ---------------------------------------------------------------- ledgers

const LEDGER_COLUMNS: &str =
    "tenant_id, customer_id, ledger_id, verified_count, computed_balance, \
     first_activity_at, last_activity_at, latest_items_root, created_at";

#[derive(Debug, Clone, Deserialize)]
pub struct LedgerRow {
    pub tenant_id: String,
    pub customer_id: String,
    pub ledger_id: String,
    pub verified_count: u64,
    pub computed_balance: String,
    pub first_activity_at: Option<u64>,
    pub last_activity_at: Option<u64>,
    pub latest_items_root: Option<String>,
    pub created_at: u64,
}

pub async fn ledger(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
) -> ApiResult<Option<LedgerRow>> {
    let sql =
        format!("SELECT {LEDGER_COLUMNS} FROM ledgers WHERE tenant_id = ?1 AND customer_id = ?2");
    first(db, &sql, &[Arg::Text(tenant_id), Arg::Text(customer_id)]).await
}

pub async fn ledgers_page(
    db: &D1Database,
    tenant_id: &str,
    limit: u64,
    offset: u64,
) -> ApiResult<Vec<LedgerRow>> {
    let sql = format!(
        "SELECT {LEDGER_COLUMNS} FROM ledgers WHERE tenant_id = ?1 ORDER BY customer_id ASC LIMIT ?2 OFFSET ?3"
    );
    all(db, &sql, &[Arg::Text(tenant_id), int(limit)?, int(offset)?]).await
}

pub async fn ledgers_count(db: &D1Database, tenant_id: &str) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let row: Option<N> = first(
        db,
        "SELECT COUNT(*) AS n FROM ledgers WHERE tenant_id = ?1",
        &[Arg::Text(tenant_id)],
    )
    .await?;
    Ok(row.map_or(0, |r| r.n))
}

/// The ledgers of `(tenant_id, customer_id)` pairs (chunked).
pub async fn ledgers_for(db: &D1Database, keys: &[(String, String)]) -> ApiResult<Vec<LedgerRow>> {
    let mut out = Vec::new();
    for chunk in keys.chunks(D1_BOUND_PARAMS_MAX / 2) {
        let values = row_placeholders(chunk.len(), 2);
        let sql = format!(
            "SELECT {LEDGER_COLUMNS} FROM ledgers WHERE (tenant_id, customer_id) IN (VALUES {values})"
        );
        let mut args = Vec::with_capacity(chunk.len() * 2);
        for (t, c) in chunk {
            args.push(Arg::Text(t));
            args.push(Arg::Text(c));
        }
        out.extend(all::<LedgerRow>(db, &sql, &args).await?);
    }
    Ok(out)
}

pub struct LedgerUpdate<'a> {
    pub tenant_id: &'a str,
    pub customer_id: &'a str,
    pub old_count: u64,
    pub new_count: u64,
    pub old_balance: String,
    pub new_balance: String,
    pub verified_at: u64,
    pub latest_items_root: &'a str,
    pub window: String,
    /// The window's frontier after this round, and the log positions of
    /// the round's first and last delta of this ledger.
    pub frontier: String,
    pub first_leaf: u64,
    pub last_leaf: u64,
}

/// The ledger's aggregates and its current window, for one sequencer round.
pub fn update_ledger(db: &D1Database, u: &LedgerUpdate<'_>) -> ApiResult<Vec<D1PreparedStatement>> {
    let ledger = stmt(
        db,
        "UPDATE ledgers SET verified_count = ?3, computed_balance = ?4, \
         first_activity_at = COALESCE(first_activity_at, ?5), last_activity_at = ?5, latest_items_root = ?6 \
         WHERE tenant_id = ?1 AND customer_id = ?2",
        &[
            Arg::Text(u.tenant_id),
            Arg::Text(u.customer_id),
            int(u.new_count)?,
            Arg::Text(&u.new_balance),
            int(u.verified_at)?,
            Arg::Text(u.latest_items_root),
        ],
    )?;
    let window = stmt(
        db,
        "INSERT INTO ledger_windows (tenant_id, customer_id, window, first_seq, last_seq, balance_before, \
         balance_after, first_verified_at, last_verified_at, frontier, first_leaf, last_leaf) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11) \
         ON CONFLICT (tenant_id, customer_id, window) DO UPDATE SET last_seq = excluded.last_seq, \
         balance_after = excluded.balance_after, last_verified_at = excluded.last_verified_at, \
         frontier = excluded.frontier, last_leaf = excluded.last_leaf",
        &[
            Arg::Text(u.tenant_id),
            Arg::Text(u.customer_id),
            Arg::Text(&u.window),
            int(u.old_count + 1)?,
            int(u.new_count)?,
            Arg::Text(&u.old_balance),
            Arg::Text(&u.new_balance),
            int(u.verified_at)?,
            Arg::Text(&u.frontier),
            int(u.first_leaf)?,
            int(u.last_leaf)?,
        ],
    )?;
    Ok(vec![ledger, window])
}

/// The frontiers of ledger windows `(tenant, customer)` in `window` (chunked).
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
    let mut out = Vec::new();
    for chunk in keys.chunks((D1_BOUND_PARAMS_MAX - 1) / 2) {
        let values = row_placeholders(chunk.len(), 2);
        let n = chunk.len() * 2 + 1;
        let sql = format!(
            "SELECT tenant_id, customer_id, frontier FROM ledger_windows WHERE window = ?{n} \
             AND (tenant_id, customer_id) IN (VALUES {values})"
        );
        let mut args = Vec::with_capacity(n);
        for (t, c) in chunk {
            args.push(Arg::Text(t));
            args.push(Arg::Text(c));
        }
        args.push(Arg::Text(window));
        for r in all::<Row>(db, &sql, &args).await? {
            out.push((r.tenant_id, r.customer_id, r.frontier));
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, Deserialize)]
pub struct TenantWindowRow {
    pub tenant_id: String,
    pub window: String,
    pub deltas_count: u64,
    pub net_delta: String,
    pub first_leaf: u64,
    pub last_leaf: u64,
    pub frontier: String,
}

const TENANT_WINDOW_COLUMNS: &str =
    "tenant_id, window, deltas_count, net_delta, first_leaf, last_leaf, frontier";

pub async fn tenant_window(
    db: &D1Database,
    tenant_id: &str,
    window: &str,
) -> ApiResult<Option<TenantWindowRow>> {
    let sql = format!(
        "SELECT {TENANT_WINDOW_COLUMNS} FROM tenant_windows WHERE tenant_id = ?1 AND window = ?2"
    );
    first(db, &sql, &[Arg::Text(tenant_id), Arg::Text(window)]).await
}

pub async fn tenant_windows_for(
    db: &D1Database,
    tenants: &[String],
    window: &str,
) -> ApiResult<Vec<TenantWindowRow>> {
    let mut out = Vec::new();
    for chunk in tenants.chunks(D1_BOUND_PARAMS_MAX - 1) {
        let n = chunk.len() + 1;
        let sql = format!(
            "SELECT {TENANT_WINDOW_COLUMNS} FROM tenant_windows WHERE window = ?{n} AND tenant_id IN ({})",
            numbered(1, chunk.len())
        );
        let mut args: Vec<Arg<'_>> = chunk.iter().map(|t| Arg::Text(t)).collect();
        args.push(Arg::Text(window));
        out.extend(all::<TenantWindowRow>(db, &sql, &args).await?);
    }
    Ok(out)
}

pub fn upsert_tenant_window(
    db: &D1Database,
    w: &TenantWindowRow,
) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "INSERT INTO tenant_windows (tenant_id, window, deltas_count, net_delta, first_leaf, last_leaf, frontier) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (tenant_id, window) DO UPDATE SET \
         deltas_count = excluded.deltas_count, net_delta = excluded.net_delta, last_leaf = excluded.last_leaf, \
         frontier = excluded.frontier",
        &[
            Arg::Text(&w.tenant_id),
            Arg::Text(&w.window),
            int(w.deltas_count)?,
            Arg::Text(&w.net_delta),
            int(w.first_leaf)?,
            int(w.last_leaf)?,
            Arg::Text(&w.frontier),
        ],
    )
}

#[derive(Debug, Clone, Deserialize)]
pub struct WindowRow {
    pub window: String,
    pub first_seq: u64,
    pub last_seq: u64,
    pub balance_before: String,
    pub balance_after: String,
    pub first_verified_at: u64,
    pub last_verified_at: u64,
    pub frontier: String,
    pub first_leaf: u64,
    pub last_leaf: u64,
}

/// Windows of a ledger that end after ledger_seq `after_seq`, oldest first.
pub async fn windows_after(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    after_seq: u64,
) -> ApiResult<Vec<WindowRow>> {
    all(
        db,
        "SELECT window, first_seq, last_seq, balance_before, balance_after, first_verified_at, last_verified_at, frontier, first_leaf, last_leaf \
         FROM ledger_windows WHERE tenant_id = ?1 AND customer_id = ?2 AND last_seq > ?3 ORDER BY first_seq ASC",
        &[Arg::Text(tenant_id), Arg::Text(customer_id), int(after_seq)?],
    )
    .await
}

// ---------------------------------------------------------------- events

pub struct NewEvent {
    pub id: String,
    pub tenant_id: String,
    pub kind: &'static str,
    pub payload: String,
}

pub fn insert_events(
    db: &D1Database,
    events: &[NewEvent],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    const COLS: usize = 5;
    let mut out = Vec::new();
    for chunk in events.chunks(D1_BOUND_PARAMS_MAX / COLS) {
        let values = row_placeholders(chunk.len(), COLS);
        let sql = format!(
            "INSERT INTO events (id, tenant_id, type, payload, created_at) VALUES {values}"
        );
        let mut args = Vec::with_capacity(chunk.len() * COLS);
        for e in chunk {
            args.push(Arg::Text(&e.id));
            args.push(Arg::Text(&e.tenant_id));
            args.push(Arg::Text(e.kind));
            args.push(Arg::Text(&e.payload));
            args.push(int(now_ms)?);
        }
        out.push(stmt(db, &sql, &args)?);
    }
    Ok(out)
}

// ---------------------------------------------------------------- facts

const FACT_COLUMNS: &str =
    "tenant_id, content_hash, content, metadata, status, created_at, leaf_index, \
     tree_size, verified_at, data_purged, purged_at";

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct FactRow {
    pub tenant_id: String,
    pub content_hash: String,
    pub content: String,
    pub metadata: Option<String>,
    pub status: String,
    pub created_at: u64,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    pub verified_at: Option<u64>,
    pub data_purged: u64,
    pub purged_at: Option<u64>,
}

/// Inserts the fact unless this tenant already has it; returns whether it was new.
pub async fn insert_fact(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    content: &str,
    metadata: Option<&str>,
    now_ms: u64,
) -> ApiResult<bool> {
    let changed = super::run(
        db,
        "INSERT OR IGNORE INTO facts (tenant_id, content_hash, content, metadata, status, created_at) \
         VALUES (?1, ?2, ?3, ?4, 'QUEUED', ?5)",
        &[
            Arg::Text(tenant_id),
            Arg::Text(content_hash),
            Arg::Text(content),
            opt_text(metadata),
            int(now_ms)?,
        ],
    )
    .await?;
    Ok(changed > 0)
}

pub async fn fact(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
) -> ApiResult<Option<FactRow>> {
    let sql =
        format!("SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = ?1 AND content_hash = ?2");
    first(db, &sql, &[Arg::Text(tenant_id), Arg::Text(content_hash)]).await
}

pub async fn queued_facts(db: &D1Database, limit: usize) -> ApiResult<Vec<FactRow>> {
    let sql = format!(
        "SELECT {FACT_COLUMNS} FROM facts WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1"
    );
    all(db, &sql, &[int(limit as u64)?]).await
}

pub fn mark_fact_verified(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    leaf_index: u64,
    tree_size: u64,
    verified_at: u64,
) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "UPDATE facts SET status = 'VERIFIED', leaf_index = ?3, tree_size = ?4, verified_at = ?5 \
         WHERE tenant_id = ?1 AND content_hash = ?2 AND status = 'QUEUED'",
        &[
            Arg::Text(tenant_id),
            Arg::Text(content_hash),
            int(leaf_index)?,
            int(tree_size)?,
            int(verified_at)?,
        ],
    )
}

fn opt_text(v: Option<&str>) -> Arg<'_> {
    v.map_or(Arg::Null, Arg::Text)
}

// ---------------------------------------------------------------- sweeper

/// The receive time of the oldest QUEUED delta or fact, if any.
pub async fn oldest_queued_at(db: &D1Database) -> ApiResult<Option<u64>> {
    #[derive(Deserialize)]
    struct Oldest {
        at: Option<u64>,
    }
    let row: Option<Oldest> = first(
        db,
        "SELECT MIN(at) AS at FROM (SELECT MIN(received_at) AS at FROM deltas WHERE status = 'QUEUED' \
         UNION ALL SELECT MIN(created_at) AS at FROM facts WHERE status = 'QUEUED')",
        &[],
    )
    .await?;
    Ok(row.and_then(|r| r.at))
}

// ---------------------------------------------------------------- checkpoints

const CHECKPOINT_COLUMNS: &str =
    "id, tenant_id, customer_id, period, merkle_root, delta_count, net_delta, from_index, \
     to_index, status, created_at, committed_at, leaf_index, tree_size";

#[derive(Debug, Clone, Deserialize)]
pub struct CheckpointRow {
    pub id: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub period: String,
    pub merkle_root: String,
    pub delta_count: u64,
    pub net_delta: String,
    pub from_index: u64,
    pub to_index: u64,
    pub status: String,
    pub created_at: u64,
    pub committed_at: Option<u64>,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
}

pub async fn insert_checkpoint(db: &D1Database, c: &CheckpointRow) -> ApiResult<()> {
    super::run(
        db,
        "INSERT INTO checkpoints (id, tenant_id, customer_id, period, merkle_root, delta_count, net_delta, \
         from_index, to_index, status, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?10, ?7, ?8, 'QUEUED', ?9)",
        &[
            Arg::Text(&c.id),
            Arg::Text(&c.tenant_id),
            Arg::Text(&c.customer_id),
            Arg::Text(&c.period),
            Arg::Text(&c.merkle_root),
            int(c.delta_count)?,
            int(c.from_index)?,
            int(c.to_index)?,
            int(c.created_at)?,
            Arg::Text(&c.net_delta),
        ],
    )
    .await?;
    Ok(())
}

pub async fn queued_checkpoints(db: &D1Database, limit: usize) -> ApiResult<Vec<CheckpointRow>> {
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1"
    );
    all(db, &sql, &[int(limit as u64)?]).await
}

pub fn mark_checkpoint_committed(
    db: &D1Database,
    id: &str,
    leaf_index: u64,
    tree_size: u64,
    now_ms: u64,
) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "UPDATE checkpoints SET status = 'COMMITTED', leaf_index = ?2, tree_size = ?3, committed_at = ?4 \
         WHERE id = ?1 AND status = 'QUEUED'",
        &[Arg::Text(id), int(leaf_index)?, int(tree_size)?, int(now_ms)?],
    )
}

/// Checkpoints of a tenant, newest first, optionally filtered.
pub async fn checkpoints_page(
    db: &D1Database,
    tenant_id: &str,
    customer_id: Option<&str>,
    period: Option<&str>,
    limit: u64,
    offset: u64,
) -> ApiResult<(Vec<CheckpointRow>, u64)> {
    let filter =
        "tenant_id = ?1 AND (?2 IS NULL OR customer_id = ?2) AND (?3 IS NULL OR period = ?3)";
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE {filter} ORDER BY created_at DESC, rowid DESC \
         LIMIT ?4 OFFSET ?5"
    );
    let opt = opt_text;
    let rows = all(
        db,
        &sql,
        &[
            Arg::Text(tenant_id),
            opt(customer_id),
            opt(period),
            int(limit)?,
            int(offset)?,
        ],
    )
    .await?;
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let n: Option<N> = first(
        db,
        &format!("SELECT COUNT(*) AS n FROM checkpoints WHERE {filter}"),
        &[Arg::Text(tenant_id), opt(customer_id), opt(period)],
    )
    .await?;
    Ok((rows, n.map_or(0, |n| n.n)))
}

/// The committed checkpoint of the same ledger (customer or 'all') and the
/// latest period before `period`, if any: the link of consecutive checkpoints.
pub async fn previous_committed(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    before_created_at: u64,
) -> ApiResult<Option<CheckpointRow>> {
    let sql = format!(
        "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ?1 AND customer_id = ?2 \
         AND status = 'COMMITTED' AND created_at < ?3 ORDER BY created_at DESC, rowid DESC LIMIT 1"
    );
    first(
        db,
        &sql,
        &[
            Arg::Text(tenant_id),
            Arg::Text(customer_id),
            int(before_created_at)?,
        ],
    )
    .await
}

/// Checkpoints (any tenant) whose merkle_root is `root`.
pub async fn checkpoints_by_root(db: &D1Database, root: &str) -> ApiResult<Vec<CheckpointRow>> {
    let sql = format!("SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE merkle_root = ?1 ORDER BY created_at ASC LIMIT 10");
    all(db, &sql, &[Arg::Text(root)]).await
}

// ---------------------------------------------------------------- receipts

#[derive(Debug, Clone, Deserialize)]
pub struct ReceiptRow {
    pub items_root: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub period: Option<String>,
    pub from_seq: u64,
    pub to_seq: u64,
    pub delta_count: u64,
    pub generated_at: u64,
}

pub async fn record_receipt(db: &D1Database, r: &ReceiptRow) -> ApiResult<()> {
    super::run(
        db,
        "INSERT OR IGNORE INTO receipts (items_root, tenant_id, customer_id, period, from_seq, to_seq, \
         delta_count, generated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        &[
            Arg::Text(&r.items_root),
            Arg::Text(&r.tenant_id),
            Arg::Text(&r.customer_id),
            opt_text(r.period.as_deref()),
            int(r.from_seq)?,
            int(r.to_seq)?,
            int(r.delta_count)?,
            int(r.generated_at)?,
        ],
    )
    .await?;
    Ok(())
}

pub async fn receipts_by_root(db: &D1Database, root: &str) -> ApiResult<Vec<ReceiptRow>> {
    all(
        db,
        "SELECT items_root, tenant_id, customer_id, period, from_seq, to_seq, delta_count, generated_at \
         FROM receipts WHERE items_root = ?1 LIMIT 10",
        &[Arg::Text(root)],
    )
    .await
}

/// The window row of one period of a ledger.
pub async fn window(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    period: &str,
) -> ApiResult<Option<WindowRow>> {
    first(
        db,
        "SELECT window, first_seq, last_seq, balance_before, balance_after, first_verified_at, last_verified_at, frontier, first_leaf, last_leaf \
         FROM ledger_windows WHERE tenant_id = ?1 AND customer_id = ?2 AND window = ?3",
        &[Arg::Text(tenant_id), Arg::Text(customer_id), Arg::Text(period)],
    )
    .await
}

/// Submissions (any tenant) whose items_root is `root`.
pub async fn submissions_by_root(db: &D1Database, root: &str) -> ApiResult<Vec<SubmissionRow>> {
    all(
        db,
        "SELECT id, tenant_id, kind, items_root, item_count, received_at FROM submissions WHERE items_root = ?1 LIMIT 10",
        &[Arg::Text(root)],
    )
    .await
}

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionRow {
    pub id: String,
    pub tenant_id: String,
    pub kind: String,
    pub items_root: String,
    pub item_count: u64,
    pub received_at: u64,
}

/// All deltas of a submission, any tenant (public verify resolves by root).
pub async fn deltas_of_submission(
    db: &D1Database,
    submission_id: &str,
) -> ApiResult<Vec<DeltaRow>> {
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE submission_id = ?1 ORDER BY position ASC"
    );
    all(db, &sql, &[Arg::Text(submission_id)]).await
}

/// Verified deltas covered by a checkpoint, by log position (paged).
pub async fn deltas_in_leaf_range(
    db: &D1Database,
    c: &CheckpointRow,
    from_ms: u64,
    to_ms: u64,
    offset: u64,
    limit: u64,
) -> ApiResult<Vec<DeltaRow>> {
    let customer = (c.customer_id != "all").then_some(c.customer_id.as_str());
    let sql = format!(
        "SELECT {DELTA_COLUMNS} FROM deltas WHERE tenant_id = ?1 AND (?2 IS NULL OR customer_id = ?2) \
         AND status = 'VERIFIED' AND verified_at >= ?3 AND verified_at < ?4 AND leaf_index >= ?5 AND leaf_index <= ?6 \
         ORDER BY leaf_index ASC LIMIT ?7 OFFSET ?8"
    );
    all(
        db,
        &sql,
        &[
            Arg::Text(&c.tenant_id),
            opt_text(customer),
            int(from_ms)?,
            int(to_ms)?,
            int(c.from_index)?,
            int(c.to_index)?,
            int(limit)?,
            int(offset)?,
        ],
    )
    .await
}

pub async fn leaf_at(db: &D1Database, leaf_index: u64) -> ApiResult<Option<LeafRow>> {
    first(
        db,
        "SELECT leaf_index, item_hash, kind, ref_id, tenant_id, appended_at FROM log_leaves WHERE leaf_index = ?1",
        &[int(leaf_index)?],
    )
    .await
}
