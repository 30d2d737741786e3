//! RFC 9162 (Certificate Transparency v2) §2.1 Merkle trees over itemHashes.
//!
//! leaf = SHA-256(0x00 || itemHash), node = SHA-256(0x01 || left || right),
//! split at the largest power of two below n, no duplicated last leaf. The
//! root of the empty tree is SHA-256 of the empty string (RFC 9162 §2.1.1).
//! These are the proof roots (submission, receipt, checkpoint).
//!
//! The environment logs are RFC 9162 trees too, but over tagged leaf data
//! ([`HashScheme`]): what a log commits to is domain-separated from every
//! proof root, so no hash a log proof shows is ever an access key.
//!
//! The two verification algorithms are written from the RFC's text
//! (§2.1.3.2 and §2.1.4.2): iterative, allocation-free, bounded by the
//! expected path length before any hashing, and they say *which* check
//! failed. They are cross-checked against `tlog_tiles` and `ct-merkle`.

use crate::hash::Hash32;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Position of a leaf in a tree (0-based). Not a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LeafIndex(pub u64);

/// Number of leaves in a tree. Not an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TreeSize(pub u64);

impl fmt::Display for LeafIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for TreeSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a proof was rejected. Each variant is one precise reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("leaf index {index} is not below tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("an empty tree contains no leaves")]
    EmptyTree,
    #[error("proof has {got} hashes, a proof for this position and size has exactly {expected}")]
    WrongPathLength { expected: usize, got: usize },
    #[error("the proof leads to a different root than the one given")]
    RootMismatch,
    #[error("old tree size {old} is larger than new tree size {new}")]
    OldSizeLarger { old: u64, new: u64 },
    #[error("the proof does not reproduce the old root")]
    OldRootMismatch,
    #[error("the proof does not reproduce the new root")]
    NewRootMismatch,
    #[error("trees of equal size {size} must have equal roots")]
    EqualSizeRootsDiffer { size: u64 },
}

/// SHA-256's initial state (FIPS 180-4 §5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];
/// SHA-256 block size in bytes.
const BLOCK_BYTES: usize = 64;

// Leaf and node inputs have fixed lengths (33 and 65 bytes), so their
// padded blocks are laid out here once and compressed directly: no hasher
// buffer, no length bookkeeping. Verification is nothing but these hashes,
// and in WebAssembly (no SHA instructions) that bookkeeping was a
// measurable share of each. Cross-checked against `Sha256` in the tests.
#[inline]
pub(crate) fn compress(blocks: &[[u8; BLOCK_BYTES]]) -> Hash32 {
    let mut state = SHA256_IV;
    for block in blocks {
        sha2::block_api::compress256(&mut state, std::slice::from_ref(block));
    }
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    Hash32(out)
}

/// Big-endian bit length of a message of `bytes` bytes, as SHA-256 padding ends.
const fn bit_length(bytes: u64) -> [u8; 8] {
    (bytes * 8).to_be_bytes()
}

/// RFC 9162 leaf hash of an item: SHA-256(0x00 || item).
#[inline]
pub fn leaf_hash(item: &Hash32) -> Hash32 {
    // 0x00 || item (33 bytes) || 0x80 || zeros || bit length: one block.
    let mut block = [0u8; BLOCK_BYTES];
    block[1..33].copy_from_slice(&item.0);
    block[33] = 0x80;
    block[56..].copy_from_slice(&bit_length(33));
    compress(&[block])
}

/// RFC 9162 interior node hash: SHA-256(0x01 || left || right).
#[inline]
pub fn node_hash(left: &Hash32, right: &Hash32) -> Hash32 {
    // 0x01 || left || right (65 bytes) || 0x80 || zeros || bit length: the
    // last byte of `right` spills into a second block.
    let mut blocks = [[0u8; BLOCK_BYTES]; 2];
    blocks[0][0] = 0x01;
    blocks[0][1..33].copy_from_slice(&left.0);
    blocks[0][33..].copy_from_slice(&right.0[..31]);
    blocks[1][0] = right.0[31];
    blocks[1][1] = 0x80;
    blocks[1][56..].copy_from_slice(&bit_length(65));
    compress(&blocks)
}

// ------------------------------------------------------------------ what the logs commit to

