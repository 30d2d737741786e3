//! The log's tables: stored hashes (`log_hashes`), leaves (`log_leaves`)
//! and signed tree heads (`tree_heads`). Written only by the sequencer's
//! append (see `ledger::sequence`) and the log's first head.

use bvs_core::hash::Hash32;
use bvs_core::log::StoredHashes;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{
    args, batch_rows, chunked, int, parse_hash, queries, row, run, stmt, Arg, ListSql, Statements,
};
use crate::error::ApiResult;

row! {
    $ select_heads from "tree_heads";
    #[derive(Debug, Clone, Deserialize)]
    pub struct HeadRow {
        tree_size: u64, root: String, note: String, note_hash: String, created_at: u64,
    }
}
row! {
    $ select_leaves from "log_leaves";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct LeafRow {
        leaf_index: u64, item_hash: String, kind: String, ref_id: String, tenant_id: String,
        appended_at: u64,
    }
}

const PROBE_WRITE: &str = "INSERT INTO log_meta (key, value) VALUES ('sequencer_probe', ?1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// One harmless write (the time of the sequencer's last probe, in
/// `log_meta`): succeeds when the database takes writes.
pub async fn probe_write(db: &D1Database, now_ms: u64) -> ApiResult<()> {
    run(db, PROBE_WRITE, &args![now_ms]).await?;
    Ok(())
}

const SELECT_LATEST_HEAD: &str = select_heads!("ORDER BY tree_size DESC LIMIT 1");

super::statements! {
    /// `latest_head` for a caller's batch (`store::lookup`).
    pub fn latest_head_statement() = SELECT_LATEST_HEAD;
}
const SELECT_HEAD_AT: &str = select_heads!("WHERE tree_size = ?1");
/// The signed tree head a delta (`?1` tenant, `?2` anchorId) was verified
/// into, if any.
const SELECT_HEAD_OF_DELTA: &str = select_heads!(
    "WHERE tree_size = (SELECT tree_size FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?2)"
);

super::statements! {
    /// For a delta's status batch (`store::deltas::status`).
    pub fn head_of_delta_statement(tenant_id: &str, anchor_id: &str) = SELECT_HEAD_OF_DELTA;
}
const SELECT_HEADS_PAGE: &str =
    select_heads!("WHERE tree_size >= ?1 ORDER BY tree_size ASC LIMIT ?2");
const INSERT_HEAD: &str = "INSERT INTO tree_heads (tree_size, root, note, note_hash, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5)";
const INSERT_FIRST_HEAD: &str =
    "INSERT OR IGNORE INTO tree_heads (tree_size, root, note, note_hash, created_at) \
     VALUES (0, ?1, ?2, ?3, ?4)";
const SELECT_LEAF_BY_ITEM: &str =
    select_leaves!("WHERE item_hash = ?1 ORDER BY leaf_index ASC LIMIT 1");
const SELECT_LEAF_AT: &str = select_leaves!("WHERE leaf_index = ?1");
const SELECT_STORED_HASHES: ListSql = ListSql {
    sql: "SELECT idx, hash FROM log_hashes WHERE idx IN ({list})",
    cols: 1,
};
const INSERT_STORED_HASHES: ListSql = ListSql {
    sql: "INSERT INTO log_hashes (idx, hash) VALUES {list}",
    cols: 2,
};
const INSERT_LEAVES: ListSql = ListSql {
    sql: "INSERT INTO log_leaves (leaf_index, item_hash, kind, ref_id, tenant_id, appended_at) \
          VALUES {list}",
    cols: 6,
};

queries! {
    pub fn latest_head() -> Option<HeadRow> = first(SELECT_LATEST_HEAD);
    pub fn head_at(size: u64) -> Option<HeadRow> = first(SELECT_HEAD_AT);
    pub fn heads_from(from_size: u64, limit: u64) -> Vec<HeadRow> = all(SELECT_HEADS_PAGE);
    /// The empty log's head (size 0); a no-op when the log has one already.
    pub fn insert_first_head(root: &str, note: &str, note_hash: &str, now_ms: u64) -> ()
        = exec(INSERT_FIRST_HEAD);
    pub fn leaf_by_item(item_hash: &str) -> Option<LeafRow> = first(SELECT_LEAF_BY_ITEM);
    pub fn leaf_at(leaf_index: u64) -> Option<LeafRow> = first(SELECT_LEAF_AT);
}

/// Reads the stored hashes at `indexes`: one SELECT per 100 indexes (D1's
/// parameter limit), all sent in one batch round trip.
pub async fn stored_hashes(db: &D1Database, indexes: &[u64]) -> ApiResult<StoredHashes> {
    stored_hashes_with(db, indexes, Vec::new()).await
}

/// Like [`stored_hashes`], with `writes` (statements that return no rows)
/// at the end of the same batch: one round trip for both, and the writes
/// are atomic with the reads.
///
/// # Errors
/// D1 errors.
pub async fn stored_hashes_with(
    db: &D1Database,
    indexes: &[u64],
    writes: Vec<D1PreparedStatement>,
) -> ApiResult<StoredHashes> {
    #[derive(Deserialize)]
    struct HashRow {
        idx: u64,
        hash: String,
    }
    let mut statements = chunked(db, &SELECT_STORED_HASHES, &[], indexes, |i, args| {
        args.push(int(*i)?);
        Ok(())
    })?;
    statements.extend(writes);
    let mut out = StoredHashes::new();
    for r in batch_rows::<HashRow>(db, statements).await? {
        out.insert(r.idx, parse_hash(&r.hash)?);
    }
    Ok(out)
}

/// Statements that insert stored hashes.
pub fn insert_stored_hashes(
    db: &D1Database,
    rows: &[(u64, Hash32)],
) -> ApiResult<Vec<D1PreparedStatement>> {
    let hexes: Vec<(u64, String)> = rows.iter().map(|(i, h)| (*i, h.to_hex())).collect();
    chunked(db, &INSERT_STORED_HASHES, &[], &hexes, |(i, h), args| {
        args.push(int(*i)?);
        args.push(Arg::Text(h));
        Ok(())
    })
}

pub struct NewLeaf {
    pub leaf_index: u64,
    pub item_hash: Hash32,
    pub kind: &'static str,
    pub ref_id: String,
    pub tenant_id: String,
}

pub fn insert_leaves(db: &D1Database, leaves: &[NewLeaf], now_ms: u64) -> Statements {
    let now = int(now_ms)?;
    let hexes: Vec<String> = leaves.iter().map(|l| l.item_hash.to_hex()).collect();
    let rows: Vec<(&NewLeaf, &String)> = leaves.iter().zip(&hexes).collect();
    chunked(db, &INSERT_LEAVES, &[], &rows, |(l, hex), args| {
        args.extend(args![
            l.leaf_index,
            hex.as_str(),
            l.kind,
            &l.ref_id,
            &l.tenant_id,
            now
        ]);
        Ok(())
    })
}

pub fn insert_head(db: &D1Database, head: &HeadRow) -> ApiResult<D1PreparedStatement> {
    let args = args![
        head.tree_size,
        &head.root,
        &head.note,
        &head.note_hash,
        head.created_at
    ];
    stmt(db, INSERT_HEAD, &args)
}
