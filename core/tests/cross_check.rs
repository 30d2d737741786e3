//! Roots and proofs cross-checked against two independent implementations:
//! ct-merkle (rozbb) and tlog_tiles' own verifiers (Go tlog port). Both
//! are handed the log's leaf data ("bvs-log-v1" || itemHash) as their
//! records, as any RFC 9162 tool would be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes, HASH_SCHEME};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use ct_merkle::mem_backed_tree::MemoryBackedTree;
use proptest::prelude::*;
use sha2::Sha256 as Sha256v11;

fn items(n: usize, salt: u64) -> Vec<Hash32> {
    (0..n as u64)
        .map(|i| Hash32::digest(&[i.to_le_bytes(), salt.to_le_bytes()].concat()))
        .collect()
}

fn build(items: &[Hash32], batch: usize) -> StoredHashes {
    let mut store = StoredHashes::new();
    let mut size = 0usize;
    while size < items.len() {
        let end = (size + batch.max(1)).min(items.len());
        let plan = log::indexes_for_append(TreeSize(size as u64), (end - size) as u64).unwrap();
        let fetched: StoredHashes = plan.iter().map(|k| (*k, *store.get(*k).unwrap())).collect();
        for (k, v) in log::append(TreeSize(size as u64), &items[size..end], &fetched).unwrap() {
            store.insert(k, v);
        }
        size = end;
    }
    store
}

fn ct_tree(items: &[Hash32]) -> MemoryBackedTree<Sha256v11, [u8; 42]> {
    let mut t = MemoryBackedTree::new();
    for i in items {
        t.push(HASH_SCHEME.leaf_data(i));
    }
    t
}

fn concat(proof: &[Hash32]) -> Vec<u8> {
    proof.iter().flat_map(|h| h.0).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn roots_and_proofs_agree_with_ct_merkle_and_tlog(n in 1usize..400, batch in 1usize..40, salt in any::<u64>(), pick in any::<prop::sample::Index>(), pick_old in any::<prop::sample::Index>()) {
        let it = items(n, salt);
        let store = build(&it, batch);
        let ct = ct_tree(&it);
        let size = TreeSize(n as u64);

        let root = log::tree_root(size, &store).unwrap();
        prop_assert_eq!(root, HASH_SCHEME.log_root(&it));
        let ct_root = ct.root();
        prop_assert_eq!(root.0.to_vec(), ct_root.as_bytes().to_vec());

        let i = pick.index(n);
        let proof = log::inclusion_proof(LeafIndex(i as u64), size, &store).unwrap();
        let leaves: Vec<Hash32> = it.iter().map(log::record_hash).collect();
        prop_assert_eq!(merkle::root_of_leaf_hashes(&leaves), root);
        prop_assert_eq!(concat(&proof), ct.prove_inclusion(i).as_bytes().to_vec());
        prop_assert_eq!(log::HASH_SCHEME.verify_inclusion(&proof, LeafIndex(i as u64), size, &root, &it[i]), Ok(()));
        let tl: Vec<tlog_tiles::Hash> = proof.iter().map(|h| (*h).into()).collect();
        prop_assert!(tlog_tiles::check_record(&tl, n as u64, root.into(), i as u64, log::record_hash(&it[i]).into()).is_ok());

        let m = pick_old.index(n) + 1;
        let old_root = HASH_SCHEME.log_root(&it[..m]);
        let cproof = log::consistency_proof(TreeSize(m as u64), size, &store).unwrap();
        prop_assert_eq!(concat(&cproof), ct.prove_consistency(n - m).as_bytes().to_vec());
        prop_assert_eq!(merkle::verify_consistency(&cproof, TreeSize(m as u64), &old_root, size, &root), Ok(()));
        let tl: Vec<tlog_tiles::Hash> = cproof.iter().map(|h| (*h).into()).collect();
        prop_assert!(tlog_tiles::check_tree(&tl, n as u64, root.into(), m as u64, old_root.into()).is_ok());
    }
}

/// Sizes around powers of two, where off-by-one errors live.
#[test]
fn edge_sizes_agree_with_ct_merkle() {
    for n in [
        1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256,
        257, 1023, 1024, 1025,
    ] {
        let it = items(n, 7);
        let store = build(&it, 13);
        let ct = ct_tree(&it);
        let root = log::tree_root(TreeSize(n as u64), &store).unwrap();
        assert_eq!(
            root.0.to_vec(),
            ct.root().as_bytes().to_vec(),
            "root of {n}"
        );
        for i in [0, n / 2, n - 1] {
            let p = log::inclusion_proof(LeafIndex(i as u64), TreeSize(n as u64), &store).unwrap();
            assert_eq!(
                concat(&p),
                ct.prove_inclusion(i).as_bytes().to_vec(),
                "proof {i} of {n}"
            );
        }
        for m in [1, n / 2 + 1, n] {
            let m = m.min(n);
            let p = log::consistency_proof(TreeSize(m as u64), TreeSize(n as u64), &store).unwrap();
            assert_eq!(
                concat(&p),
                ct.prove_consistency(n - m).as_bytes().to_vec(),
                "{m} -> {n}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every generated consistency proof verifies; flipping any bit of any
    /// hash in it, or pairing it with another history's root, fails.
    #[test]
    fn every_consistency_mutation_fails(n in 2usize..300, pick_old in any::<prop::sample::Index>(), byte in 0usize..32, bit in 0u8..8) {
        let it = items(n, 1);
        let store = build(&it, 17);
        let m = pick_old.index(n - 1) + 1; // 1..n-1
        let (old_root, root) = (HASH_SCHEME.log_root(&it[..m]), HASH_SCHEME.log_root(&it));
        let (old, new) = (TreeSize(m as u64), TreeSize(n as u64));
        let proof = log::consistency_proof(old, new, &store).unwrap();
        prop_assert_eq!(merkle::verify_consistency(&proof, old, &old_root, new, &root), Ok(()));
        for k in 0..proof.len() {
            let mut bad = proof.clone();
            bad[k].0[byte] ^= 1 << bit;
            prop_assert!(merkle::verify_consistency(&bad, old, &old_root, new, &root).is_err(), "hash {} of {}", k, proof.len());
        }
        let mut forged = it.clone();
        forged[m - 1].0[byte] ^= 1 << bit;
        prop_assert!(merkle::verify_consistency(&proof, old, &HASH_SCHEME.log_root(&forged[..m]), new, &root).is_err());
        prop_assert!(merkle::verify_consistency(&proof, old, &old_root, new, &HASH_SCHEME.log_root(&forged)).is_err());
    }
}
