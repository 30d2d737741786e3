//! No hash a log shows is a proof root (issue 14). A proof root (a
//! submission's `itemsRoot`, a receipt's `itemsRoot`, a checkpoint's
//! `merkleRoot`) is a plain RFC 9162 root over itemHashes and the access
//! key of the public verify route; the log's leaves are tagged
//! (`bvs-log-v1`), so none of its leaves or interior nodes, which its
//! inclusion and consistency proofs print, equals any such root.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes, HASH_SCHEME};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use proptest::prelude::*;

/// Every hash of every subtree a log over `items` may print: all stored
/// hashes (leaves and complete subtrees) plus every root of every size
/// (the right-fringe nodes proofs and heads show).
fn every_log_node(items: &[Hash32]) -> BTreeSet<Hash32> {
    let mut store = StoredHashes::new();
    for (k, v) in log::append(TreeSize(0), items, &StoredHashes::new()).unwrap() {
        store.insert(k, v);
    }
    let mut nodes: BTreeSet<Hash32> = store.0.values().copied().collect();
    let n = items.len() as u64;
    for size in 1..=n {
        nodes.insert(log::tree_root(TreeSize(size), &store).unwrap());
        for i in [0, size / 2, size - 1] {
            nodes.extend(log::inclusion_proof(LeafIndex(i), TreeSize(size), &store).unwrap());
        }
        for m in [1, size / 2 + 1] {
            nodes.extend(
                log::consistency_proof(TreeSize(m.min(size)), TreeSize(size), &store).unwrap(),
            );
        }
    }
    // Every proof over a sub-range of the log is made of these same nodes.
    for lo in 0..items.len() {
        for hi in lo + 1..=items.len() {
            nodes.insert(HASH_SCHEME.log_root(&items[lo..hi]));
        }
    }
    nodes
}

/// Every proof root that submissions, receipts or checkpoints over `items`
/// can have: the plain root of every contiguous run, in the log's order or
/// any other order a submission might choose (here: reversed too), and as
/// a frontier (a checkpoint's merkleRoot) would compute it.
fn every_proof_root(items: &[Hash32]) -> BTreeSet<Hash32> {
    // Frontier::root is merkle::root over the same items (frontier.rs).
    let mut roots = BTreeSet::new();
    let reversed: Vec<Hash32> = items.iter().rev().copied().collect();
    for list in [items, &reversed[..]] {
        for lo in 0..list.len() {
            let mut f = Frontier::new();
            for hi in lo + 1..=list.len() {
                f.push(&list[hi - 1]);
                roots.insert(f.root());
            }
        }
    }
    roots
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_log_node_equals_any_submission_receipt_or_checkpoint_root(
        seeds in proptest::collection::vec(any::<[u8; 32]>(), 1..40),
        tail in proptest::collection::vec(any::<[u8; 32]>(), 0..8),
    ) {
        // Items in the log, and items that later submissions may hold
        // together with them.
        let items: Vec<Hash32> = seeds.into_iter().map(Hash32).collect();
        let mut both = items.clone();
        both.extend(tail.into_iter().map(Hash32));
        let nodes = every_log_node(&items);
        let roots = every_proof_root(&both);
        let shared: Vec<&Hash32> = nodes.intersection(&roots).collect();
        prop_assert!(shared.is_empty(), "log nodes equal to proof roots: {:?}", shared);
    }
}

/// The attack of issue 14, replayed on the old rule: with plain leaves a
/// one-item submission's root was its leaf in the log, and an aligned
/// four-item submission's root an interior node; with tagged leaves they
/// are not.
#[test]
fn the_reported_attack_works_on_plain_leaves_and_not_on_the_log() {
    let items: Vec<Hash32> = (0..8u64)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let single = merkle::root(&items[1..2]);
    let aligned = merkle::root(&items[4..8]);
    // Old rule: the log was the plain tree over the items.
    let plain_sibling_of_0 = merkle::inclusion_proof(&items, LeafIndex(0)).unwrap();
    assert_eq!(plain_sibling_of_0[0], single);
    assert_eq!(plain_sibling_of_0[2], aligned);
    // The log: the same positions hold other hashes.
    let nodes = every_log_node(&items);
    assert!(!nodes.contains(&single));
    assert!(!nodes.contains(&aligned));
    let mut store = StoredHashes::new();
    for (k, v) in log::append(TreeSize(0), &items, &StoredHashes::new()).unwrap() {
        store.insert(k, v);
    }
    let proof = log::inclusion_proof(LeafIndex(0), TreeSize(8), &store).unwrap();
    assert_eq!(proof[0], HASH_SCHEME.leaf_hash(&items[1]));
    assert_eq!(proof[2], HASH_SCHEME.log_root(&items[4..8]));
    assert_ne!(proof[0], single);
    assert_ne!(proof[2], aligned);
}
