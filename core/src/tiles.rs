//! The log's hashes stored as C2SP tlog-tiles
//! (<https://c2sp.org/tlog-tiles>): a tile at level `L`, index `N` holds
//! the hashes at tree level `8·L` of the subtrees `N·256 .. N·256 + W`
//! (`W` = 256 for a full tile, fewer for the right edge's partial tile),
//! each 32 bytes, concatenated. Level-0 tiles hold the log's leaf hashes;
//! a level-`L+1` entry is the root of a full level-`L` tile. Every stored
//! hash of the Go `tlog` layout (see [`crate::log`]) is either a tile entry
//! or the root of a complete subtree inside one tile, so a proof reads at
//! most a few tiles per level.
//!
//! A log grows by writing the tiles [`grown`] names, with the data
//! [`grown_data`] computes from the old right edge ([`edge`]) and the new
//! stored hashes of `log::append`. Reading goes the other way: the stored
//! indexes an operation needs ([`crate::log`]'s `indexes_for_*`) name the
//! tiles to read ([`tiles_for`]); [`Tiles::stored_hashes`] answers them.
//!
//! Pure: no I/O. The worker keeps tiles in D1 rows keyed by (level, index,
//! width), the bytes exactly as tlog-tiles serves them.

use std::collections::BTreeMap;

use crate::hash::Hash32;
use crate::log::{LogError, StoredHashes};
use crate::merkle::node_hash;

/// Tree levels per tile level.
pub const TILE_HEIGHT: u8 = 8;
/// Hashes in a full tile.
pub const TILE_WIDTH: u32 = 1 << TILE_HEIGHT;
/// Bytes of one hash in a tile.
pub const HASH_BYTES: usize = 32;
/// Bytes of a full tile.
pub const FULL_TILE_BYTES: usize = TILE_WIDTH as usize * HASH_BYTES;

const WIDTH: u64 = TILE_WIDTH as u64;
const HEIGHT: u32 = TILE_HEIGHT as u32;

/// A tile's coordinates: level, index within the level, and width (1..=256).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TileCoord {
    pub level: u8,
    pub index: u64,
    pub width: u32,
}

impl TileCoord {
    pub fn is_full(&self) -> bool {
        self.width == TILE_WIDTH
    }

