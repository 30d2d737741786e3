//! The log over C2SP tlog-tiles (issue 27, `bvs_core::tiles`): proofs and
//! appends read tiles, an append writes the tiles it grows, and a log kept
//! as stored hashes before tiles (`log_hashes`) is migrated to tiles,
//! resumably, by its sequencer.
//!
//! Reading: the stored hashes an operation needs name the tiles to read
//! (one statement, in the caller's batch); a stored hash no tile holds yet
//! (a log mid-migration) is read from `log_hashes` in a second round trip,
//! only then. Answers are computed by the same `bvs_core::log` code over
//! the same hashes as before tiles: byte for byte the same proofs.
//!
//! Migration: the tiles a log of size `a` lacks to be the tiles of size
//! `T` are exactly those its growth from `a` to `T` writes
//! (`tiles::grown`): the migration writes them in order, a few per step,
//! each step one batch (their stored hashes read, then the tiles and the
//! step's place written together), and records `tiles_size = T` with the
//! last. Until then the sequencer appends nothing; proofs read tiles where
//! they exist and stored hashes where not, so every published root and
//! proof stays answerable throughout.

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::TreeSize;
use bvs_core::tiles::{self, TileCoord, Tiles};
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::store;

/// Inclusion proofs of `leaves` into the tree of `size`, reading each
/// needed tile once (a few tiles per level, in one batch round trip).
pub async fn inclusion_proofs(
    db: &D1Database,
    leaves: &[u64],
    size: u64,
) -> ApiResult<Vec<Vec<Hash32>>> {
    inclusion_proofs_with(db, leaves, size, Vec::new()).await
}

/// Like [`inclusion_proofs`], with `writes` sent in the same batch as the
/// tile reads (issue 16: a receipt's record costs no round trip of its
/// own); the batch is atomic, so the writes land only if the reads
/// succeed.
pub async fn inclusion_proofs_with(
    db: &D1Database,
    leaves: &[u64],
    size: u64,
    writes: Vec<crate::store::Query<'_>>,
) -> ApiResult<Vec<Vec<Hash32>>> {
    let mut need = Vec::new();
    for leaf in leaves {
        need.extend(
            log::indexes_for_inclusion(bvs_core::LeafIndex(*leaf), TreeSize(size))
                .map_err(ApiError::internal)?,
        );
    }
    need.sort_unstable();
    need.dedup();
    let hashes = if need.is_empty() && writes.is_empty() {
        StoredHashes::new()
    } else {
        read_hashes(db, &need, writes).await?
    };
    leaves
        .iter()
        .map(|leaf| {
            log::inclusion_proof(bvs_core::LeafIndex(*leaf), TreeSize(size), &hashes)
                .map_err(ApiError::internal)
        })
        .collect()
}

/// A consistency proof between two tree sizes.
pub async fn consistency_proof(db: &D1Database, old: u64, new: u64) -> ApiResult<Vec<Hash32>> {
    let need =
        log::indexes_for_consistency(TreeSize(old), TreeSize(new)).map_err(ApiError::internal)?;
    let hashes = if need.is_empty() {
        StoredHashes::new()
    } else {
        read_hashes(db, &need, Vec::new()).await?
    };
    log::consistency_proof(TreeSize(old), TreeSize(new), &hashes).map_err(ApiError::internal)
}

/// Reads the stored hashes `indexes` from tiles, with `writes` in the same
/// batch (one round trip); stored hashes no tile holds yet from the rows of
/// a log kept before tiles (a second round trip, only mid-migration):
/// `store::log::hashes_with`.
///
/// # Errors
/// D1 errors, or a stored hash found nowhere.
pub async fn read_hashes(
    db: &D1Database,
    indexes: &[u64],
    writes: Vec<crate::store::Query<'_>>,
) -> ApiResult<StoredHashes> {
    store::log::hashes_with(db, indexes, writes).await
}

