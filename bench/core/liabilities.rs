//! Liabilities statements (issue 31): building and storing a statement for
//! N ledgers, and checking one customer's proof, against the in-process
//! SHA-256 limit of the same hashes measured in the same run.
//!
//! Run: `cargo bench -p bvs-core --bench liabilities` (`-- --quick` skips
//! 100,000).
//!
//! "build + store" is what the service's resumable job does, minus D1:
//! ledgers in the statement's shuffled order, 1,000 per "invocation" (the
//! builder's state written to text and read back between pages), every
//! completed node put in a map (the stand-in for its D1 rows), then the
//! statement and its log item hash. The limit is the same number of
//! SHA-256 calls over inputs of the same lengths, in a bare loop: per
//! ledger an order key and a salt and a leaf (two of each for a negative
//! balance), one node per completed parent, the roots and the statement.
//! Checking one proof: the sum-tree path alone (`verify_path`: one leaf
//! hash, L node hashes, the sealed root), against the limit of those L+2
//! hashes ("verify ratio" = limit time / verify time, as in the merkle
//! bench: 1.0 is the limit); and the whole document (`verify_proof`: with the statement's
//! hash, the Ed25519 signature of the log head and the log inclusion).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::liabilities::proof::{verify_proof, Checker};
use bvs_core::liabilities::statement::StatementBuilder;
use bvs_core::liabilities::{leaf, sample, verify_path, NodeAddr, Seed, SumNode, TreeKind};
use bvs_core::types::{CustomerId, Env, Period};
use bvs_core::{Amount, Hash32};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Ledgers per invocation of the (simulated) job.
const PAGE: usize = 1_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The median of the ratios of runs taken side by side: load from other
/// processes slows both runs of a pair alike, so their ratio is steadier
/// than the ratio of the medians.
fn median_ratio(a: &[Duration], b: &[Duration]) -> f64 {
    let mut r: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.as_secs_f64() / y.as_secs_f64())
        .collect();
    r.sort_by(f64::total_cmp);
    r[r.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Balances as a vendor has them: mostly cents, some zero, ~10% negative.
fn ledgers(n: usize) -> Vec<(Hash32, Amount)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let cents = i128::from(x % 10_000_000);
            let units = match x % 10 {
                0 => -cents * 10_000_000_000_000_000,
                1 => 0,
                _ => cents * 10_000_000_000_000_000,
            };
            (
                Hash32::digest(format!("ledger {i}").as_bytes()),
                Amount::from_units(units),
            )
        })
        .collect()
}

type Store = HashMap<(TreeKind, NodeAddr), SumNode>;

/// The job: pages of `PAGE` ledgers, state saved between pages, every
/// completed node stored; the statement's item hash at the end.
fn build_and_store(sorted: &[(Hash32, Amount)], seed: &Seed) -> (Store, Hash32) {
    let mut store: Store = HashMap::with_capacity(sorted.len() * 2 + 64);
    let mut state = StatementBuilder::new(seed.clone()).to_text();
    for page in sorted.chunks(PAGE) {
        let mut b = StatementBuilder::from_text(&state).unwrap();
        for (ledger, balance) in page {
            for (kind, addr, node) in b.push(*ledger, *balance).unwrap().nodes {
                store.insert((kind, addr), node);
            }
        }
        state = b.to_text();
    }
    let b = StatementBuilder::from_text(&state).unwrap();
    let s = b
        .finish(
            "ten_bench",
            Env::Sandbox,
            Period::parse("2026-11").unwrap(),
            None,
        )
        .unwrap();
    (store, s.item_hash())
}

/// The lengths of every SHA-256 input of a build over `sorted`: the limit
/// hashes inputs of exactly these lengths.
fn input_lengths(sorted: &[(Hash32, Amount)], store: &Store) -> Vec<usize> {
    let mut out = Vec::with_capacity(sorted.len() * 4);
    for (_, b) in sorted {
        out.push(1 + 24 + 32 + 32); // order key
        out.push(1 + 23 + 32 + 23 + 32); // salt
        let owed = if b.signum() > 0 { *b } else { Amount::ZERO };
        out.push(1 + 23 + 32 + 32 + owed.to_string().len()); // leaf
        if b.signum() < 0 {
            out.push(1 + 23 + 32 + 23 + 32);
            out.push(1 + 23 + 32 + 32 + b.checked_neg().unwrap().to_string().len());
        }
    }
    for ((kind, addr), _) in store.iter().filter(|(k, _)| k.1.level > 0) {
        let child = |i| {
            store[&(
                *kind,
                NodeAddr {
                    level: addr.level - 1,
                    index: i,
                },
            )]
        };
        let (l, r) = (child(2 * addr.index), child(2 * addr.index + 1));
        out.push(1 + 23 + 64 + l.sum.to_string().len() + 1 + r.sum.to_string().len());
    }
    out.extend([1 + 23 + 32 + 20 + 1 + 6; 2]); // roots
    out.push(1 + 28 + 330); // the statement
    out
}

