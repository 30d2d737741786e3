//! The log's tables: its hashes as C2SP tlog-tiles (`log_tiles`, keyed by
//! level, index and width; issue 27), leaves (`log_leaves`) and signed
//! tree heads (`tree_heads`), and the stored hashes of a log kept before
//! tiles (`log_hashes`, read only: migrated to tiles, `ledger::tiles`).
//! Written only by the sequencer's append (see `sequencer`), the
//! migration and the log's first head.

use bvs_core::hash::Hash32;
use bvs_core::log::StoredHashes;
use bvs_core::tiles::{TileCoord, Tiles};
use serde::Deserialize;
use worker::D1Database;

use super::{
    args, batch_rows, chunked, int, over_json, queries, row, Arg, ListSql, Query, Statements,
};
use crate::error::{ApiError, ApiResult};
use crate::ids::{AnchorId, TenantId};

row! {
    $ select_heads from "tree_heads";
    #[derive(Debug, Clone, Deserialize)]
    pub struct HeadRow {
        tree_size: u64, root: Hash32, note: String, note_hash: Hash32, created_at: u64,
    }
}
super::text_enum! {
    /// What a log leaf is: a delta, a fact, a checkpoint or a liabilities
    /// statement (`log_leaves.kind`).
    pub enum LeafKind {
        Delta = "delta",
        Fact = "fact",
        Checkpoint = "checkpoint",
        Liabilities = "liabilities",
        /// A delta a condition refused (issue 43): its refusal item.
        Refusal = "refusal",
    }
}

row! {
    $ select_leaves from "log_leaves";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct LeafRow {
        leaf_index: u64, item_hash: Hash32, kind: LeafKind, ref_id: String, tenant_id: TenantId,
        appended_at: u64,
    }
}

const PROBE_WRITE: &str = "INSERT INTO log_meta (key, value) VALUES ('sequencer_probe', ?1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

super::statements! {
    /// One harmless write (the time of the sequencer's last probe, in
    /// `log_meta`): succeeds when the database takes writes.
    pub fn probe_write<'a>(now_ms: u64) = PROBE_WRITE;
}

const SELECT_LATEST_HEAD: &str = select_heads!("ORDER BY tree_size DESC LIMIT 1");

super::statements! {
    /// `latest_head` for a caller's batch (`store::proofs`).
    pub fn latest_head_statement<'a>() = SELECT_LATEST_HEAD;
}
const SELECT_HEAD_AT: &str = select_heads!("WHERE tree_size = ?1");
/// The signed tree head a delta (`?1` tenant, `?2` anchorId) was verified
/// into, if any.
const SELECT_HEAD_OF_DELTA: &str = select_heads!(
    "WHERE tree_size = (SELECT tree_size FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?2)"
);