/// The leaf-data tag of [`HashScheme::BvsLogV1`]: its name in ASCII.
const BVS_LOG_V1_TAG: [u8; 10] = *b"bvs-log-v1";
/// Longest scheme name echoed back in an error, in bytes.
const SCHEME_NAME_ECHO_BYTES_MAX: usize = 64;

/// How an environment log hashes its leaves, named in every document that
/// carries a log proof (`hashScheme`), so a verifier applies the rule the
/// proof was made with and refuses one it does not know: a later scheme
/// never breaks a proof made under an earlier one.
///
/// Why not plain RFC 9162 leaves over itemHashes: a proof root (a
/// submission's `itemsRoot`, a receipt's `itemsRoot`, a checkpoint's
/// `merkleRoot`) is the access key of the public verify route, and it *is*
/// a plain RFC 9162 root over itemHashes. Were the log's leaves
/// SHA-256(0x00 || itemHash), a one-item submission's root would be its
/// leaf in the log, and an aligned 2^k-item submission's root an interior
/// node, both printed in other parties' inclusion proofs.
///
/// Invariant: no leaf or interior node of a log equals any proof root.
/// A log leaf hashes 43 bytes (0x00 || 10-byte tag || itemHash), a proof
/// tree's leaf 33 bytes and any node 65 bytes starting 0x01, so a log leaf
/// equals no proof-tree hash; a log node equals a proof-tree node only if
/// their children are equal, so by induction down to the log's leaves, no
/// log node does either (short of a SHA-256 collision). Checked by a
/// property test over random item sets (`core/tests/domain_separation.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashScheme {
    /// RFC 9162 leaves over the 42-byte leaf data `"bvs-log-v1" || itemHash`:
    /// leaf = SHA-256(0x00 || "bvs-log-v1" || itemHash), node =
    /// SHA-256(0x01 || left || right).
    BvsLogV1,
}

/// A document names a hash scheme this verifier does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hash scheme \"{0}\"")]
pub struct UnknownScheme(pub String);

impl HashScheme {
    /// The scheme the service's logs use now.
    pub const CURRENT: HashScheme = HashScheme::BvsLogV1;

    /// The name documents carry in `hashScheme`.
    pub const fn name(self) -> &'static str {
        match self {
            HashScheme::BvsLogV1 => "bvs-log-v1",
        }
    }

    /// The leaf rule in words, for reports.
    pub const fn rule(self) -> &'static str {
        match self {
            HashScheme::BvsLogV1 => "bvs-log-v1 (docs/hashes.md)",
        }
    }

    /// Reads a `hashScheme` value.
    ///
    /// # Errors
    /// [`UnknownScheme`] naming the value, for any name but a known one.
    pub fn parse(name: &str) -> Result<HashScheme, UnknownScheme> {
        match name {
            "bvs-log-v1" => Ok(HashScheme::BvsLogV1),
            // A name is echoed only up to SCHEME_NAME_ECHO_BYTES_MAX bytes.
            other if other.len() > SCHEME_NAME_ECHO_BYTES_MAX => {
                Err(UnknownScheme("(a name of over 64 bytes)".to_owned()))
            }
            other => Err(UnknownScheme(other.to_owned())),
        }
    }

    /// The RFC 9162 leaf data of `item` in a log: the tag, then the item.
    pub fn leaf_data(self, item: &Hash32) -> [u8; 42] {
        let mut data = [0u8; 42];
        data[..10].copy_from_slice(&BVS_LOG_V1_TAG);
        data[10..].copy_from_slice(&item.0);
        data
    }

    /// The log's leaf hash of `item`: SHA-256(0x00 || leaf data). Not
    /// `#[inline]`: one leaf hash per proof, against ~log2(n) node hashes,
    /// so one shared copy costs no measurable speed and keeps the browser
    /// verifier inside its size budget.
    pub fn leaf_hash(self, item: &Hash32) -> Hash32 {
        // 0x00 || tag || item (43 bytes) || 0x80 || zeros || bit length:
        // one block, as cheap as a plain leaf.
        let mut block = [0u8; BLOCK_BYTES];
        block[1..11].copy_from_slice(&BVS_LOG_V1_TAG);
        block[11..43].copy_from_slice(&item.0);
        block[43] = 0x80;
        block[56..].copy_from_slice(&bit_length(43));
        compress(&[block])
    }

    /// The root of a log holding `items` in order.
    pub fn log_root(self, items: &[Hash32]) -> Hash32 {
        let mut level: Vec<Hash32> = items.iter().map(|i| self.leaf_hash(i)).collect();
        root_of_leaf_hashes_in_place(&mut level)
    }

    /// Checks that `item` is leaf `index` of the log of `size` with `root`
    /// (RFC 9162 §2.1.3.2 over this scheme's leaf). Never panics.
    ///
    /// # Errors
    /// As [`verify_inclusion_of_leaf_hash`].
    pub fn verify_inclusion(
        self,
        proof: &[Hash32],
        index: LeafIndex,
        size: TreeSize,
        root: &Hash32,
        item: &Hash32,
    ) -> Result<(), ProofError> {
        verify_inclusion_of_log_leaf(proof, index, size, root, &self.leaf_hash(item))
    }
}