    /// The tile's C2SP tlog-tiles path: `tile/<L>/<N>[.p/<W>]`, `N` in
    /// zero-padded groups of three digits, all but the last prefixed `x`
    /// (`tile/0/x001/234.p/7`).
    pub fn path(&self) -> String {
        let mut groups = Vec::new();
        let mut n = self.index;
        loop {
            groups.push(n % 1000);
            n /= 1000;
            if n == 0 {
                break;
            }
        }
        let index = groups
            .iter()
            .rev()
            .enumerate()
            .map(|(i, g)| {
                if i + 1 == groups.len() {
                    format!("{g:03}")
                } else {
                    format!("x{g:03}")
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        if self.is_full() {
            format!("tile/{}/{index}", self.level)
        } else {
            format!("tile/{}/{index}.p/{}", self.level, self.width)
        }
    }

    /// Parses a C2SP tlog-tiles hash tile path (the exact form
    /// [`TileCoord::path`] writes; anything else, entry bundles included,
    /// is `None`).
    pub fn from_path(path: &str) -> Option<TileCoord> {
        let rest = path.strip_prefix("tile/")?;
        let (level_text, rest) = rest.split_once('/')?;
        if level_text.len() != 1 {
            return None;
        }
        let level: u8 = level_text.parse().ok()?;
        let (index_text, width) = match rest.split_once(".p/") {
            Some((index, w)) => {
                if w.is_empty() || w.starts_with('0') || !w.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let w: u32 = w.parse().ok()?;
                if w == 0 || w >= TILE_WIDTH {
                    return None;
                }
                (index, w)
            }
            None => (rest, TILE_WIDTH),
        };
        let index = parse_index(index_text)?;
        let coord = TileCoord {
            level,
            index,
            width,
        };
        (coord.path() == path).then_some(coord)
    }

    /// The stored indexes of the tile's entries, in order.
    pub fn entry_indexes(&self) -> Vec<u64> {
        let level = self.level.saturating_mul(TILE_HEIGHT);
        let start = self.index * WIDTH;
        (start..start + u64::from(self.width))
            .map(|n| tlog_tiles::stored_hash_index(level, n))
            .collect()
    }
}

/// Hashes at tree level `8·level` in a tree of `size` leaves: complete
/// subtrees of 256^level leaves.
fn entries_at(size: u64, level: u8) -> u64 {
    let shift = u32::from(level) * HEIGHT;
    if shift >= 64 {
        0
    } else {
        size >> shift
    }
}

/// The tile (`level`, `index`) of a tree of `size` leaves, with its width
/// there: `None` when that tree has no such tile. What a tiles server may
/// serve for a committed size (issue 28): a request for a narrower
/// partial tile than this is answered from the same bytes' prefix.
pub fn tile_at(size: u64, level: u8, index: u64) -> Option<TileCoord> {
    let entries = entries_at(size, level);
    let start = index.checked_mul(WIDTH)?;
    if start >= entries {
        return None;
    }
    let width = u32::try_from((entries - start).min(WIDTH)).ok()?;
    Some(TileCoord {
        level,
        index,
        width,
    })
}

/// Whether a tiles server whose committed tree has `size` leaves serves
/// the hash tile `requested` (issue 28): a full tile once it is full, a
/// partial tile `.p/W` while the tile holds at least W hashes. Its bytes
/// are the first `32·W` of the stored tile (a stored tile only ever
/// widens; its first hashes never change).
pub fn servable(size: u64, requested: &TileCoord) -> bool {
    tile_at(size, requested.level, requested.index).is_some_and(|have| {
        if requested.is_full() {
            have.is_full()
        } else {
            requested.width <= have.width
        }
    })
}

/// The levels a tree of `size` leaves has tiles at.
pub fn levels(size: u64) -> u8 {
    let mut l = 0u8;
    while entries_at(size, l) > 0 {
        l += 1;
    }
    l
}

/// The right edge of a tree of `size`: its partial tile at each level
/// (the tiles an append extends).
pub fn edge(size: u64) -> Vec<TileCoord> {
    (0..levels(size))
        .filter_map(|l| {
            let entries = entries_at(size, l);
            tile_at(size, l, entries / WIDTH)
        })
        .collect()
}

/// The tiles a log writes when it grows from `old` to `new` leaves: each
/// tile that changed, at its width in the new tree (full tiles completed,
/// and each level's new partial tile), level by level. (Go's
/// `tlog.NewTiles` with height 8.)
pub fn grown(old: u64, new: u64) -> Vec<TileCoord> {
    let mut out = Vec::new();
    for level in 0..levels(new) {
        let (o, n) = (entries_at(old, level), entries_at(new, level));
        if o == n {
            continue;
        }
        for index in o / WIDTH..=(n - 1) / WIDTH {
            if let Some(t) = tile_at(new, level, index) {
                out.push(t);
            }
        }
    }
    out
}

/// Where the stored hash `index` lives: its tile (with the least width
/// holding it) and the entries `first .. first + count` whose subtree hash
/// it is.
fn locate(index: u64) -> (TileCoord, usize, usize) {
    let (level, n) = tlog_tiles::split_stored_hash_index(index);
    let tile_level = level / TILE_HEIGHT;
    let within = u32::from(level % TILE_HEIGHT);
    let first_entry = n << within;
    let tile_index = first_entry / WIDTH;
    let offset = first_entry % WIDTH;
    let count = 1u64 << within;
    let coord = TileCoord {
        level: tile_level,
        index: tile_index,
        // offset + count <= 256, so this fits.
        width: u32::try_from(offset + count).unwrap_or(TILE_WIDTH),
    };
    (coord, offset as usize, count as usize)
}

/// The tiles to read for the stored hashes `indexes`: each tile once, with
/// the least width that holds every index asked of it.
pub fn tiles_for(indexes: &[u64]) -> Vec<TileCoord> {
    let mut need: BTreeMap<(u8, u64), u32> = BTreeMap::new();
    for &i in indexes {
        let (t, _, _) = locate(i);
        let w = need.entry((t.level, t.index)).or_insert(0);
        *w = (*w).max(t.width);
    }
    need.into_iter()
        .map(|((level, index), width)| TileCoord {
            level,
            index,
            width,
        })
        .collect()
}

/// One tile in memory: its entries, and the levels of its subtree hashes
/// above them (level `j` holds the roots of complete runs of 2^j entries).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TileTree {
    levels: Vec<Vec<Hash32>>,
}

impl TileTree {
    fn new(entries: Vec<Hash32>) -> TileTree {
        let mut levels = vec![entries];
        while let Some(below) = levels.last() {
            if below.len() < 2 {
                break;
            }
            let up: Vec<Hash32> = below
                .chunks_exact(2)
                .map(|p| node_hash(&p[0], &p[1]))
                .collect();
            levels.push(up);
        }
        TileTree { levels }
    }

    fn width(&self) -> usize {
        self.levels.first().map_or(0, Vec::len)
    }

    /// The root of entries `first .. first + count` (count a power of two,
    /// first a multiple of it), if the tile holds them.
    fn subtree(&self, first: usize, count: usize) -> Option<Hash32> {
        let level = count.trailing_zeros() as usize;
        self.levels.get(level)?.get(first >> level).copied()
    }
}

/// Tiles read for one operation, by (level, index); the widest seen of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tiles(BTreeMap<(u8, u64), TileTree>);

impl Tiles {
    /// The tiles of stored (level, index, bytes) entries, the widest of
    /// each kept (see [`Tiles::insert`]).
    ///
    /// # Errors
    /// [`LogError::Internal`] for bytes that are no tile.
    pub fn from_stored<T: Into<(u8, u64, Vec<u8>)>>(
        stored: impl IntoIterator<Item = T>,
    ) -> Result<Tiles, LogError> {
        let mut tiles = Tiles::new();
        for entry in stored {
            let (level, index, data) = entry.into();
            tiles.insert(level, index, &data)?;
        }
        Ok(tiles)
    }

    pub fn new() -> Tiles {
        Tiles::default()
    }

    /// Adds a tile's bytes (32-byte hashes, 1 to 256 of them); a narrower
    /// copy of a tile already held is ignored (a wider one holds the same
    /// hashes, and more).
    ///
    /// # Errors
    /// [`LogError::Internal`] for bytes that are no tile.
    pub fn insert(&mut self, level: u8, index: u64, data: &[u8]) -> Result<(), LogError> {
        if data.is_empty() || !data.len().is_multiple_of(HASH_BYTES) || data.len() > FULL_TILE_BYTES
        {
            return Err(LogError::Internal(format!(
                "tile {level}/{index} has {} bytes",
                data.len()
            )));
        }
        let width = data.len() / HASH_BYTES;
        if self
            .0
            .get(&(level, index))
            .is_some_and(|t| t.width() >= width)
        {
            return Ok(());
        }
        let entries = data
            .chunks_exact(HASH_BYTES)
            .map(|c| {
                let mut h = [0u8; HASH_BYTES];
                h.copy_from_slice(c);
                Hash32(h)
            })
            .collect();
        self.0.insert((level, index), TileTree::new(entries));
        Ok(())
    }

    /// The widest width held of tile (`level`, `index`).
    pub fn width(&self, level: u8, index: u64) -> Option<u32> {
        self.0
            .get(&(level, index))
            .and_then(|t| u32::try_from(t.width()).ok())
    }

    /// The stored hash `index`, if a tile held here holds it.
    pub fn stored_hash(&self, index: u64) -> Option<Hash32> {
        let (t, first, count) = locate(index);
        self.0.get(&(t.level, t.index))?.subtree(first, count)
    }

    /// The stored hashes `indexes` from the tiles, and those the tiles do
    /// not hold (read elsewhere, or an error).
    pub fn stored_hashes(&self, indexes: &[u64]) -> (StoredHashes, Vec<u64>) {
        let mut out = StoredHashes::new();
        let mut missing = Vec::new();
        for &i in indexes {
            match self.stored_hash(i) {
                Some(h) => out.insert(i, h),
                None => missing.push(i),
            }
        }
        (out, missing)
    }

    /// The bytes of tile `coord` (its first `width` entries).
    pub fn data(&self, coord: &TileCoord) -> Option<Vec<u8>> {
        let tile = self.0.get(&(coord.level, coord.index))?;
        let entries = tile.levels.first()?.get(..coord.width as usize)?;
        Some(entries.iter().flat_map(|h| h.0).collect())
    }
}

/// The bytes of the tiles [`grown`]`(old, new)`: each entry from `written`
/// (the new stored hashes of `log::append`) or else from `tiles` (which
/// must hold the old tree's [`edge`]). With the tiles of the old tree,
/// these are the tiles of the new one.
///
/// # Errors
/// [`LogError::MissingHash`] naming an entry neither holds.
pub fn grown_data(
    old: u64,
    new: u64,
    tiles: &Tiles,
    written: &[(u64, Hash32)],
) -> Result<Vec<(TileCoord, Vec<u8>)>, LogError> {
    let written: BTreeMap<u64, Hash32> = written.iter().copied().collect();
    grown(old, new)
        .into_iter()
        .map(|coord| {
            let mut data = Vec::with_capacity(coord.width as usize * HASH_BYTES);
            for i in coord.entry_indexes() {
                let h = written
                    .get(&i)
                    .copied()
                    .or_else(|| tiles.stored_hash(i))
                    .ok_or(LogError::MissingHash(i))?;
                data.extend_from_slice(&h.0);
            }
            Ok((coord, data))
        })
        .collect()
}

/// The bytes of tile `coord` from stored hashes (migrating a log kept as
/// stored hashes to tiles): its entries in order.
///
/// # Errors
/// [`LogError::MissingHash`] naming an entry `hashes` lacks.
pub fn data_from_stored(coord: &TileCoord, hashes: &StoredHashes) -> Result<Vec<u8>, LogError> {
    let mut data = Vec::with_capacity(coord.width as usize * HASH_BYTES);
    for i in coord.entry_indexes() {
        let h = hashes.get(i).ok_or(LogError::MissingHash(i))?;
        data.extend_from_slice(&h.0);
    }
    Ok(data)
}

/// A tile index in C2SP tlog-tiles form, `x001/x234/067` → 1,234,067:
/// groups of three digits, each but the last prefixed `x`.
pub fn parse_index(text: &str) -> Option<u64> {
    let groups: Vec<&str> = text.split('/').collect();
    let mut index: u64 = 0;
    for (i, g) in groups.iter().enumerate() {
        let digits = if i + 1 == groups.len() {
            *g
        } else {
            g.strip_prefix('x')?
        };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value: u64 = digits.parse().ok()?;
        index = index.checked_mul(1000)?.checked_add(value)?;
    }
    Some(index)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::log::{self, HASH_SCHEME};
    use crate::merkle::{LeafIndex, TreeSize};

    fn items(n: u64) -> Vec<Hash32> {
        (0..n).map(|i| Hash32::digest(&i.to_le_bytes())).collect()
    }

    /// Grows a tiled log batch by batch the way the worker does: read the
    /// tiles the append and the root need (and the edge), append, write
    /// the grown tiles. Returns every tile written (widest kept).
    /// Tiles as a store keeps them: the widest bytes of each (level, index).
    type Store = BTreeMap<(u8, u64), Vec<u8>>;

    fn grow(batches: &[u64]) -> (Store, Vec<Hash32>) {
        let mut store = Store::new();
        let mut all: Vec<Hash32> = Vec::new();
        for &b in batches {
            let old = all.len() as u64;
            let new = old + b;
            let more = items(new)[old as usize..].to_vec();
            let mut need = log::indexes_for_append(TreeSize(old), b).unwrap();
            let existing = log::stored_hash_count(TreeSize(old));
            need.extend(
                log::indexes_for_root(TreeSize(new))
                    .unwrap()
                    .into_iter()
                    .filter(|i| *i < existing),
            );
            let mut want = tiles_for(&need);
            want.extend(edge(old));
            let mut tiles = Tiles::new();
            for t in &want {
                let data = store.get(&(t.level, t.index)).unwrap();
                assert!(data.len() >= t.width as usize * HASH_BYTES);
                tiles.insert(t.level, t.index, data).unwrap();
            }
            let (hashes, missing) = tiles.stored_hashes(&need);
            assert!(missing.is_empty(), "{missing:?}");
            let written = log::append(TreeSize(old), &more, &hashes).unwrap();
            let mut with_new = hashes.clone();
            for (i, h) in &written {
                with_new.insert(*i, *h);
            }
            let root = log::tree_root(TreeSize(new), &with_new).unwrap();
            all.extend(more);
            assert_eq!(root, HASH_SCHEME.log_root(&all));
            for (coord, data) in grown_data(old, new, &tiles, &written).unwrap() {
                assert_eq!(data.len(), coord.width as usize * HASH_BYTES);
                let prev = store.get(&(coord.level, coord.index));
                if let Some(prev) = prev {
                    assert!(prev.len() < data.len(), "a tile is only ever widened");
                    assert_eq!(&data[..prev.len()], &prev[..], "widening keeps the prefix");
                }
                store.insert((coord.level, coord.index), data);
            }
        }
        (store, all)
    }

    /// Every stored hash of the Go layout, from a plain append.
    fn stored(all: &[Hash32]) -> StoredHashes {
        let mut s = StoredHashes::new();
        for (n, chunk) in all.chunks(5000).enumerate() {
            let at = TreeSize((n * 5000) as u64);
            for (k, v) in log::append(at, chunk, &s).unwrap() {
                s.insert(k, v);
            }
        }
        s
    }

    #[test]
    fn tiles_hold_exactly_the_tlog_tiles_hashes_of_each_level() {
        let (store, all) = grow(&[
            1, 3, 250, 2, 300, 1, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 1979, 21, 5,
        ]);
        let n = all.len() as u64;
        let hashes = stored(&all);
        // Every tile of the tree, nothing more, each at its width.
        let mut expected = Vec::new();
        for level in 0..levels(n) {
            let mut index = 0;
            while let Some(t) = tile_at(n, level, index) {
                expected.push(t);
                index += 1;
            }
        }
        assert_eq!(store.len(), expected.len());
        for t in &expected {
            let data = store.get(&(t.level, t.index)).unwrap();
            assert_eq!(data, &data_from_stored(t, &hashes).unwrap(), "{}", t.path());
        }
        // Level 0 is the leaf hashes; level 1 the roots of full level-0 tiles.
        let first = store.get(&(0, 0)).unwrap();
        assert_eq!(&first[..32], &HASH_SCHEME.leaf_hash(&all[0]).0);
        let l1 = store.get(&(1, 0)).unwrap();
        let leaves: Vec<Hash32> = all[..256]
            .iter()
            .map(|i| HASH_SCHEME.leaf_hash(i))
            .collect();
        assert_eq!(
            &l1[..32],
            &crate::merkle::root_of_leaf_hashes(&leaves).0,
            "a level-1 entry is a full level-0 tile's root"
        );
    }

    #[test]
    fn proofs_from_tiles_equal_proofs_from_stored_hashes() {
        let (store, all) = grow(&[100, 156, 1, 511, 37, 1200]);
        let full = stored(&all);
        let n = all.len() as u64;
        let read = |need: &[u64]| {
            let mut tiles = Tiles::new();
            let want = tiles_for(need);
            assert!(want.len() <= 3 * usize::from(levels(n)) + 2, "{want:?}");
            for t in want {
                tiles
                    .insert(t.level, t.index, store.get(&(t.level, t.index)).unwrap())
                    .unwrap();
            }
            let (h, missing) = tiles.stored_hashes(need);
            assert!(missing.is_empty());
            h
        };
        for size in [1, 2, 255, 256, 257, 1000, 1500, n] {
            for leaf in [0, size / 3, size - 1] {
                let need = log::indexes_for_inclusion(LeafIndex(leaf), TreeSize(size)).unwrap();
                assert_eq!(
                    log::inclusion_proof(LeafIndex(leaf), TreeSize(size), &read(&need)),
                    log::inclusion_proof(LeafIndex(leaf), TreeSize(size), &full)
                );
            }
            for old in [1, size / 2, size] {
                let need = log::indexes_for_consistency(TreeSize(old), TreeSize(size)).unwrap();
                assert_eq!(
                    log::consistency_proof(TreeSize(old), TreeSize(size), &read(&need)),
                    log::consistency_proof(TreeSize(old), TreeSize(size), &full)
                );
            }
            let need = log::indexes_for_root(TreeSize(size)).unwrap();
            assert_eq!(
                log::tree_root(TreeSize(size), &read(&need)).unwrap(),
                HASH_SCHEME.log_root(&all[..size as usize])
            );
        }
    }

    #[test]
    fn a_stored_hash_outside_the_tiles_read_is_reported_missing() {
        let (store, _) = grow(&[600]);
        let mut tiles = Tiles::new();
        tiles.insert(0, 0, store.get(&(0, 0)).unwrap()).unwrap();
        let inside = tlog_tiles::stored_hash_index(3, 5);
        let outside = tlog_tiles::stored_hash_index(0, 300);
        let (got, missing) = tiles.stored_hashes(&[inside, outside]);
        assert!(got.get(inside).is_some());
        assert_eq!(missing, vec![outside]);
        // A narrower copy neither replaces nor is needed.
        tiles
            .insert(0, 0, &store.get(&(0, 0)).unwrap()[..64])
            .unwrap();
        assert_eq!(tiles.width(0, 0), Some(256));
        assert!(tiles.insert(0, 1, &[0u8; 33]).is_err());
        assert!(tiles.insert(0, 1, &[]).is_err());
    }

    #[test]
    fn paths_are_c2sp_tlog_tiles_paths() {
        let t = |level, index, width| TileCoord {
            level,
            index,
            width,
        };
        assert_eq!(t(0, 0, 256).path(), "tile/0/000");
        assert_eq!(t(0, 7, 3).path(), "tile/0/007.p/3");
        assert_eq!(t(1, 1234, 256).path(), "tile/1/x001/234");
        assert_eq!(t(2, 1_234_067, 8).path(), "tile/2/x001/x234/067.p/8");
        for c in [
            t(0, 0, 256),
            t(0, 7, 3),
            t(1, 1234, 256),
            t(2, 1_234_067, 8),
        ] {
            assert_eq!(TileCoord::from_path(&c.path()), Some(c));
        }
        for bad in [
            "tile/0/7",
            "tile/0/007.p/256",
            "tile/0/007.p/0",
            "tile/0/007.p/03",
            "tile/0/001/234",
            "tile/0/x000/234",
            "tile/entries/000",
            "tile/10/000",
            "tile/0/000/",
        ] {
            assert_eq!(TileCoord::from_path(bad), None, "{bad}");
        }
        // Go's tlog agrees (it writes the height too).
        let go = tlog_tiles::Tile::new(8, 2, 1_234_067, 8, false).path();
        assert_eq!(go, format!("tile/8/{}", &t(2, 1_234_067, 8).path()[5..]));
    }

    #[test]
    fn the_tiles_of_a_size_match_go_tlog() {
        for (old, new) in [
            (0, 1),
            (0, 256),
            (255, 257),
            (300, 70_000),
            (65_536, 65_537),
        ] {
            let ours = grown(old, new);
            let go: Vec<TileCoord> = tlog_tiles::Tile::new_tiles(8, old, new)
                .into_iter()
                .map(|t| TileCoord {
                    level: t.level(),
                    index: t.level_index(),
                    width: t.width(),
                })
                .collect();
            assert_eq!(ours, go, "{old} -> {new}");
        }
        assert_eq!(tile_at(300, 0, 1).map(|t| t.width), Some(44));
        assert_eq!(tile_at(300, 0, 2), None);
        assert_eq!(tile_at(300, 1, 0).map(|t| t.width), Some(1));
        assert_eq!(tile_at(255, 1, 0), None);
        assert_eq!(
            edge(300),
            vec![tile_at(300, 0, 1).unwrap(), tile_at(300, 1, 0).unwrap()]
        );
        assert_eq!(edge(512), vec![tile_at(512, 1, 0).unwrap()]);
        assert!(edge(0).is_empty());
        let t = |level, index, width| TileCoord {
            level,
            index,
            width,
        };
        assert!(servable(300, &t(0, 0, 256)));
        assert!(servable(300, &t(0, 1, 44)));
        assert!(servable(300, &t(0, 1, 10)));
        assert!(!servable(300, &t(0, 1, 45)));
        assert!(!servable(300, &t(0, 1, 256)));
        assert!(!servable(300, &t(0, 2, 1)));
        assert!(servable(300, &t(1, 0, 1)));
        assert!(!servable(255, &t(1, 0, 1)));
    }
}