/// The stored indexes an append of `count` leaves to a log of `old_size`
/// reads: the right fringe it closes and the old subtrees of the new root.
///
/// # Errors
/// A size past the log's limits.
pub fn indexes_for_append(old_size: u64, count: u64) -> ApiResult<Vec<u64>> {
    let new_size = old_size + count;
    let existing = log::stored_hash_count(TreeSize(old_size));
    let mut need =
        log::indexes_for_append(TreeSize(old_size), count).map_err(ApiError::internal)?;
    need.extend(
        log::indexes_for_root(TreeSize(new_size))
            .map_err(ApiError::internal)?
            .into_iter()
            .filter(|i| *i < existing),
    );
    need.sort_unstable();
    need.dedup();
    Ok(need)
}

/// The tiles an append of `count` leaves to a log of `old_size` reads:
/// those holding [`indexes_for_append`] and the old right edge (which the
/// append widens).
///
/// # Errors
/// A size past the log's limits.
pub fn tiles_for_append(old_size: u64, count: u64) -> ApiResult<Vec<TileCoord>> {
    let mut coords = tiles::tiles_for(&indexes_for_append(old_size, count)?);
    coords.extend(tiles::edge(old_size));
    coords.sort_unstable_by_key(|c| (c.level, c.index));
    coords.dedup_by_key(|c| (c.level, c.index));
    Ok(coords)
}

/// What appending leaves computes, before it is written.
pub struct Growth {
    /// The new tree's root.
    pub root: Hash32,
    /// The tiles to write (coordinates at the new size, bytes).
    pub tiles: Vec<(TileCoord, Vec<u8>)>,
}

/// Appends `items` (itemHashes) to the log of `old_size` whose tiles
/// [`tiles_for_append`] are in `tiles`: the new root and the grown tiles.
///
/// # Errors
/// A tile the append needs that `tiles` lacks (the log's tiles do not
/// cover `old_size`), or a size past the log's limits.
pub fn grow(old_size: u64, items: &[Hash32], tiles: &Tiles) -> ApiResult<Growth> {
    let count = items.len() as u64;
    let new_size = old_size + count;
    let need = indexes_for_append(old_size, count)?;
    let (mut hashes, missing) = tiles.stored_hashes(&need);
    if let Some(i) = missing.first() {
        return Err(ApiError::internal(format!(
            "log hash {i} is in no tile: the tiles do not cover size {old_size}"
        )));
    }
    let written = log::append(TreeSize(old_size), items, &hashes).map_err(ApiError::internal)?;
    for (i, h) in &written {
        hashes.insert(*i, *h);
    }
    let root = log::tree_root(TreeSize(new_size), &hashes).map_err(ApiError::internal)?;
    let grown =
        tiles::grown_data(old_size, new_size, tiles, &written).map_err(ApiError::internal)?;
    Ok(Growth { root, tiles: grown })
}

/// The bytes a C2SP tlog-tiles server serves for the hash tile `requested`
/// (issue 28, docs/proofs-api.md "Tiles"): `None` unless the log's latest
/// signed head covers it (`tiles::servable`: nothing past the committed
/// size, so no tile shows a hash before its head is signed). A partial
/// tile `.p/W` is the first `32·W` bytes of the stored tile, which only
/// ever widens. One round trip; a second only mid-migration, for entries
/// no tile holds yet (read from the log's pre-tiles rows).
///
/// # Errors
/// D1 errors, or an entry found nowhere.
pub async fn served(db: &D1Database, requested: TileCoord) -> ApiResult<Option<Vec<u8>>> {
    let (head, tiles) = store::log::latest_head_and_tiles(db, &[requested]).await?;
    let size = head.map_or(0, |h| h.tree_size);
    if !tiles::servable(size, &requested) {
        return Ok(None);
    }
    if let Some(data) = tiles.data(&requested) {
        return Ok(Some(data));
    }
    let hashes = store::log::complete(db, &tiles, &requested.entry_indexes()).await?;
    tiles::data_from_stored(&requested, &hashes)
        .map(Some)
        .map_err(ApiError::internal)
}

