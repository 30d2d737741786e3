//! An incremental RFC 9162 Merkle root: the compact range (the roots of the
//! perfect subtrees that make up a tree of `size` leaves, largest first).
//!
//! Appending an item costs O(1) amortized hashes and the state is
//! O(log n) hashes, so the sequencer can keep one per ledger and period and
//! a checkpoint's `merkleRoot` is read, not recomputed, at any history size.
//! `Frontier::root` equals `merkle::root` over the same items (tested).

use crate::hash::Hash32;
use crate::merkle::{leaf_hash, node_hash};

/// Largest serialized frontier accepted: 64 subtree roots (2^64 leaves).
pub const FRONTIER_SUBTREES_MAX: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frontier {
    size: u64,
    /// Roots of perfect subtrees, largest (leftmost) first; subtree `i` has
    /// 2^k leaves where k is the i-th highest set bit of `size`.
    subtrees: Vec<Hash32>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontierError {
    #[error("malformed frontier text")]
    Malformed,
    #[error("frontier of size {size} needs {expected} subtree roots, got {got}")]
    WrongCount {
        size: u64,
        expected: usize,
        got: usize,
    },
}

impl Frontier {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends one item (its leaf hash is SHA-256(0x00 || item)).
    pub fn push(&mut self, item: &Hash32) {
        let mut node = leaf_hash(item);
        // Each trailing 1 bit of the old size is a perfect subtree that the
        // new leaf completes.
        let mut merges = self.size.trailing_ones();
        while merges > 0 {
            match self.subtrees.pop() {
                Some(left) => node = node_hash(&left, &node),
                None => break,
            }
            merges -= 1;
        }
        self.subtrees.push(node);
        self.size += 1;
    }

    /// The RFC 9162 root of every item pushed so far; SHA-256("") when empty.
    pub fn root(&self) -> Hash32 {
        let mut iter = self.subtrees.iter().rev();
        let Some(last) = iter.next() else {
            return Hash32::EMPTY;
        };
        iter.fold(*last, |acc, left| node_hash(left, &acc))
    }

    /// `"<size>:<hex>,<hex>,..."`, for storage.
    pub fn to_text(&self) -> String {
        let hashes: Vec<String> = self.subtrees.iter().map(Hash32::to_hex).collect();
        format!("{}:{}", self.size, hashes.join(","))
    }

    /// Parses [`Frontier::to_text`].
    ///
    /// # Errors
    /// [`FrontierError`] when the text is malformed or the number of subtree
    /// roots does not match the size.
    pub fn from_text(text: &str) -> Result<Self, FrontierError> {
        let (size, rest) = text.split_once(':').ok_or(FrontierError::Malformed)?;
        let size: u64 = size.parse().map_err(|_| FrontierError::Malformed)?;
        let subtrees: Vec<Hash32> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split(',')
                .take(FRONTIER_SUBTREES_MAX + 1)
                .map(|h| Hash32::parse(h).map_err(|_| FrontierError::Malformed))
                .collect::<Result<_, _>>()?
        };
        let expected = size.count_ones() as usize;
        if subtrees.len() != expected {
            return Err(FrontierError::WrongCount {
                size,
                expected,
                got: subtrees.len(),
            });
        }
        Ok(Self { size, subtrees })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::merkle::root;
    use proptest::prelude::*;

    fn items(n: u64) -> Vec<Hash32> {
        (0..n).map(|i| Hash32::digest(&i.to_le_bytes())).collect()
    }

    #[test]
    fn the_frontier_root_is_the_merkle_root_for_every_size_up_to_300() {
        let all = items(300);
        let mut f = Frontier::new();
        assert_eq!(f.root(), root(&[]));
        for (i, item) in all.iter().enumerate() {
            f.push(item);
            assert_eq!(f.root(), root(&all[..=i]), "size {}", i + 1);
            assert_eq!(Frontier::from_text(&f.to_text()).unwrap(), f);
        }
    }

    #[test]
    fn a_frontier_text_with_the_wrong_number_of_roots_is_refused() {
        let mut f = Frontier::new();
        for item in items(3) {
            f.push(&item);
        }
        let text = f.to_text();
        let tampered = text.replacen("3:", "4:", 1);
        assert!(matches!(
            Frontier::from_text(&tampered),
            Err(FrontierError::WrongCount { .. })
        ));
        assert_eq!(Frontier::from_text("x"), Err(FrontierError::Malformed));
        assert_eq!(Frontier::from_text("0:").unwrap(), Frontier::new());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn resuming_from_text_gives_the_same_root(n in 0u64..2000, split in 0u64..2000) {
            let all = items(n);
            let split = split.min(n) as usize;
            let mut f = Frontier::new();
            for item in &all[..split] {
                f.push(item);
            }
            let mut g = Frontier::from_text(&f.to_text()).unwrap();
            for item in &all[split..] {
                g.push(item);
            }
            prop_assert_eq!(g.root(), root(&all));
        }
    }
}
