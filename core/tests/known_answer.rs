//! Known-answer vectors from transparency-dev/merkle (testonly/reference_test.go,
//! the RFC 6962 test tree of eight leaves), as also used by ct-merkle.
//! Leaves are raw data here, so these tests work at the leaf-hash level.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use sha2::{Digest, Sha256};

const LEAVES: &[&str] = &[
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

/// Roots of the trees of the first 1..=8 leaves.
const ROOTS: &[&str] = &[
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// (tree size, leaf index, proof)
const INCLUSION: &[(u64, u64, &[&str])] = &[
    (1, 0, &[]),
    (
        2,
        0,
        &["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"],
    ),
    (
        2,
        1,
        &["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"],
    ),
    (
        3,
        2,
        &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
    ),
    (
        5,
        1,
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        8,
        0,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        8,
        5,
        &[
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
];

/// (old size, new size, proof)
const CONSISTENCY: &[(u64, u64, &[&str])] = &[
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        2,
        5,
        &[
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        8,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
];

fn leaf_hashes() -> Vec<Hash32> {
    LEAVES
        .iter()
        .map(|l| {
            let mut h = Sha256::new();
            h.update([0u8]);
            h.update(hex::decode(l).unwrap());
            Hash32(h.finalize().into())
        })
        .collect()
}

fn h(s: &str) -> Hash32 {
    Hash32::parse(s).unwrap()
}

fn full_store() -> StoredHashes {
    let mut store = StoredHashes::new();
    for (i, leaf) in leaf_hashes().iter().enumerate() {
        let size = TreeSize(i as u64);
        let plan = log::indexes_for_append(size, 1).unwrap();
        let fetched: StoredHashes = plan.iter().map(|k| (*k, *store.get(*k).unwrap())).collect();
        for (k, v) in log::append_leaf_hashes(size, &[*leaf], &fetched).unwrap() {
            store.insert(k, v);
        }
    }
    store
}

#[test]
fn roots_of_the_reference_tree() {
    let leaves = leaf_hashes();
    let store = full_store();
    for (i, want) in ROOTS.iter().enumerate() {
        let n = i + 1;
        assert_eq!(
            merkle::root_of_leaf_hashes(&leaves[..n]),
            h(want),
            "in-memory root of {n}"
        );
        assert_eq!(
            log::tree_root(TreeSize(n as u64), &store).unwrap(),
            h(want),
            "log root of {n}"
        );
    }
    assert_eq!(merkle::root_of_leaf_hashes(&[]), Hash32::EMPTY);
}

#[test]
fn inclusion_proofs_of_the_reference_tree() {
    let leaves = leaf_hashes();
    let store = full_store();
    for (size, index, want) in INCLUSION {
        let want: Vec<Hash32> = want.iter().map(|s| h(s)).collect();
        let got = log::inclusion_proof(LeafIndex(*index), TreeSize(*size), &store).unwrap();
        assert_eq!(got, want, "log proof {index} in {size}");
        let root = h(ROOTS[*size as usize - 1]);
        assert_eq!(
            merkle::verify_inclusion_of_leaf_hash(
                &want,
                LeafIndex(*index),
                TreeSize(*size),
                &root,
                &leaves[*index as usize]
            ),
            Ok(())
        );
    }
}

#[test]
fn consistency_proofs_of_the_reference_tree() {
    let store = full_store();
    for (old, new, want) in CONSISTENCY {
        let want: Vec<Hash32> = want.iter().map(|s| h(s)).collect();
        let got = log::consistency_proof(TreeSize(*old), TreeSize(*new), &store).unwrap();
        assert_eq!(got, want, "log proof {old} -> {new}");
        let (old_root, new_root) = (h(ROOTS[*old as usize - 1]), h(ROOTS[*new as usize - 1]));
        assert_eq!(
            merkle::verify_consistency(&want, TreeSize(*old), &old_root, TreeSize(*new), &new_root),
            Ok(())
        );
    }
}
