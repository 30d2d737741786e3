//! Merkle benchmarks for bvs-core: roots, log appends and proofs against
//! the in-process SHA-256 limit measured in the same run.
//!
//! Run: `cargo bench -p bvs-core --bench merkle` (add `-- --quick` to skip 1M).
//!
//! The "hashing limit" for a root over N items is the time to compute N leaf
//! hashes (SHA-256 of 33 bytes) plus N−1 node hashes (SHA-256 of 65 bytes)
//! with nothing else; a root can't be cheaper. For verification the limit
//! is one leaf hash plus L node hashes for a path of length L.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use sha2::{Digest, Sha256};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn items(n: usize) -> Vec<Hash32> {
    (0..n as u64)
        .map(|i| Hash32::digest(&i.to_le_bytes()))
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(reps: usize, mut f: F) -> Duration {
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// N leaf hashes then N−1 node hashes over a buffer: the floor for a root.
fn hashing_limit(items: &[Hash32], buf: &mut Vec<[u8; 32]>) -> [u8; 32] {
    buf.clear();
    for it in items {
        let mut h = Sha256::new();
        h.update([0u8]);
        h.update(it.0);
        buf.push(h.finalize().into());
    }
    let mut acc = [0u8; 32];
    for i in 0..items.len().saturating_sub(1) {
        let mut h = Sha256::new();
        h.update([1u8]);
        h.update(buf[i]);
        h.update(buf[i + 1]);
        acc = h.finalize().into();
        buf[i] = acc;
    }
    acc
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[1_000, 10_000, 100_000]
    } else {
        &[1_000, 10_000, 100_000, 1_000_000]
    };

    println!("## Root over N itemHashes (median of runs)\n");
    println!(
        "| N | SHA-256 limit (ms) | merkle::root (ms) | ratio | log append+root (ms) | ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut stores = Vec::new();
    for &n in sizes {
        let it = items(n);
        let reps = (3_000_000 / n).clamp(5, 101);
        let mut buf = Vec::with_capacity(n);
        // Interleave the two so frequency drift hits both alike.
        let mut lim = Vec::new();
        let mut root = Vec::new();
        for _ in 0..reps {
            lim.push(time(1, || {
                black_box(hashing_limit(black_box(&it), &mut buf));
            }));
            root.push(time(1, || {
                black_box(merkle::root(black_box(&it)));
            }));
        }
        let (lim, root) = (median(lim), median(root));
        // The log: appends in batches of 1000 (a queue batch), then the root.
        let mut store = StoredHashes::new();
        let log_reps = if n >= 1_000_000 { 3 } else { 5 };
        let log_time = time(log_reps, || {
            let mut s = StoredHashes::new();
            let mut size = 0usize;
            while size < n {
                let end = (size + 1000).min(n);
                let plan =
                    log::indexes_for_append(TreeSize(size as u64), (end - size) as u64).unwrap();
                let fetched: StoredHashes =
                    plan.iter().map(|k| (*k, *s.get(*k).unwrap())).collect();
                for (k, v) in log::append(TreeSize(size as u64), &it[size..end], &fetched).unwrap()
                {
                    s.insert(k, v);
                }
                size = end;
            }
            black_box(log::tree_root(TreeSize(n as u64), &s).unwrap());
            store = s;
        });
        assert_eq!(
            log::tree_root(TreeSize(n as u64), &store).unwrap(),
            log::HASH_SCHEME.log_root(&it)
        );
        println!(
            "| {n} | {:.2} | {:.2} | {:.3} | {:.2} | {:.2} |",
            ms(lim),
            ms(root),
            root.as_secs_f64() / lim.as_secs_f64(),
            ms(log_time),
            log_time.as_secs_f64() / lim.as_secs_f64()
        );
        stores.push((n, it, store));
    }

    println!("\n## Inclusion proofs (1000 random leaves per size, median of 7 runs)\n");
    println!("| N | path len | generate (proofs/s) | verify (proofs/s) | limit (1+L hashes/s) | verify ratio |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for (n, it, store) in &stores {
        let n = *n;
        let size = TreeSize(n as u64);
        let root = log::HASH_SCHEME.log_root(it);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let leaves: Vec<u64> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n as u64
            })
            .collect();
        let proofs: Vec<Vec<Hash32>> = leaves
            .iter()
            .map(|l| log::inclusion_proof(LeafIndex(*l), size, store).unwrap())
            .collect();
        let gen = time(7, || {
            for l in &leaves {
                // The worker's path: plan, fetch from its map, prove.
                let plan = log::indexes_for_inclusion(LeafIndex(*l), size).unwrap();
                let fetched: StoredHashes =
                    plan.iter().map(|k| (*k, *store.get(*k).unwrap())).collect();
                black_box(log::inclusion_proof(LeafIndex(*l), size, &fetched).unwrap());
            }
        });
        let verify = time(7, || {
            for (l, p) in leaves.iter().zip(&proofs) {
                log::HASH_SCHEME
                    .verify_inclusion(black_box(p), LeafIndex(*l), size, &root, &it[*l as usize])
                    .unwrap();
            }
        });
        let total_path: usize = proofs.iter().map(Vec::len).sum();
        let limit = time(7, || {
            for (l, p) in leaves.iter().zip(&proofs) {
                let mut r = log::HASH_SCHEME.leaf_hash(black_box(&it[*l as usize]));
                for h in p {
                    r = merkle::node_hash(h, &r);
                }
                black_box(r);
            }
        });
        let per_s = |d: Duration| 1000.0 / d.as_secs_f64();
        println!(
            "| {n} | {:.1} | {:.0} | {:.0} | {:.0} | {:.2} |",
            total_path as f64 / 1000.0,
            per_s(gen),
            per_s(verify),
            per_s(limit),
            limit.as_secs_f64() / verify.as_secs_f64()
        );
    }
}