super::statements! {
    /// For a delta's status batch (`store::deltas::status`).
    pub fn head_of_delta_statement<'a>(tenant_id: &'a TenantId, anchor_id: &'a AnchorId) = SELECT_HEAD_OF_DELTA;
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

queries! {
    pub fn latest_head() -> Option<HeadRow> = first(SELECT_LATEST_HEAD);
    pub fn head_at(size: u64) -> Option<HeadRow> = first(SELECT_HEAD_AT);
    pub fn heads_from(from_size: u64, limit: u64) -> Vec<HeadRow> = all(SELECT_HEADS_PAGE);
    /// The empty log's head (size 0); a no-op when the log has one already.
    pub fn insert_first_head(root: &Hash32, note: &str, note_hash: &Hash32, now_ms: u64) -> ()
        = exec(INSERT_FIRST_HEAD);
    pub fn leaf_by_item(item_hash: &Hash32) -> Option<LeafRow> = first(SELECT_LEAF_BY_ITEM);
    pub fn leaf_at(leaf_index: u64) -> Option<LeafRow> = first(SELECT_LEAF_AT);
}

/// Every stored width of the tiles `?1` names (a JSON array of `[level,
/// index]`), the bytes as hex (one string per tile through the binding).
const SELECT_TILES: &str =
    "SELECT t.level AS level, t.idx AS idx, t.width AS width, hex(t.data) AS data \
     FROM json_each(?1) AS j JOIN log_tiles AS t \
     ON t.level = json_extract(j.value, '$[0]') AND t.idx = json_extract(j.value, '$[1]')";
/// Tiles are inserted, never replaced: two rounds that grow the log from
/// the same size write the same (level, index, width) and cannot both
/// commit.
const INSERT_TILES: ListSql = ListSql {
    sql: "INSERT INTO log_tiles (level, idx, width, data) VALUES {list}",
    cols: 4,
};
/// Drops the narrower copies of the tiles `?1` (`[level, index, width]`
/// each) just written: the wider tile holds the same hashes first.
const DELETE_NARROWER_TILES: &str = "DELETE FROM log_tiles WHERE rowid IN (SELECT t.rowid \
     FROM json_each(?1) AS j JOIN log_tiles AS t ON t.level = json_extract(j.value, '$[0]') \
     AND t.idx = json_extract(j.value, '$[1]') AND t.width < json_extract(j.value, '$[2]'))";
/// The migration's tiles, written again as they are if a step runs twice.
const INSERT_TILES_MIGRATED: ListSql = ListSql {
    sql: "INSERT OR REPLACE INTO log_tiles (level, idx, width, data) VALUES {list}",
    cols: 4,
};
/// The migration's place: `<target size>:<next tile>` (ledger::tiles).
const SET_MIGRATION_PLACE: &str =
    "INSERT INTO log_meta (key, value) VALUES ('tiles_migration', ?1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const CLEAR_MIGRATION_PLACE: &str = "DELETE FROM log_meta WHERE key = 'tiles_migration'";
/// Where a log stands toward tiles, in one statement (always one row):
/// the size its tiles cover, its latest head's size, the migration's place.
const SELECT_MIGRATION_STATE: &str = "SELECT \
     (SELECT value FROM log_meta WHERE key = 'tiles_size') AS tiles_size, \
     (SELECT tree_size FROM tree_heads ORDER BY tree_size DESC LIMIT 1) AS head, \
     (SELECT value FROM log_meta WHERE key = 'tiles_migration') AS place";
/// The stored hashes of a pre-tiles log in the index range `?1 ..= ?2`.
const SELECT_STORED_RANGE: &str = "SELECT idx, hash FROM log_hashes WHERE idx >= ?1 AND idx <= ?2";
/// The tree size the tiles cover (absent: 0, an empty or a pre-tiles log).
const SELECT_TILES_SIZE: &str = "SELECT value FROM log_meta WHERE key = 'tiles_size'";
const SET_TILES_SIZE: &str = "INSERT INTO log_meta (key, value) VALUES ('tiles_size', ?1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";
/// The leaves of a round (`?1`: `[leaf_index, item_hash, kind, ref_id,
/// tenant_id]` each), appended at `?2`.
const INSERT_LEAVES_SET: &str =
    "INSERT INTO log_leaves (leaf_index, item_hash, kind, ref_id, tenant_id, appended_at) \
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), ?2 \
     FROM json_each(?1)";

/// A stored tile, its hex parsed and checked against its width as the
/// row is read.
#[derive(Deserialize)]
#[serde(try_from = "StoredTile")]
pub struct TileRow {
    level: u8,
    idx: u64,
    data: Vec<u8>,
}

/// A `log_tiles` row as D1 answers it.
#[derive(Deserialize)]
struct StoredTile {
    level: u8,
    idx: u64,
    width: u32,
    data: String,
}

impl TryFrom<StoredTile> for TileRow {
    type Error = String;

    fn try_from(r: StoredTile) -> Result<TileRow, String> {
        let data = hex::decode(&r.data).map_err(|e| format!("tile {}/{}: {e}", r.level, r.idx))?;
        if data.len() != r.width as usize * bvs_core::tiles::HASH_BYTES {
            return Err(format!(
                "tile {}/{} has {} bytes for width {}",
                r.level,
                r.idx,
                data.len(),
                r.width
            ));
        }
        Ok(TileRow {
            level: r.level,
            idx: r.idx,
            data,
        })
    }
}

impl From<TileRow> for (u8, u64, Vec<u8>) {
    fn from(r: TileRow) -> Self {
        (r.level, r.idx, r.data)
    }
}

/// The statement reading the tiles `coords` (every stored width of each),
/// for a caller's batch; its rows are [`TileRow`]s (`Tiles::from_stored`).
///
/// # Errors
/// A value that cannot be bound.
pub fn tiles_statement<'a>(coords: &[TileCoord]) -> ApiResult<Query<'a>> {
    let keys: Vec<(u8, u64)> = coords.iter().map(|c| (c.level, c.index)).collect();
    let set = serde_json::to_string(&keys)?;
    Ok(Query::new(SELECT_TILES, args![set]))
}

/// Reads the tiles `coords`, with `writes` at the end of the same batch
/// (one round trip; the writes are atomic with the read).
///
/// # Errors
/// D1 errors, or a stored tile that is no tile.
pub async fn tiles_with(
    db: &D1Database,
    coords: &[TileCoord],
    writes: Vec<Query<'_>>,
) -> ApiResult<Tiles> {
    if coords.is_empty() {
        if !writes.is_empty() {
            super::batch(db, writes).await?;
        }
        return Ok(Tiles::new());
    }
    let mut statements = vec![tiles_statement(coords)?];
    statements.extend(writes);
    let results = super::batch(db, statements).await?;
    let rows = super::rows::<TileRow>(&results, 0)?;
    Tiles::from_stored(rows).map_err(ApiError::internal)
}

/// The stored hashes `indexes`, wherever the log keeps them: from the
/// tiles that hold them, read with `writes` at the end of the same batch
/// (one round trip), and those no tile holds yet (a log kept before tiles,
/// mid-migration: `ledger::tiles`) from its stored-hash rows, in a second
/// round trip only then ([`complete`]). The rows are decoded as they are
/// read (tiles checked, hashes parsed); core puts them together.
///
/// # Errors
/// D1 errors, a stored tile that is no tile, or a stored hash found
/// nowhere.
pub async fn hashes_with(
    db: &D1Database,
    indexes: &[u64],
    writes: Vec<Query<'_>>,
) -> ApiResult<StoredHashes> {
    let tiles = tiles_with(db, &bvs_core::tiles::tiles_for(indexes), writes).await?;
    complete(db, &tiles, indexes).await
}

/// The stored hashes `indexes` from `tiles`, and what they lack from a
/// pre-tiles log's rows (a round trip only then; core fills them in).
///
/// # Errors
/// D1 errors, or a stored hash found nowhere.
pub async fn complete(db: &D1Database, tiles: &Tiles, indexes: &[u64]) -> ApiResult<StoredHashes> {
    let (mut hashes, missing) = tiles.stored_hashes(indexes);
    let legacy = stored_hashes(db, &missing).await?;
    hashes.fill(&missing, &legacy).map_err(ApiError::internal)?;
    Ok(hashes)
}

/// The latest signed tree head and the tiles `coords` (every stored width
/// of each), read in one batch: the tiles as they stood under that head.
///
/// # Errors
/// D1 errors, or a stored tile that is no tile.
pub async fn latest_head_and_tiles(
    db: &D1Database,
    coords: &[TileCoord],
) -> ApiResult<(Option<HeadRow>, Tiles)> {
    let statements = vec![latest_head_statement()?, tiles_statement(coords)?];
    let results = super::batch(db, statements).await?;
    let head = super::rows::<HeadRow>(&results, 0)?.into_iter().next();
    let tiles = Tiles::from_stored(super::rows::<TileRow>(&results, 1)?);
    Ok((head, tiles.map_err(ApiError::internal)?))
}

/// Statements that write `tiles` (coordinates and bytes) and drop their
/// narrower copies: a round's new tiles.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_tiles<'a>(tiles: &'a [(TileCoord, Vec<u8>)]) -> Statements<'a> {
    if tiles.is_empty() {
        return Ok(Vec::new());
    }
    insert_tiles_with(&INSERT_TILES, tiles)
}

