//! The append-only log: one RFC 9162 Merkle tree per environment whose
//! nodes are kept as "stored hashes" (Go `tlog` layout, via `tlog_tiles`).
//!
//! Leaf data is the scheme's tag and the 32-byte itemHash ([`HASH_SCHEME`],
//! `bvs-log-v1`), so a leaf hash is SHA-256(0x00 || "bvs-log-v1" ||
//! itemHash): never a proof root (see [`HashScheme`]). The stored hash at index
//! `tlog_tiles::stored_hash_index(level, n)` is the root of the complete
//! subtree of 2^level leaves starting at leaf n·2^level.
//!
//! The worker reads D1 asynchronously, so every operation comes in two
//! halves: `indexes_for_*` says which stored hashes the operation will read
//! (O(log n) of them); the caller fetches exactly those into a
//! [`StoredHashes`] map and calls the synchronous operation, which never
//! reads anything else.
//!
//! Invariant: sizes stay at or below [`LOG_SIZE_MAX`], so every stored index
//! is below 2^53 and survives a trip through a JS number and a D1 integer.

use crate::hash::Hash32;
use crate::merkle::{LeafIndex, TreeSize};
use std::cell::RefCell;
use std::collections::BTreeMap;

pub use crate::merkle::{verify_consistency, HashScheme, ProofError};

/// The hash scheme of every log this service keeps; documents that carry
/// log proofs name it (`hashScheme`).
pub const HASH_SCHEME: HashScheme = HashScheme::CURRENT;

/// Largest tree the log may grow to, in leaves. Stored indexes are below
/// 2·size + log2(size), so 2^50 leaves keep them below 2^53. // DESIGN: D1 integers pass through JS numbers
pub const LOG_SIZE_MAX: u64 = 1 << 50;
/// Most leaves appended in one call; the sequencer appends a queue batch. // spec: Batch size is 100; 10k leaves a margin for sweeps
pub const APPEND_LEAVES_MAX: u64 = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("stored hash {0} was needed but not provided")]
    MissingHash(u64),
    #[error("tree size {size} exceeds the log's limit of {max} leaves")]
    TooLarge { size: u64, max: u64 },
    #[error("appending {count} leaves at once exceeds the limit of {max}")]
    AppendTooLarge { count: u64, max: u64 },
    #[error("leaf index {index} is not below tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("old tree size {old} is larger than new tree size {new}")]
    OldSizeLarger { old: u64, new: u64 },
    #[error("tree math failed: {0}")]
    Internal(String),
}

/// Stored hashes fetched for one operation, by stored index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredHashes(pub BTreeMap<u64, Hash32>);

impl StoredHashes {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, index: u64, hash: Hash32) {
        self.0.insert(index, hash);
    }

    pub fn get(&self, index: u64) -> Option<&Hash32> {
        self.0.get(&index)
    }

    /// Adds the hashes `missing` from `found` (read elsewhere: a log kept
    /// before tiles keeps its stored hashes as rows).
    ///
    /// # Errors
    /// [`LogError::MissingHash`] for the first of `missing` not found.
    pub fn fill(&mut self, missing: &[u64], found: &StoredHashes) -> Result<(), LogError> {
        for &i in missing {
            let h = found.get(i).ok_or(LogError::MissingHash(i))?;
            self.insert(i, *h);
        }
        Ok(())
    }
}

impl FromIterator<(u64, Hash32)> for StoredHashes {
    fn from_iter<I: IntoIterator<Item = (u64, Hash32)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// Adapter: `tlog_tiles` reads through this. A missing index is remembered
/// so the error can name it.
struct MapReader<'a> {
    base: &'a StoredHashes,
    overlay: Option<&'a BTreeMap<u64, Hash32>>,
    missing: RefCell<Option<u64>>,
}

impl<'a> MapReader<'a> {
    /// A reader of `base` alone.
    fn of(base: &'a StoredHashes) -> Self {
        MapReader {
            base,
            overlay: None,
            missing: RefCell::new(None),
        }
    }
}

impl tlog_tiles::HashReader for MapReader<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        let mut out = Vec::with_capacity(indexes.len());
        for &i in indexes {
            let found = self
                .overlay
                .and_then(|o| o.get(&i))
                .or_else(|| self.base.get(i));
            match found {
                Some(h) => out.push((*h).into()),
                None => {
                    *self.missing.borrow_mut() = Some(i);
                    return Err(tlog_tiles::Error::IndexesNotInTree);
                }
            }
        }
        Ok(out)
    }
}

/// Adapter for planning: records every index asked for, answers zeros.
#[derive(Default)]
struct RecordingReader {
    asked: RefCell<Vec<u64>>,
}

