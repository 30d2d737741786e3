//! Inclusion and consistency verification decode proofs from arbitrary
//! bytes and never panic; a proof the verifier accepts for a small real
//! tree is the genuine one, for plain trees (proof roots) and for the
//! log's tagged leaves (`bvs-log-v1`) alike.
#![no_main]

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes, HASH_SCHEME};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use libfuzzer_sys::fuzz_target;

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (i, x) in b.iter_mut().enumerate() {
        *x = data.get(at + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(b)
}

fn hashes(bytes: &[u8]) -> Vec<Hash32> {
    bytes
        .chunks_exact(32)
        .map(|c| {
            let mut h = [0u8; 32];
            h.copy_from_slice(c);
            Hash32(h)
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 17 {
        return;
    }
    let mode = data[0];
    // Small sizes reach real trees; large ones exercise the arithmetic.
    let (a, b) = if mode & 0x80 == 0 {
        (u64_at(data, 1) % 64, u64_at(data, 9) % 64)
    } else {
        (u64_at(data, 1), u64_at(data, 9))
    };
    let rest = &data[17..];
    let proof = hashes(rest);
    let items: Vec<Hash32> = (0..b.min(64))
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    if mode & 3 == 2 {
        // The log: an accepted proof is the log's own, and it never
        // passes as a plain-leaf proof of the same item.
        let root = HASH_SCHEME.log_root(&items);
        let item = items.get(a as usize).copied().unwrap_or(Hash32::EMPTY);
        if HASH_SCHEME
            .verify_inclusion(&proof, LeafIndex(a), TreeSize(b), &root, &item)
            .is_ok()
        {
            let mut store = StoredHashes::new();
            for (k, v) in log::append(TreeSize(0), &items, &StoredHashes::new()).expect("append") {
                store.insert(k, v);
            }
            let genuine =
                log::inclusion_proof(LeafIndex(a), TreeSize(b), &store).expect("in range");
            assert_eq!(proof, genuine, "a forged log inclusion proof was accepted");
            assert!(
                merkle::verify_inclusion_of_leaf_hash(
                    &proof,
                    LeafIndex(a),
                    TreeSize(b),
                    &root,
                    &merkle::leaf_hash(&item)
                )
                .is_err(),
                "a log proof passed as a plain-leaf proof"
            );
        }
    } else if mode & 1 == 0 {
        let root = merkle::root(&items);
        let item = items.get(a as usize).copied().unwrap_or(Hash32::EMPTY);
        if merkle::verify_inclusion_of_leaf_hash(
            &proof,
            LeafIndex(a),
            TreeSize(b),
            &root,
            &merkle::leaf_hash(&item),
        )
        .is_ok()
        {
            let genuine = merkle::inclusion_proof(&items, LeafIndex(a)).expect("index in range");
            assert_eq!(proof, genuine, "a forged inclusion proof was accepted");
        }
    } else {
        let old_root = merkle::root(&items[..(a.min(b) as usize).min(items.len())]);
        let new_root = merkle::root(&items);
        let _ = merkle::verify_consistency(&proof, TreeSize(a), &old_root, TreeSize(b), &new_root);
        // Roots taken from the input itself, too.
        let roots = hashes(rest.get(..64).unwrap_or(&[]));
        if let [r1, r2] = roots.as_slice() {
            let _ = merkle::verify_consistency(&proof, TreeSize(a), r1, TreeSize(b), r2);
            let _ = merkle::verify_inclusion_of_leaf_hash(
                &proof,
                LeafIndex(a),
                TreeSize(b),
                r1,
                &merkle::leaf_hash(r2),
            );
        }
    }
});