/// `tiles` written by `insert`, then their narrower copies dropped.
fn insert_tiles_with<'a>(insert: &ListSql, tiles: &'a [(TileCoord, Vec<u8>)]) -> Statements<'a> {
    let mut out = chunked(insert, &[], tiles, |(c, data), args| {
        args.extend([
            Arg::Int(i64::from(c.level)),
            int(c.index)?,
            Arg::Int(i64::from(c.width)),
            Arg::Blob(data),
        ]);
        Ok(())
    })?;
    let keys: Vec<(u8, u64, u32)> = tiles
        .iter()
        .map(|(c, _)| (c.level, c.index, c.width))
        .collect();
    out.extend(over_json(DELETE_NARROWER_TILES, &keys, &[])?);
    Ok(out)
}

/// Where a log stands toward tiles (`ledger::tiles`: its migration),
/// parsed as its row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "StoredMigrationState")]
pub struct MigrationState {
    /// The tree size its tiles cover (0 for a log kept before tiles until
    /// its migration ends).
    pub covered: u64,
    /// Its latest signed head's size (0 before its first head).
    pub head: u64,
    /// The migration's place: the size it migrates to and its next tile.
    pub place: Option<(u64, usize)>,
}

/// The migration state's row as D1 answers it.
#[derive(Deserialize)]
struct StoredMigrationState {
    tiles_size: Option<String>,
    head: Option<u64>,
    place: Option<String>,
}