/// [`verify_inclusion_of_leaf_hash`] for a log's leaf hash as it is (a
/// withheld public answer's `logLeafHash`, issue 40), and the one copy of
/// it [`HashScheme::verify_inclusion`] shares: never inlined, so the
/// browser verifier carries it once (its size budget).
///
/// # Errors
/// As [`verify_inclusion_of_leaf_hash`].
#[inline(never)]
pub fn verify_inclusion_of_log_leaf(
    proof: &[Hash32],
    index: LeafIndex,
    size: TreeSize,
    root: &Hash32,
    leaf: &Hash32,
) -> Result<(), ProofError> {
    verify_inclusion_of_leaf_hash(proof, index, size, root, leaf)
}

/// Root over item hashes in order (a submission's `itemsRoot`, a
/// checkpoint's `merkleRoot`, a receipt's `itemsRoot`). Empty → SHA-256("").
pub fn root(items: &[Hash32]) -> Hash32 {
    let mut level: Vec<Hash32> = items.iter().map(leaf_hash).collect();
    root_of_leaf_hashes_in_place(&mut level)
}

/// Root over already-computed leaf hashes.
pub fn root_of_leaf_hashes(leaves: &[Hash32]) -> Hash32 {
    let mut level = leaves.to_vec();
    root_of_leaf_hashes_in_place(&mut level)
}

// Pairing bottom-up and promoting an odd last node unchanged builds exactly
// RFC 9162's tree: the left subtree at every split is the largest complete
// power of two, so promoted nodes are always the right fringe.
fn root_of_leaf_hashes_in_place(level: &mut [Hash32]) -> Hash32 {
    let mut n = level.len();
    if n == 0 {
        return Hash32::EMPTY;
    }
    while n > 1 {
        let pairs = n / 2;
        for i in 0..pairs {
            level[i] = node_hash(&level[2 * i], &level[2 * i + 1]);
        }
        if n % 2 == 1 {
            level[pairs] = level[n - 1];
        }
        n = pairs + n % 2;
    }
    level[0]
}

/// Audit path of item `index` in the tree over `items` (RFC 9162 PATH),
/// leaf-side first.
///
/// # Errors
/// [`ProofError::IndexOutOfRange`] if `index >= items.len()`.
pub fn inclusion_proof(items: &[Hash32], index: LeafIndex) -> Result<Vec<Hash32>, ProofError> {
    let size = items.len() as u64;
    if index.0 >= size {
        return Err(ProofError::IndexOutOfRange {
            index: index.0,
            size,
        });
    }
    let leaves: Vec<Hash32> = items.iter().map(leaf_hash).collect();
    let mut path = Vec::new();
    let (mut lo, mut hi) = (0usize, leaves.len());
    let m = usize::try_from(index.0).map_err(|_| ProofError::IndexOutOfRange {
        index: index.0,
        size,
    })?;
    // Walk from the root down, collecting the sibling subtree roots, then
    // reverse so the path is leaf-side first.
    while hi - lo > 1 {
        let k = largest_power_of_two_below((hi - lo) as u64) as usize;
        if m < lo + k {
            path.push(root_of_leaf_hashes(&leaves[lo + k..hi]));
            hi = lo + k;
        } else {
            path.push(root_of_leaf_hashes(&leaves[lo..lo + k]));
            lo += k;
        }
    }
    path.reverse();
    Ok(path)
}