impl tlog_tiles::HashReader for RecordingReader {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        self.asked.borrow_mut().extend_from_slice(indexes);
        Ok(vec![tlog_tiles::Hash::default(); indexes.len()])
    }
}

impl RecordingReader {
    fn sorted(self) -> Vec<u64> {
        let mut v = self.asked.into_inner();
        v.sort_unstable();
        v.dedup();
        v
    }
}

fn check_size(size: u64) -> Result<(), LogError> {
    if size > LOG_SIZE_MAX {
        return Err(LogError::TooLarge {
            size,
            max: LOG_SIZE_MAX,
        });
    }
    Ok(())
}

fn map_err(e: tlog_tiles::Error, reader: &MapReader<'_>) -> LogError {
    match *reader.missing.borrow() {
        Some(i) => LogError::MissingHash(i),
        None => LogError::Internal(e.to_string()),
    }
}

/// Number of stored hashes a tree of `size` leaves has (rows in storage).
pub fn stored_hash_count(size: TreeSize) -> u64 {
    tlog_tiles::stored_hash_count(size.0)
}

/// Stored index of leaf `index`'s own leaf hash.
pub fn leaf_stored_index(index: LeafIndex) -> u64 {
    tlog_tiles::stored_hash_index(0, index.0)
}

/// The log's leaf hash of an item: `tlog_tiles::record_hash` of the
/// scheme's leaf data, SHA-256(0x00 || "bvs-log-v1" || itemHash).
pub fn record_hash(item: &Hash32) -> Hash32 {
    tlog_tiles::record_hash(&HASH_SCHEME.leaf_data(item)).into()
}

/// Stored indexes [`append`] reads when appending `count` leaves to a tree
/// of `old_size`: the roots of the old tree's complete right-fringe
/// subtrees that the new leaves close.
///
/// # Errors
/// [`LogError::TooLarge`] / [`LogError::AppendTooLarge`].
pub fn indexes_for_append(old_size: TreeSize, count: u64) -> Result<Vec<u64>, LogError> {
    if count > APPEND_LEAVES_MAX {
        return Err(LogError::AppendTooLarge {
            count,
            max: APPEND_LEAVES_MAX,
        });
    }
    check_size(old_size.0.saturating_add(count))?;
    let existing = tlog_tiles::stored_hash_count(old_size.0);
    let mut need = Vec::new();
    for n in old_size.0..old_size.0 + count {
        // Leaf n closes one subtree per trailing 1 bit of n.
        let closes = (n + 1).trailing_zeros();
        for level in 0..closes {
            let level_u8 = u8::try_from(level).map_err(|e| LogError::Internal(e.to_string()))?;
            let idx = tlog_tiles::stored_hash_index(level_u8, (n >> level) - 1);
            if idx < existing {
                need.push(idx);
            }
        }
    }
    need.sort_unstable();
    need.dedup();
    Ok(need)
}

/// Appends items (itemHashes, in order) to a tree of `old_size`, returning
/// the new stored hashes to write as `(stored index, hash)`, ascending.
/// `hashes` must hold [`indexes_for_append`]`(old_size, items.len())`.
///
/// # Errors
/// [`LogError::MissingHash`] naming an index that was not provided, or a
/// size limit.
pub fn append(
    old_size: TreeSize,
    items: &[Hash32],
    hashes: &StoredHashes,
) -> Result<Vec<(u64, Hash32)>, LogError> {
    let leaves: Vec<Hash32> = items.iter().map(record_hash).collect();
    append_leaf_hashes(old_size, &leaves, hashes)
}

/// As [`append`] for leaf hashes already computed (known-answer tests use
/// leaves that are not 32-byte items).
///
/// # Errors
/// As [`append`].
pub fn append_leaf_hashes(
    old_size: TreeSize,
    leaves: &[Hash32],
    hashes: &StoredHashes,
) -> Result<Vec<(u64, Hash32)>, LogError> {
    let count = leaves.len() as u64;
    if count > APPEND_LEAVES_MAX {
        return Err(LogError::AppendTooLarge {
            count,
            max: APPEND_LEAVES_MAX,
        });
    }
    check_size(old_size.0.saturating_add(count))?;
    let mut written: BTreeMap<u64, Hash32> = BTreeMap::new();
    for (offset, leaf) in leaves.iter().enumerate() {
        let n = old_size.0 + offset as u64;
        let reader = MapReader {
            base: hashes,
            overlay: Some(&written),
            missing: RefCell::new(None),
        };
        let new = tlog_tiles::stored_hashes_for_record_hash(n, (*leaf).into(), &reader)
            .map_err(|e| map_err(e, &reader))?;
        let start = tlog_tiles::stored_hash_index(0, n);
        for (k, h) in new.into_iter().enumerate() {
            written.insert(start + k as u64, h.into());
        }
    }
    Ok(written.into_iter().collect())
}