impl TryFrom<StoredMigrationState> for MigrationState {
    type Error = String;

    fn try_from(row: StoredMigrationState) -> Result<MigrationState, String> {
        let covered = match row.tiles_size {
            None => 0,
            Some(v) => v.parse().map_err(|_| format!("tiles_size {v:?}"))?,
        };
        let place = row.place.and_then(|v| {
            let (target, next) = v.split_once(':')?;
            Some((target.parse().ok()?, next.parse().ok()?))
        });
        Ok(MigrationState {
            covered,
            head: row.head.unwrap_or(0),
            place,
        })
    }
}

/// Where the log stands toward tiles: one statement, one round trip.
///
/// # Errors
/// D1 errors, or a stored tiles size that is no number.
pub async fn migration_state(db: &D1Database) -> ApiResult<MigrationState> {
    let state: Option<MigrationState> =
        super::first(db, Query::new(SELECT_MIGRATION_STATE, [])).await?;
    state.ok_or_else(|| ApiError::internal("the migration state read returned no row"))
}

/// What a migration step builds its tiles from, in one batch round trip
/// (none when there is nothing to read): a pre-tiles log's stored hashes
/// in the index range `range` (inclusive) and at `listed`, and the tiles
/// `coords` as stored already (narrower copies).
///
/// # Errors
/// D1 errors, or a stored tile that is no tile.
pub async fn migration_sources(
    db: &D1Database,
    range: Option<(u64, u64)>,
    listed: &[u64],
    coords: &[TileCoord],
) -> ApiResult<(StoredHashes, Tiles)> {
    let mut statements = stored_hashes_statements(range, listed)?;
    let reads = statements.len();
    if !coords.is_empty() {
        statements.push(tiles_statement(coords)?);
    }
    if statements.is_empty() {
        return Ok((StoredHashes::new(), Tiles::new()));
    }
    let results = super::batch(db, statements).await?;
    let stored = if coords.is_empty() {
        Vec::new()
    } else {
        super::rows::<TileRow>(&results, reads)?
    };
    let mut hashes = StoredHashes::new();
    for i in 0..reads {
        for r in super::rows::<HashRow>(&results, i)? {
            hashes.insert(r.idx, r.hash);
        }
    }
    let tiles = Tiles::from_stored(stored).map_err(ApiError::internal)?;
    Ok((hashes, tiles))
}