/// Tiles a migration step writes at most (level-0 tiles: 2 × 256 stored
/// hashes read each, in one range).
pub const MIGRATE_TILES_PER_STEP: usize = 8;
/// Queries of the check that a log needs no migration (one statement).
pub const MIGRATE_CHECK_QUERIES: usize = 1;
/// Queries a migration step takes at most: the check (tiles size, head
/// and place in one statement), the stored hashes (one range, or up to
/// three lists of 100 for each higher-level tile) and the tiles already
/// there, then the tiles, their narrower copies and the place.
pub const MIGRATE_STEP_QUERIES: usize = MIGRATE_CHECK_QUERIES + 3 * MIGRATE_TILES_PER_STEP + 1 + 4;

/// Where a log's migration to tiles stands after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// The tiles covered the log's latest head already (one read).
    Covered,
    /// The tiles cover the log's latest head: appends may go on.
    Done,
    /// More steps are left.
    Going,
}

/// One step of the migration of a log kept as stored hashes to tiles
/// (a no-op once the tiles cover its latest head): three round trips, the
/// check, the step's reads, its writes (the check alone once covered),
/// each a `store::log` function.
///
/// # Errors
/// D1 errors, or a stored hash the log lacks.
pub async fn migrate_step(db: &D1Database) -> ApiResult<Migration> {
    let store::log::MigrationState {
        covered,
        head,
        place,
    } = store::log::migration_state(db).await?;
    if covered >= head {
        return Ok(Migration::Covered);
    }
    // A place recorded for another target (the log grew meanwhile through
    // an older Worker) starts over toward the new one: rewriting a tile
    // writes the same bytes.
    let from = match place {
        Some((target, next)) if target == head => next,
        _ => 0,
    };
    let work = tiles::grown(covered, head);
    let step: Vec<TileCoord> = work
        .iter()
        .skip(from)
        .take(MIGRATE_TILES_PER_STEP)
        .copied()
        .collect();
    // What a narrower copy of a tile holds (leaves appended over tiles
    // before an older Worker appended more as stored hashes) is read from
    // it: only such a Worker's own leaves are stored hashes.
    let (range, listed) = stored_for(&step);
    let (hashes, have) = store::log::migration_sources(db, range, &listed, &step).await?;
    let mut written = Vec::with_capacity(step.len());
    for coord in &step {
        let mut entries = StoredHashes::new();
        for i in coord.entry_indexes() {
            if let Some(h) = have.stored_hash(i).or_else(|| hashes.get(i).copied()) {
                entries.insert(i, h);
            }
        }
        let data = tiles::data_from_stored(coord, &entries).map_err(ApiError::internal)?;
        written.push((*coord, data));
    }
    let next = from + step.len();
    let done = next >= work.len();
    store::log::write_migration_step(db, &written, head, (!done).then_some(next)).await?;
    worker::console_log!(
        "tiles migration: {next} of {} tiles toward size {head}",
        work.len()
    );
    Ok(if done {
        Migration::Done
    } else {
        Migration::Going
    })
}

/// Where the stored hashes of the entries of `coords` are read: the
/// level-0 tiles' as one index range, the others' as an index list.
fn stored_for(coords: &[TileCoord]) -> (Option<(u64, u64)>, Vec<u64>) {
    let mut range: Option<(u64, u64)> = None;
    let mut listed = Vec::new();
    for c in coords {
        let entries = c.entry_indexes();
        if c.level == 0 {
            let (lo, hi) = (
                entries.first().copied().unwrap_or(0),
                entries.last().copied().unwrap_or(0),
            );
            range = Some(range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        } else {
            listed.extend(entries);
        }
    }
    (range, listed)
}