/// Largest power of two strictly below `n` (n ≥ 2).
fn largest_power_of_two_below(n: u64) -> u64 {
    if n < 2 {
        return 0;
    }
    1u64 << (63 - (n - 1).leading_zeros())
}

/// Number of hashes in the inclusion proof of `index` in a tree of `size`
/// (RFC 9162 §2.1.3.2: inner + border), or `None` if `index >= size`.
pub fn inclusion_path_len(index: LeafIndex, size: TreeSize) -> Option<usize> {
    if index.0 >= size.0 {
        return None;
    }
    let inner = 64 - (index.0 ^ (size.0 - 1)).leading_zeros();
    let border = if inner >= 64 {
        0
    } else {
        (index.0 >> inner).count_ones()
    };
    Some((inner + border) as usize)
}

/// Number of hashes in the consistency proof from `old` to `new`, or
/// `None` when no proof exists (old > new).
pub fn consistency_path_len(old: TreeSize, new: TreeSize) -> Option<usize> {
    let (m, n) = (old.0, new.0);
    if m > n {
        return None;
    }
    if m == 0 || m == n {
        return Some(0);
    }
    // Mirror of RFC 9162 SUBPROOF(m, D[lo:hi], b).
    let (mut lo, mut hi) = (0u64, n);
    let mut len = 0usize;
    loop {
        if m == hi {
            return Some(len + usize::from(lo != 0));
        }
        let k = largest_power_of_two_below(hi - lo);
        len += 1;
        if m <= lo + k {
            hi = lo + k;
        } else {
            lo += k;
        }
    }
}

/// That `proof` holds the `expected` number of hashes.
fn path_of_len(proof: &[Hash32], expected: usize) -> Result<(), ProofError> {
    if proof.len() != expected {
        return Err(wrong_len(proof, expected));
    }
    Ok(())
}

fn wrong_len(proof: &[Hash32], expected: usize) -> ProofError {
    ProofError::WrongPathLength {
        expected,
        got: proof.len(),
    }
}