/// Writes a migration step in one batch: its `tiles` (over any copy, their
/// narrower copies dropped), then its place toward `target`: the `next`
/// tile, or with `None` the end (the tiles cover `target`).
///
/// # Errors
/// D1 errors, or a value that cannot be bound.
pub async fn write_migration_step(
    db: &D1Database,
    tiles: &[(TileCoord, Vec<u8>)],
    target: u64,
    next: Option<usize>,
) -> ApiResult<()> {
    let mut statements = insert_tiles_with(&INSERT_TILES_MIGRATED, tiles)?;
    match next {
        None => {
            statements.push(set_tiles_size(target)?);
            statements.push(Query::new(CLEAR_MIGRATION_PLACE, []));
        }
        Some(next) => {
            let text = format!("{target}:{next}");
            statements.push(Query::new(SET_MIGRATION_PLACE, args![text]));
        }
    }
    super::batch(db, statements).await?;
    Ok(())
}

#[derive(Deserialize)]
struct HashRow {
    idx: u64,
    hash: Hash32,
}

/// The reads of a pre-tiles log's stored hashes in `range` (inclusive)
/// and at `listed`.
pub(super) fn stored_hashes_statements<'a>(
    range: Option<(u64, u64)>,
    listed: &'a [u64],
) -> Statements<'a> {
    let mut statements = Vec::new();
    if let Some((lo, hi)) = range {
        statements.push(Query::new(SELECT_STORED_RANGE, args![lo, hi]));
    }
    statements.extend(chunked(&SELECT_STORED_HASHES, &[], listed, |i, args| {
        args.push(int(*i)?);
        Ok(())
    })?);
    Ok(statements)
}

super::statements! {
    /// `tiles_size` for a caller's batch (its one row: `value`).
    pub fn tiles_size_statement<'a>() = SELECT_TILES_SIZE;
}

/// The statement recording that the tiles cover `size` leaves.
///
/// # Errors
/// A value that cannot be bound.
pub fn set_tiles_size<'a>(size: u64) -> ApiResult<Query<'a>> {
    let text = size.to_string();
    Ok(Query::new(SET_TILES_SIZE, args![text]))
}

/// The leaves' insert: one statement per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_leaf_set<'a>(leaves: &[NewLeaf], now_ms: u64) -> Statements<'a> {
    let rows: Vec<(u64, String, &str, &str, &str)> = leaves
        .iter()
        .map(|l| {
            (
                l.leaf_index,
                l.item_hash.to_hex(),
                l.kind.as_str(),
                l.ref_id.as_str(),
                l.tenant_id.as_str(),
            )
        })
        .collect();
    over_json(INSERT_LEAVES_SET, &rows, &args![now_ms])
}

/// Reads the stored hashes at `indexes` of a pre-tiles log: one SELECT per
/// 100 indexes (D1's parameter limit), all sent in one batch round trip
/// (none for no indexes).
///
/// # Errors
/// D1 errors.
pub async fn stored_hashes(db: &D1Database, indexes: &[u64]) -> ApiResult<StoredHashes> {
    let statements = stored_hashes_statements(None, indexes)?;
    let mut out = StoredHashes::new();
    for r in batch_rows::<HashRow>(db, statements).await? {
        out.insert(r.idx, r.hash);
    }
    Ok(out)
}

/// Statements that insert stored hashes.
pub fn insert_stored_hashes<'a>(rows: &[(u64, Hash32)]) -> ApiResult<Vec<Query<'a>>> {
    chunked(&INSERT_STORED_HASHES, &[], rows, |(i, h), args| {
        args.push(int(*i)?);
        args.push(Arg::Owned(h.to_hex()));
        Ok(())
    })
}

pub struct NewLeaf {
    pub leaf_index: u64,
    pub item_hash: Hash32,
    pub kind: LeafKind,
    pub ref_id: String,
    pub tenant_id: TenantId,
}

pub fn insert_head<'a>(head: &'a HeadRow) -> ApiResult<Query<'a>> {
    let args = args![
        head.tree_size,
        &head.root,
        &head.note,
        &head.note_hash,
        head.created_at
    ];
    Ok(Query::new(INSERT_HEAD, args))
}