/// Stored indexes [`tree_root`] reads for a tree of `size`.
///
/// # Errors
/// [`LogError::TooLarge`].
pub fn indexes_for_root(size: TreeSize) -> Result<Vec<u64>, LogError> {
    check_size(size.0)?;
    if size.0 == 0 {
        return Ok(vec![]);
    }
    Ok(tlog_tiles::sub_tree_index(0, size.0, vec![]))
}

/// Root of the tree of `size` leaves (SHA-256("") when empty).
///
/// # Errors
/// [`LogError::MissingHash`] or [`LogError::TooLarge`].
pub fn tree_root(size: TreeSize, hashes: &StoredHashes) -> Result<Hash32, LogError> {
    check_size(size.0)?;
    let reader = MapReader::of(hashes);
    tlog_tiles::tree_hash(size.0, &reader)
        .map(Into::into)
        .map_err(|e| map_err(e, &reader))
}

/// Stored indexes [`inclusion_proof`] reads.
///
/// # Errors
/// [`LogError::IndexOutOfRange`] or [`LogError::TooLarge`].
pub fn indexes_for_inclusion(leaf: LeafIndex, size: TreeSize) -> Result<Vec<u64>, LogError> {
    check_leaf(leaf, size)?;
    let rec = RecordingReader::default();
    tlog_tiles::prove_record(size.0, leaf.0, &rec)
        .map_err(|e| LogError::Internal(e.to_string()))?;
    Ok(rec.sorted())
}

/// Inclusion proof (audit path, leaf side first) of `leaf` in the tree of `size`.
///
/// # Errors
/// [`LogError::MissingHash`], [`LogError::IndexOutOfRange`] or [`LogError::TooLarge`].
pub fn inclusion_proof(
    leaf: LeafIndex,
    size: TreeSize,
    hashes: &StoredHashes,
) -> Result<Vec<Hash32>, LogError> {
    check_leaf(leaf, size)?;
    let reader = MapReader::of(hashes);
    tlog_tiles::prove_record(size.0, leaf.0, &reader)
        .map(|p| p.into_iter().map(Into::into).collect())
        .map_err(|e| map_err(e, &reader))
}

/// That the log may hold a tree of `size` and `leaf` is one of its leaves.
fn check_leaf(leaf: LeafIndex, size: TreeSize) -> Result<(), LogError> {
    check_size(size.0)?;
    if leaf.0 >= size.0 {
        return Err(LogError::IndexOutOfRange {
            index: leaf.0,
            size: size.0,
        });
    }
    Ok(())
}

/// Whether a consistency proof from `old` to `new` holds any hash: none
/// when `old` is 0 or equals `new`.
fn proves_anything(old: TreeSize, new: TreeSize) -> Result<bool, LogError> {
    check_size(new.0)?;
    if old.0 > new.0 {
        return Err(LogError::OldSizeLarger {
            old: old.0,
            new: new.0,
        });
    }
    Ok(old.0 != 0 && old.0 != new.0)
}

/// Stored indexes [`consistency_proof`] reads.
///
/// # Errors
/// [`LogError::OldSizeLarger`] or [`LogError::TooLarge`].
pub fn indexes_for_consistency(old: TreeSize, new: TreeSize) -> Result<Vec<u64>, LogError> {
    if !proves_anything(old, new)? {
        return Ok(vec![]);
    }
    let rec = RecordingReader::default();
    tlog_tiles::prove_tree(new.0, old.0, &rec).map_err(|e| LogError::Internal(e.to_string()))?;
    Ok(rec.sorted())
}