/// SHA-256 over inputs of the given lengths, each from one buffer.
fn hashing_limit(lengths: &[usize]) -> [u8; 32] {
    let mut buf = [7u8; 512];
    let mut acc = [0u8; 32];
    for &len in lengths {
        buf[..32].copy_from_slice(&acc);
        acc = Sha256::digest(&buf[..len]).into();
    }
    acc
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    let seed = Seed([0x5e; 32]);

    println!("## Building and storing a statement (median of runs)\n");
    println!(
        "| ledgers | hashes | SHA-256 limit (ms) | build + store (ms) | ratio | stored nodes |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let mut sorted = ledgers(n);
        seed.shuffle(&mut sorted);
        let reps = if n >= 100_000 { 7 } else { 15 };
        let (store, _) = build_and_store(&sorted, &seed);
        let lengths = input_lengths(&sorted, &store);
        let (mut limit, mut build) = (Vec::new(), Vec::new());
        // Alternate, so load from other processes slows both alike.
        for _ in 0..reps {
            let t = Instant::now();
            black_box(hashing_limit(black_box(&lengths)));
            limit.push(t.elapsed());
            let t = Instant::now();
            black_box(build_and_store(black_box(&sorted), &seed));
            build.push(t.elapsed());
        }
        let ratio = median_ratio(&build, &limit);
        let (limit, build) = (median(limit), median(build));
        println!(
            "| {n} | {} | {:.2} | {:.2} | {ratio:.2} | {} |",
            lengths.len(),
            ms(limit),
            ms(build),
            store.len()
        );
    }

    println!("\n## Checking one customer's proof (median of rounds)\n");
    println!(
        "| ledgers | path len | verify_path (µs) | limit (µs) | ratio | whole document (µs) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let balances: Vec<(String, Amount)> = ledgers(n)
            .into_iter()
            .enumerate()
            .map(|(i, (_, b))| (format!("cust_{i}"), b))
            .collect();
        let refs: Vec<(&str, Amount)> = balances.iter().map(|(c, b)| (c.as_str(), *b)).collect();
        let s = sample::build(
            "bvs.example/log/sandbox",
            &[0x42; 32],
            "ten_bench",
            Period::parse("2026-11").unwrap(),
            &refs,
            [0x5e; 32],
            PAGE,
            1_000,
        )
        .unwrap();
        let picks: Vec<_> = (0..200).map(|i| &s.customers[(i * 7_919) % n]).collect();
        let root = s.statement.liabilities.root_node();
        let count = s.statement.liabilities.leaf_count;
        let mean_len = picks
            .iter()
            .map(|c| c.document.liabilities.path.len())
            .sum::<usize>() as f64
            / 200.0;
        // Each check's hash inputs: its leaf, a node per sibling (the sum on
        // the way up is about as long as the sibling's), the sealed root.
        let limits: Vec<Vec<usize>> = picks
            .iter()
            .map(|c| {
                let d = &c.document;
                let mut lengths = vec![1 + 23 + 64 + d.liabilities.amount.to_string().len()];
                lengths.extend(
                    d.liabilities
                        .path
                        .iter()
                        .map(|p| 1 + 23 + 64 + 1 + 2 * p.sum.to_string().len()),
                );
                lengths.push(1 + 23 + 32 + 20);
                lengths
            })
            .collect();
        let (mut path_t, mut limit_t, mut doc_t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..15 {
            let t = Instant::now();
            for c in &picks {
                let d = &c.document;
                let l = leaf(
                    TreeKind::Liabilities,
                    &d.liabilities.salt,
                    &d.ledger_id,
                    d.liabilities.amount,
                )
                .unwrap();
                verify_path(
                    TreeKind::Liabilities,
                    &l,
                    d.liabilities.index,
                    count,
                    &d.liabilities.path,
                    &root,
                )
                .unwrap();
            }
            path_t.push(t.elapsed() / 200);
            let t = Instant::now();
            for lengths in &limits {
                black_box(hashing_limit(black_box(lengths)));
            }
            limit_t.push(t.elapsed() / 200);
            let t = Instant::now();
            for c in picks.iter().take(20) {
                let me = CustomerId::parse(&c.customer_id).unwrap();
                let r = verify_proof(
                    &c.document,
                    Checker::Customer(&me),
                    Some(&s.public_key),
                    None,
                );
                assert!(r.ok);
            }
            doc_t.push(t.elapsed() / 20);
        }
        let ratio = median_ratio(&limit_t, &path_t);
        let (p, l, d) = (median(path_t), median(limit_t), median(doc_t));
        println!(
            "| {n} | {mean_len:.1} | {:.2} | {:.2} | {ratio:.2} | {:.1} |",
            p.as_secs_f64() * 1e6,
            l.as_secs_f64() * 1e6,
            d.as_secs_f64() * 1e6
        );
    }
}
