//! The log's tables: stored hashes (`log_hashes`), leaves (`log_leaves`)
//! and signed tree heads (`tree_heads`). Written only by the sequencer's
//! append (see `ledger::sequence`) and the log's first head.

use bvs_core::hash::Hash32;
use bvs_core::log::StoredHashes;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, batch_rows, chunked, first, int, parse_hash, run, stmt, Arg, ListSql};
use crate::error::ApiResult;

macro_rules! select_heads {
    ($tail:literal) => {
        concat!(
            "SELECT tree_size, root, note, note_hash, created_at FROM tree_heads ",
            $tail
        )
    };
}
macro_rules! select_leaves {
    ($tail:literal) => {
        concat!(
            "SELECT leaf_index, item_hash, kind, ref_id, tenant_id, appended_at FROM log_leaves ",
            $tail
        )
    };
}

const SELECT_LATEST_HEAD: &str = select_heads!("ORDER BY tree_size DESC LIMIT 1");
const SELECT_HEAD_AT: &str = select_heads!("WHERE tree_size = ?1");
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

/// The empty log's head (size 0); a no-op when the log has one already.
pub async fn insert_first_head(
    db: &D1Database,
    root: &str,
    note: &str,
    note_hash: &str,
    now_ms: u64,
) -> ApiResult<()> {
    let args = [
        Arg::Text(root),
        Arg::Text(note),
        Arg::Text(note_hash),
        int(now_ms)?,
    ];
    run(db, INSERT_FIRST_HEAD, &args).await?;
    Ok(())
}

pub async fn leaf_by_item(db: &D1Database, item_hash: &str) -> ApiResult<Option<LeafRow>> {
    first(db, SELECT_LEAF_BY_ITEM, &[Arg::Text(item_hash)]).await
}

pub async fn leaf_at(db: &D1Database, leaf_index: u64) -> ApiResult<Option<LeafRow>> {
    first(db, SELECT_LEAF_AT, &[int(leaf_index)?]).await
}

/// Reads the stored hashes at `indexes`: one SELECT per 100 indexes (D1's
/// parameter limit), all sent in one batch round trip.
pub async fn stored_hashes(db: &D1Database, indexes: &[u64]) -> ApiResult<StoredHashes> {
    #[derive(Deserialize)]
    struct HashRow {
        idx: u64,
        hash: String,
    }
    let statements = chunked(db, &SELECT_STORED_HASHES, &[], indexes, |i, args| {
        args.push(int(*i)?);
        Ok(())
    })?;
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

pub fn insert_leaves(
    db: &D1Database,
    leaves: &[NewLeaf],
    now_ms: u64,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let now = int(now_ms)?;
    let hexes: Vec<String> = leaves.iter().map(|l| l.item_hash.to_hex()).collect();
    let rows: Vec<(&NewLeaf, &String)> = leaves.iter().zip(&hexes).collect();
    chunked(db, &INSERT_LEAVES, &[], &rows, |(l, hex), args| {
        args.extend([
            int(l.leaf_index)?,
            Arg::Text(hex),
            Arg::Text(l.kind),
            Arg::Text(&l.ref_id),
            Arg::Text(&l.tenant_id),
            now,
        ]);
        Ok(())
    })
}

pub fn insert_head(db: &D1Database, head: &HeadRow) -> ApiResult<D1PreparedStatement> {
    let args = [
        int(head.tree_size)?,
        Arg::Text(&head.root),
        Arg::Text(&head.note),
        Arg::Text(&head.note_hash),
        int(head.created_at)?,
    ];
    stmt(db, INSERT_HEAD, &args)
}
