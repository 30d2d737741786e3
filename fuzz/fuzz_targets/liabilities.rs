//! Liabilities proofs (issue 31): a proof document read from any text, and
//! a sum-tree path decoded from any bytes (amounts anywhere in i128, any
//! index and count), never panic; sums never wrap; a path the verifier
//! accepts for a small real tree leads to that tree's root and total.
#![no_main]

use bvs_core::hash::Hash32;
use bvs_core::liabilities::proof::{verify_proof_json, Checker};
use bvs_core::types::CustomerId;
use bvs_core::liabilities::{leaf, verify_path, Salt, SumNode, SumTree, TreeKind};
use bvs_core::Amount;
use libfuzzer_sys::fuzz_target;

fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    for (i, x) in b.iter_mut().enumerate() {
        *x = data.get(at + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(b)
}

/// (hash, sum) pairs, 48 bytes each: 32 of hash, 16 of i128 units.
fn nodes(bytes: &[u8]) -> Vec<SumNode> {
    bytes
        .chunks_exact(48)
        .map(|c| {
            let mut h = [0u8; 32];
            h.copy_from_slice(&c[..32]);
            let mut u = [0u8; 16];
            u.copy_from_slice(&c[32..]);
            SumNode {
                hash: Hash32(h),
                sum: Amount::from_units(i128::from_le_bytes(u)),
            }
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(me) = CustomerId::parse("cust_fuzz") {
            let _ = verify_proof_json(text, Checker::Customer(&me), None, Some(Amount::ZERO));
        }
    }
    if data.len() < 17 + 48 {
        return;
    }
    let kind = if data[0] & 1 == 0 {
        TreeKind::Liabilities
    } else {
        TreeKind::Receivables
    };
    let (index, count) = if data[0] & 0x80 == 0 {
        (u64_at(data, 1) % 16, u64_at(data, 9) % 17)
    } else {
        (u64_at(data, 1), u64_at(data, 9))
    };
    let all = nodes(&data[17..]);
    let (start, rest) = all.split_first().expect("at least one node");
    let (path, root) = match rest.split_last() {
        Some((root, path)) => (path, *root),
        None => (&[][..], *start),
    };
    if verify_path(kind, start, index, count, path, &root).is_ok() {
        // Accepted: every amount was in range and the sums added up.
        assert!(root.sum.signum() >= 0 && start.sum.signum() >= 0);
    }
    // A real tree of `count` small leaves: its own path verifies, and the
    // fuzzed path verifies only if it is that path.
    if count > 0 && count <= 16 && index < count {
        let leaves: Vec<SumNode> = (0..count)
            .map(|i| {
                let amount = Amount::from_units(i128::from(data[(i as usize) % data.len()]));
                leaf(kind, &Salt([i as u8; 32]), &Hash32([7; 32]), amount).expect("in range")
            })
            .collect();
        let tree = SumTree::build(kind, &leaves).expect("small amounts");
        let real = tree.path(index).expect("index below count");
        let l = &leaves[index as usize];
        assert!(verify_path(kind, l, index, count, &real, &tree.root()).is_ok());
        if verify_path(kind, l, index, count, path, &tree.root()).is_ok() {
            assert_eq!(path, &real[..], "a forged path was accepted");
        }
    }
});