/// Consistency proof that the tree of `new` leaves extends the tree of
/// `old` leaves (RFC 9162 §2.1.4). Empty when `old` is 0 or equals `new`.
///
/// # Errors
/// [`LogError::MissingHash`], [`LogError::OldSizeLarger`] or [`LogError::TooLarge`].
pub fn consistency_proof(
    old: TreeSize,
    new: TreeSize,
    hashes: &StoredHashes,
) -> Result<Vec<Hash32>, LogError> {
    if !proves_anything(old, new)? {
        return Ok(vec![]);
    }
    let reader = MapReader::of(hashes);
    tlog_tiles::prove_tree(new.0, old.0, &reader)
        .map(|p| p.into_iter().map(Into::into).collect())
        .map_err(|e| map_err(e, &reader))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<Hash32> {
        (0..n)
            .map(|i| Hash32::digest(&(i as u64).to_le_bytes()))
            .collect()
    }

    /// Grows a log batch by batch the way the worker does: plan, fetch only
    /// what was planned, append, write.
    fn grow(batches: &[usize]) -> (StoredHashes, Vec<Hash32>) {
        let mut store = StoredHashes::new();
        let mut all = Vec::new();
        for &b in batches {
            let new_items = items(all.len() + b)[all.len()..].to_vec();
            let size = TreeSize(all.len() as u64);
            let plan = indexes_for_append(size, b as u64).unwrap();
            let fetched: StoredHashes =
                plan.iter().map(|i| (*i, *store.get(*i).unwrap())).collect();
            for (i, h) in append(size, &new_items, &fetched).unwrap() {
                assert!(store.get(i).is_none(), "stored hash {i} written twice");
                store.insert(i, h);
            }
            all.extend(new_items);
            assert_eq!(
                store.0.len() as u64,
                stored_hash_count(TreeSize(all.len() as u64))
            );
        }
        (store, all)
    }

    fn fetch(store: &StoredHashes, plan: &[u64]) -> StoredHashes {
        plan.iter().map(|i| (*i, *store.get(*i).unwrap())).collect()
    }

    #[test]
    fn planned_reads_suffice_for_every_operation() {
        let (store, all) = grow(&[1, 2, 3, 5, 8, 13, 1, 30]);
        for n in 1..=all.len() as u64 {
            let size = TreeSize(n);
            let root = tree_root(size, &fetch(&store, &indexes_for_root(size).unwrap())).unwrap();
            assert_eq!(root, HASH_SCHEME.log_root(&all[..n as usize]));
            for i in 0..n {
                let plan = indexes_for_inclusion(LeafIndex(i), size).unwrap();
                let proof = inclusion_proof(LeafIndex(i), size, &fetch(&store, &plan)).unwrap();
                assert_eq!(
                    HASH_SCHEME.verify_inclusion(
                        &proof,
                        LeafIndex(i),
                        size,
                        &root,
                        &all[i as usize]
                    ),
                    Ok(())
                );
            }
            for m in 0..=n {
                let plan = indexes_for_consistency(TreeSize(m), size).unwrap();
                let proof = consistency_proof(TreeSize(m), size, &fetch(&store, &plan)).unwrap();
                let old_root = HASH_SCHEME.log_root(&all[..m as usize]);
                assert_eq!(
                    verify_consistency(&proof, TreeSize(m), &old_root, size, &root),
                    Ok(())
                );
            }
        }
    }

    #[test]
    fn a_log_leaf_is_the_tagged_leaf_and_never_the_plain_one() {
        for item in items(50) {
            let leaf = record_hash(&item);
            assert_eq!(leaf, HASH_SCHEME.leaf_hash(&item));
            assert_ne!(leaf, crate::merkle::leaf_hash(&item));
            assert_ne!(leaf, crate::merkle::root(&[item]));
        }
    }

    #[test]
    fn a_missing_stored_hash_is_named() {
        let (store, _) = grow(&[7]);
        let plan = indexes_for_root(TreeSize(7)).unwrap();
        let mut partial = fetch(&store, &plan);
        partial.0.remove(&plan[0]);
        assert_eq!(
            tree_root(TreeSize(7), &partial),
            Err(LogError::MissingHash(plan[0]))
        );
        assert_eq!(
            append(TreeSize(7), &items(1), &StoredHashes::new()),
            Err(LogError::MissingHash(
                indexes_for_append(TreeSize(7), 1).unwrap()[0]
            ))
        );
    }

    #[test]
    fn limits_are_errors() {
        assert!(matches!(
            indexes_for_root(TreeSize(LOG_SIZE_MAX + 1)),
            Err(LogError::TooLarge { .. })
        ));
        assert!(matches!(
            indexes_for_append(TreeSize(0), APPEND_LEAVES_MAX + 1),
            Err(LogError::AppendTooLarge { .. })
        ));
        assert_eq!(
            indexes_for_inclusion(LeafIndex(5), TreeSize(5)),
            Err(LogError::IndexOutOfRange { index: 5, size: 5 })
        );
        assert_eq!(
            indexes_for_consistency(TreeSize(6), TreeSize(5)),
            Err(LogError::OldSizeLarger { old: 6, new: 5 })
        );
        // The largest index any planned read touches stays below 2^53.
        let top =
            indexes_for_inclusion(LeafIndex(LOG_SIZE_MAX - 1), TreeSize(LOG_SIZE_MAX)).unwrap();
        assert!(top.iter().all(|i| *i < (1u64 << 53)));
        assert!(stored_hash_count(TreeSize(LOG_SIZE_MAX)) < (1u64 << 53));
    }
}