/// The RFC 9162 walk up an audit path from node `f` of a tree whose last
/// node is `s` (both at the path's first level), starting from `seed`:
/// the root it reaches, or `None` when the path is too long or too short
/// for the tree. `left`, if any, takes each sibling that stands on the
/// left.
/// Inclusion and consistency proofs share it.
fn walk(
    path: &[Hash32],
    mut f: u64,
    mut s: u64,
    seed: Hash32,
    mut left: Option<&mut Hash32>,
) -> Option<Hash32> {
    let mut r = seed;
    for p in path {
        if s == 0 {
            return None;
        }
        if f & 1 == 1 || f == s {
            if let Some(l) = left.as_deref_mut() {
                *l = node_hash(p, l);
            }
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    (s == 0).then_some(r)
}

/// Checks that `leaf` is the leaf hash at `index` of the tree of `size`
/// with `root` (RFC 9162 §2.1.3.2). Never panics. For a plain tree (a
/// proof root's own, whose leaves are SHA-256(0x00 || item)) pass
/// [`leaf_hash`] of the item; a log's leaves are tagged, see
/// [`HashScheme::verify_inclusion`].
///
/// # Errors
/// [`ProofError::IndexOutOfRange`], [`ProofError::WrongPathLength`] (before
/// any hashing) or [`ProofError::RootMismatch`].
#[inline]
pub fn verify_inclusion_of_leaf_hash(
    proof: &[Hash32],
    index: LeafIndex,
    size: TreeSize,
    root: &Hash32,
    leaf: &Hash32,
) -> Result<(), ProofError> {
    if size.0 == 0 {
        return Err(ProofError::EmptyTree);
    }
    let expected = inclusion_path_len(index, size).ok_or(ProofError::IndexOutOfRange {
        index: index.0,
        size: size.0,
    })?;
    path_of_len(proof, expected)?;
    let r = walk(proof, index.0, size.0 - 1, *leaf, None).ok_or(wrong_len(proof, expected))?;
    if r.ct_eq(root) {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

/// Checks that the tree of size `new` with `new_root` extends the tree of
/// size `old` with `old_root` (RFC 9162 §2.1.4.2). A tree always extends
/// the empty tree (whose root must then be SHA-256("")). Never panics.
///
/// # Errors
/// [`ProofError::OldSizeLarger`], [`ProofError::WrongPathLength`],
/// [`ProofError::EqualSizeRootsDiffer`], [`ProofError::OldRootMismatch`]
/// or [`ProofError::NewRootMismatch`].
pub fn verify_consistency(
    proof: &[Hash32],
    old: TreeSize,
    old_root: &Hash32,
    new: TreeSize,
    new_root: &Hash32,
) -> Result<(), ProofError> {
    let expected = consistency_path_len(old, new).ok_or(ProofError::OldSizeLarger {
        old: old.0,
        new: new.0,
    })?;
    path_of_len(proof, expected)?;
    if old.0 == 0 {
        return if old_root.ct_eq(&Hash32::EMPTY) {
            Ok(())
        } else {
            Err(ProofError::OldRootMismatch)
        };
    }
    if old.0 == new.0 {
        return if old_root.ct_eq(new_root) {
            Ok(())
        } else {
            Err(ProofError::EqualSizeRootsDiffer { size: old.0 })
        };
    }
    // When old is a power of two its root is the first subtree: the RFC
    // prepends it to the proof. We walk the virtual sequence instead.
    let old_is_pow2 = old.0.is_power_of_two();
    let (first, rest) = if old_is_pow2 {
        (*old_root, proof)
    } else {
        match proof.split_first() {
            Some((h, rest)) => (*h, rest),
            None => return Err(ProofError::WrongPathLength { expected, got: 0 }),
        }
    };
    let mut f = old.0 - 1;
    let mut s = new.0 - 1;
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    // The old root takes only the left siblings; the new root all.
    let mut fr = first;
    let sr = walk(rest, f, s, first, Some(&mut fr)).ok_or(wrong_len(proof, expected))?;
    if !fr.ct_eq(old_root) {
        return Err(ProofError::OldRootMismatch);
    }
    if !sr.ct_eq(new_root) {
        return Err(ProofError::NewRootMismatch);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    proptest! {
        #[test]
        fn the_fixed_block_hashes_are_sha256_of_the_prefixed_inputs(
            a in proptest::array::uniform32(any::<u8>()),
            b in proptest::array::uniform32(any::<u8>()),
        ) {
            let (a, b) = (Hash32(a), Hash32(b));
            let leaf: [u8; 32] = Sha256::new().chain_update([0x00]).chain_update(a.0).finalize().into();
            let node: [u8; 32] = Sha256::new()
                .chain_update([0x01]).chain_update(a.0).chain_update(b.0).finalize().into();
            prop_assert_eq!(leaf_hash(&a), Hash32(leaf));
            prop_assert_eq!(node_hash(&a, &b), Hash32(node));
            let log_leaf: [u8; 32] = Sha256::new()
                .chain_update([0x00]).chain_update(b"bvs-log-v1").chain_update(a.0).finalize().into();
            prop_assert_eq!(HashScheme::BvsLogV1.leaf_hash(&a), Hash32(log_leaf));
            let mut data = vec![0x00];
            data.extend_from_slice(&HashScheme::BvsLogV1.leaf_data(&a));
            prop_assert_eq!(Hash32::digest(&data), Hash32(log_leaf));
        }
    }

    #[test]
    fn the_log_leaf_hash_matches_known_answers() {
        // printf '00%s%064d' $(printf %s bvs-log-v1 | xxd -p) 0 | xxd -r -p | sha256sum
        let zero = Hash32([0; 32]);
        assert_eq!(
            HashScheme::BvsLogV1.leaf_hash(&zero).to_hex(),
            "51142f233b5c22a1a3a3276b8f991246967944628852ff8bb4220bd6001f4dcc"
        );
    }

    #[test]
    fn only_the_known_scheme_is_accepted_by_name() {
        assert_eq!(HashScheme::parse("bvs-log-v1"), Ok(HashScheme::BvsLogV1));
        assert_eq!(HashScheme::CURRENT.name(), "bvs-log-v1");
        for bad in ["", "bvs-log-v2", "BVS-LOG-V1", "bvs-log-v1 ", "rfc9162"] {
            assert_eq!(HashScheme::parse(bad), Err(UnknownScheme(bad.to_string())));
        }
        let long = "x".repeat(1000);
        let e = HashScheme::parse(&long).unwrap_err();
        assert_eq!(e.0, "(a name of over 64 bytes)");
        assert!(e.to_string().starts_with("unknown hash scheme"));
    }

    #[test]
    fn leaf_and_node_hashes_match_known_answers() {
        // SHA-256 of 33 zero bytes, and of 0x01 followed by 64 zero bytes.
        let zero = Hash32([0; 32]);
        assert_eq!(leaf_hash(&zero), Hash32::digest(&[0u8; 33]));
        let mut node_input = [0u8; 65];
        node_input[0] = 0x01;
        assert_eq!(node_hash(&zero, &zero), Hash32::digest(&node_input));
    }

    fn items(n: usize) -> Vec<Hash32> {
        (0..n)
            .map(|i| Hash32::digest(&(i as u64).to_be_bytes()))
            .collect()
    }

    // Reference definition straight from RFC 9162 §2.1.1, recursive.
    fn mth(leaves: &[Hash32]) -> Hash32 {
        match leaves.len() {
            0 => Hash32::EMPTY,
            1 => leaves[0],
            n => {
                let k = largest_power_of_two_below(n as u64) as usize;
                node_hash(&mth(&leaves[..k]), &mth(&leaves[k..]))
            }
        }
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(root(&[]), Hash32::EMPTY);
        let one = items(1);
        assert_eq!(root(&one), leaf_hash(&one[0]));
        assert_eq!(inclusion_proof(&one, LeafIndex(0)).unwrap(), vec![]);
        assert_eq!(
            inclusion_proof(&one, LeafIndex(1)),
            Err(ProofError::IndexOutOfRange { index: 1, size: 1 })
        );
    }

    #[test]
    fn path_lengths_match_generated_proofs() {
        for n in 1..70usize {
            let it = items(n);
            for i in 0..n {
                let p = inclusion_proof(&it, LeafIndex(i as u64)).unwrap();
                assert_eq!(
                    Some(p.len()),
                    inclusion_path_len(LeafIndex(i as u64), TreeSize(n as u64))
                );
            }
        }
        assert_eq!(
            inclusion_path_len(LeafIndex(u64::MAX - 1), TreeSize(u64::MAX)),
            Some(63)
        );
        assert_eq!(
            inclusion_path_len(LeafIndex(0), TreeSize(u64::MAX)),
            Some(64)
        );
        assert_eq!(
            consistency_path_len(TreeSize(1), TreeSize(u64::MAX)).map(|l| l > 0),
            Some(true)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn root_matches_the_recursive_definition(n in 0usize..300) {
            let it = items(n);
            let leaves: Vec<Hash32> = it.iter().map(leaf_hash).collect();
            prop_assert_eq!(root(&it), mth(&leaves));
        }

        #[test]
        fn every_proof_verifies_and_every_mutation_fails(n in 1usize..200, pick in any::<prop::sample::Index>(), byte in 0usize..32, bit in 0u8..8) {
            let it = items(n);
            let r = root(&it);
            let i = pick.index(n);
            let proof = inclusion_proof(&it, LeafIndex(i as u64)).unwrap();
            prop_assert_eq!(verify_inclusion_of_leaf_hash(&proof, LeafIndex(i as u64), TreeSize(n as u64), &r, &leaf_hash(&it[i])), Ok(()));
            for k in 0..proof.len() {
                let mut bad = proof.clone();
                bad[k].0[byte] ^= 1 << bit;
                prop_assert_eq!(verify_inclusion_of_leaf_hash(&bad, LeafIndex(i as u64), TreeSize(n as u64), &r, &leaf_hash(&it[i])), Err(ProofError::RootMismatch));
            }
            let mut other = it[i];
            other.0[byte] ^= 1 << bit;
            prop_assert_eq!(verify_inclusion_of_leaf_hash(&proof, LeafIndex(i as u64), TreeSize(n as u64), &r, &leaf_hash(&other)), Err(ProofError::RootMismatch));
            if n > 1 {
                let j = (i + 1) % n;
                let res = verify_inclusion_of_leaf_hash(&proof, LeafIndex(j as u64), TreeSize(n as u64), &r, &leaf_hash(&it[i]));
                prop_assert!(res.is_err());
            }
        }
    }
}
