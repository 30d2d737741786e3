//! Proofs and notes that must fail, each for its precise reason.
//! (A client that accepts a falsified proof is the bug class of immudb's
//! GHSA-672p; every row here is a way to try it.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::merkle::{self, LeafIndex, ProofError, TreeSize};
use bvs_core::note::{self, NoteError};
use bvs_core::verify::{self, HeadsError};

const ORIGIN: &str = "bvs.example/log/production";
const SEED: [u8; 32] = [42; 32];
const OTHER_SEED: [u8; 32] = [43; 32];

fn items(n: usize) -> Vec<Hash32> {
    (0..n as u64)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect()
}

struct InclusionCase {
    name: &'static str,
    proof: Vec<Hash32>,
    index: u64,
    size: u64,
    root: Hash32,
    item: Hash32,
    want: ProofError,
}

fn inclusion_cases() -> Vec<InclusionCase> {
    let it = items(11);
    let root = merkle::root(&it);
    let proof = |i: u64| merkle::inclusion_proof(&it, LeafIndex(i)).unwrap();
    let good = proof(5); // leaf 5 of 11: path length 4
    let base = |name, proof: Vec<Hash32>, want| InclusionCase {
        name,
        proof,
        index: 5,
        size: 11,
        root,
        item: it[5],
        want,
    };
    let mut flipped = good.clone();
    flipped[1].0[7] ^= 0x01;
    let mut swapped = good.clone();
    swapped.swap(0, 1);
    let mut extended = good.clone();
    extended.push(it[0]);
    let mut other_root = root;
    other_root.0[31] ^= 0x80;
    vec![
        base(
            "flipped byte in the path",
            flipped,
            ProofError::RootMismatch,
        ),
        base("path hashes swapped", swapped, ProofError::RootMismatch),
        base(
            "truncated path",
            good[..3].to_vec(),
            ProofError::WrongPathLength {
                expected: 4,
                got: 3,
            },
        ),
        base(
            "extended path",
            extended,
            ProofError::WrongPathLength {
                expected: 4,
                got: 5,
            },
        ),
        base(
            "empty path",
            vec![],
            ProofError::WrongPathLength {
                expected: 4,
                got: 0,
            },
        ),
        InclusionCase {
            index: 4,
            ..base(
                "wrong index, same path length",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        InclusionCase {
            index: 11,
            ..base(
                "index equal to size",
                good.clone(),
                ProofError::IndexOutOfRange {
                    index: 11,
                    size: 11,
                },
            )
        },
        InclusionCase {
            index: u64::MAX,
            ..base(
                "index far beyond size",
                good.clone(),
                ProofError::IndexOutOfRange {
                    index: u64::MAX,
                    size: 11,
                },
            )
        },
        // RFC 9162 paths do not bind the size alone: leaf 5's path is the
        // same for every size 9..=16, so (size 12, root of 11) would pass.
        // That is why sizes and roots are only trusted as a signed pair;
        // with the real root of a 12-leaf tree the proof fails.
        InclusionCase {
            size: 12,
            root: merkle::root(&items(12)),
            ..base(
                "wrong tree size, same path length",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        InclusionCase {
            size: 6,
            ..base(
                "wrong tree size, other path length",
                good.clone(),
                ProofError::WrongPathLength {
                    expected: 2,
                    got: 4,
                },
            )
        },
        InclusionCase {
            size: 0,
            ..base("empty tree", good.clone(), ProofError::EmptyTree)
        },
        InclusionCase {
            item: it[6],
            ..base(
                "proof for a different leaf",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        InclusionCase {
            index: 6,
            item: it[6],
            ..base(
                "another leaf's proof reused",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        InclusionCase {
            root: other_root,
            ..base(
                "root with a flipped bit",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        InclusionCase {
            item: merkle::leaf_hash(&it[5]),
            ..base(
                "leaf hash passed as item (second preimage try)",
                good.clone(),
                ProofError::RootMismatch,
            )
        },
        // An interior node presented as a leaf: node 0..2 is H(1||l0||l1);
        // with domain separation it cannot pass as a leaf of a smaller tree.
        InclusionCase {
            proof: proof(2)[1..].to_vec(),
            index: 0,
            size: 10,
            item: merkle::node_hash(&merkle::leaf_hash(&it[0]), &merkle::leaf_hash(&it[1])),
            ..base(
                "interior node as a leaf",
                vec![],
                ProofError::WrongPathLength {
                    expected: 4,
                    got: 3,
                },
            )
        },
    ]
}

#[test]
fn every_bad_inclusion_proof_fails_for_its_reason() {
    for c in inclusion_cases() {
        let got = merkle::verify_inclusion_of_leaf_hash(
            &c.proof,
            LeafIndex(c.index),
            TreeSize(c.size),
            &c.root,
            &merkle::leaf_hash(&c.item),
        );
        assert_eq!(got, Err(c.want.clone()), "case: {}", c.name);
    }
}

#[test]
fn every_single_bit_flip_of_a_good_proof_fails() {
    let it = items(11);
    let root = merkle::root(&it);
    for i in 0..11u64 {
        let good = merkle::inclusion_proof(&it, LeafIndex(i)).unwrap();
        assert_eq!(
            merkle::verify_inclusion_of_leaf_hash(
                &good,
                LeafIndex(i),
                TreeSize(11),
                &root,
                &merkle::leaf_hash(&it[i as usize])
            ),
            Ok(())
        );
        for k in 0..good.len() {
            for bit in 0..256 {
                let mut bad = good.clone();
                bad[k].0[bit / 8] ^= 1 << (bit % 8);
                assert_eq!(
                    merkle::verify_inclusion_of_leaf_hash(
                        &bad,
                        LeafIndex(i),
                        TreeSize(11),
                        &root,
                        &merkle::leaf_hash(&it[i as usize])
                    ),
                    Err(ProofError::RootMismatch)
                );
            }
        }
    }
}

struct ConsistencyCase {
    name: &'static str,
    proof: Vec<Hash32>,
    old: u64,
    old_root: Hash32,
    new: u64,
    new_root: Hash32,
    want: ProofError,
}

/// The root of the log holding `items` (its leaves are tagged: `bvs-log-v1`).
fn log_root(items: &[Hash32]) -> Hash32 {
    bvs_core::log::HASH_SCHEME.log_root(items)
}

fn consistency_proof(all: &[Hash32], m: usize) -> Vec<Hash32> {
    let mut store = bvs_core::log::StoredHashes::new();
    let plan = bvs_core::log::indexes_for_append(TreeSize(0), all.len() as u64).unwrap();
    assert!(plan.is_empty());
    for (k, v) in bvs_core::log::append(TreeSize(0), all, &store.clone()).unwrap() {
        store.insert(k, v);
    }
    bvs_core::log::consistency_proof(TreeSize(m as u64), TreeSize(all.len() as u64), &store)
        .unwrap()
}

#[test]
fn every_bad_consistency_proof_fails_for_its_reason() {
    let it = items(13);
    let (r6, r13) = (log_root(&it[..6]), log_root(&it));
    let good = consistency_proof(&it, 6);
    assert_eq!(
        merkle::verify_consistency(&good, TreeSize(6), &r6, TreeSize(13), &r13),
        Ok(())
    );
    let base = |name, proof: Vec<Hash32>, want| ConsistencyCase {
        name,
        proof,
        old: 6,
        old_root: r6,
        new: 13,
        new_root: r13,
        want,
    };
    let mut flipped_first = good.clone();
    flipped_first[0].0[0] ^= 1;
    let mut flipped_last = good.clone();
    let last = flipped_last.len() - 1;
    flipped_last[last].0[0] ^= 1;
    let mut extended = good.clone();
    extended.push(it[0]);
    // A rewritten history: same sizes, one old item changed.
    let mut forged = it.clone();
    forged[2].0[0] ^= 1;
    let cases = vec![
        base(
            "flipped byte, old-side hash",
            flipped_first,
            ProofError::OldRootMismatch,
        ),
        base(
            "flipped byte, new-side hash",
            flipped_last,
            ProofError::NewRootMismatch,
        ),
        base(
            "truncated",
            good[..good.len() - 1].to_vec(),
            ProofError::WrongPathLength {
                expected: good.len(),
                got: good.len() - 1,
            },
        ),
        base(
            "extended",
            extended,
            ProofError::WrongPathLength {
                expected: good.len(),
                got: good.len() + 1,
            },
        ),
        ConsistencyCase {
            old: 14,
            ..base(
                "old larger than new",
                good.clone(),
                ProofError::OldSizeLarger { old: 14, new: 13 },
            )
        },
        ConsistencyCase {
            old: 5,
            old_root: log_root(&it[..5]),
            ..base(
                "wrong old size",
                good.clone(),
                ProofError::WrongPathLength {
                    expected: 5,
                    got: 4,
                },
            )
        },
        ConsistencyCase {
            new_root: log_root(&forged),
            ..base(
                "new tree rewrote an old item",
                good.clone(),
                ProofError::NewRootMismatch,
            )
        },
        ConsistencyCase {
            old_root: log_root(&forged[..6]),
            ..base(
                "old root of another history",
                good.clone(),
                ProofError::OldRootMismatch,
            )
        },
        ConsistencyCase {
            old: 13,
            old_root: r13,
            new_root: log_root(&forged),
            ..base(
                "equal sizes, different roots",
                vec![],
                ProofError::EqualSizeRootsDiffer { size: 13 },
            )
        },
        ConsistencyCase {
            old: 0,
            old_root: r6,
            ..base(
                "empty old tree with a non-empty root",
                vec![],
                ProofError::OldRootMismatch,
            )
        },
    ];
    for c in cases {
        let got = merkle::verify_consistency(
            &c.proof,
            TreeSize(c.old),
            &c.old_root,
            TreeSize(c.new),
            &c.new_root,
        );
        assert_eq!(got, Err(c.want.clone()), "case: {}", c.name);
    }
}

fn signed(size: u64, root: &Hash32) -> String {
    note::sign_tree_head(ORIGIN, TreeSize(size), root, &SEED).unwrap()
}

/// Signs arbitrary note text with the real key (a buggy or hostile server).
fn sign_text(text: &str, origin: &str, seed: &[u8; 32]) -> String {
    use ed25519_dalek::{Signer, SigningKey};
    let key = SigningKey::from_bytes(seed);
    let mut pubkey = vec![1u8];
    pubkey.extend_from_slice(key.verifying_key().as_bytes());
    let id = signed_note::key_id(origin, &pubkey);
    let sig = key.sign(text.as_bytes());
    let mut blob = id.to_be_bytes().to_vec();
    blob.extend_from_slice(&sig.to_bytes());
    use base64::Engine;
    format!(
        "{text}\n— {origin} {}\n",
        base64::engine::general_purpose::STANDARD.encode(blob)
    )
}

#[test]
fn every_bad_tree_head_fails_for_its_reason() {
    let key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let root = Hash32::digest(b"root");
    let good = signed(7, &root);
    assert!(note::verify_tree_head(&good, &key).is_ok());
    let b64root = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(root.0)
    };
    let other_key_same_name =
        note::sign_tree_head(ORIGIN, TreeSize(7), &root, &OTHER_SEED).unwrap();
    let sandbox_key = note::public_key_string("bvs.example/log/sandbox", &SEED).unwrap();
    let cases: Vec<(&str, String, String, NoteError)> = vec![
        (
            "signature by another key",
            other_key_same_name,
            key.clone(),
            NoteError::NoTrustedSignature {
                key_name: ORIGIN.into(),
                key_id: 0,
            },
        ),
        (
            "tampered size",
            good.replacen("\n7\n", "\n8\n", 1),
            key.clone(),
            NoteError::InvalidSignature,
        ),
        (
            "tampered root",
            good.replacen(
                &b64root,
                &{
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD.encode(Hash32::EMPTY.0)
                },
                1,
            ),
            key.clone(),
            NoteError::InvalidSignature,
        ),
        (
            "extra line inserted in the signed text",
            good.replacen(&format!("{b64root}\n"), &format!("{b64root}\nextra\n"), 1),
            key.clone(),
            NoteError::InvalidSignature,
        ),
        (
            "extra line, validly signed",
            sign_text(&format!("{ORIGIN}\n7\n{b64root}\nextra\n"), ORIGIN, &SEED),
            key.clone(),
            NoteError::ExtraLines,
        ),
        (
            "extra line after the signatures",
            format!("{good}extra\n"),
            key.clone(),
            NoteError::Malformed("malformed note".into()),
        ),
        (
            "missing final newline",
            good.trim_end().to_string(),
            key.clone(),
            NoteError::Malformed("malformed note".into()),
        ),
        (
            "origin of another log, validly signed",
            sign_text(
                &format!("bvs.example/log/sandbox\n7\n{b64root}\n"),
                ORIGIN,
                &SEED,
            ),
            key.clone(),
            NoteError::OriginMismatch {
                expected: ORIGIN.into(),
                got: "bvs.example/log/sandbox".into(),
            },
        ),
        (
            "head of the sandbox log checked with the production key",
            note::sign_tree_head("bvs.example/log/sandbox", TreeSize(7), &root, &SEED).unwrap(),
            key.clone(),
            NoteError::NoTrustedSignature {
                key_name: ORIGIN.into(),
                key_id: 0,
            },
        ),
        (
            "production head checked with the sandbox key",
            good.clone(),
            sandbox_key,
            NoteError::NoTrustedSignature {
                key_name: "bvs.example/log/sandbox".into(),
                key_id: 0,
            },
        ),
        (
            "size with a leading zero",
            sign_text(&format!("{ORIGIN}\n07\n{b64root}\n"), ORIGIN, &SEED),
            key.clone(),
            NoteError::Malformed("body is not origin, size and base64 root lines".into()),
        ),
        (
            "malformed key",
            good.clone(),
            "not-a-key".into(),
            NoteError::MalformedKey("malformed verifier key".into()),
        ),
        (
            "oversized note",
            "x".repeat(note::NOTE_BYTES_MAX + 1),
            key.clone(),
            NoteError::TooLarge {
                max: note::NOTE_BYTES_MAX,
            },
        ),
    ];
    for (name, text, key, want) in cases {
        let got = note::verify_tree_head(&text, &key);
        // Key ids are derived values; compare the variant and the names.
        match (&got, &want) {
            (
                Err(NoteError::NoTrustedSignature { key_name: g, .. }),
                NoteError::NoTrustedSignature { key_name: w, .. },
            ) => {
                assert_eq!(g, w, "case: {name}");
            }
            _ => assert_eq!(got, Err(want), "case: {name}"),
        }
    }
}

#[test]
fn heads_that_rewrite_history_are_caught() {
    let key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let it = items(20);
    let old = signed(9, &log_root(&it[..9]));
    let new = signed(20, &log_root(&it));
    let proof = consistency_proof(&it, 9);
    assert!(verify::verify_consistency_between_heads(&old, &new, &proof, &key).is_ok());

    let mut forged = it.clone();
    forged[3].0[5] ^= 1;
    let forged_new = signed(20, &log_root(&forged));
    assert_eq!(
        verify::verify_consistency_between_heads(&old, &forged_new, &proof, &key),
        Err(HeadsError::Proof(ProofError::NewRootMismatch))
    );
    let forged_proof = consistency_proof(&forged, 9);
    assert_eq!(
        verify::verify_consistency_between_heads(&old, &forged_new, &forged_proof, &key),
        Err(HeadsError::Proof(ProofError::OldRootMismatch))
    );
    assert_eq!(
        verify::verify_consistency_between_heads(&new, &old, &proof, &key),
        Err(HeadsError::Proof(ProofError::OldSizeLarger {
            old: 20,
            new: 9
        }))
    );
    let other = note::sign_tree_head(ORIGIN, TreeSize(20), &log_root(&it), &OTHER_SEED).unwrap();
    assert!(matches!(
        verify::verify_consistency_between_heads(&old, &other, &proof, &key),
        Err(HeadsError::NewHead(NoteError::NoTrustedSignature { .. }))
    ));
}

#[test]
fn a_submission_root_must_match_its_items() {
    let it = items(4);
    let root = merkle::root(&it);
    assert_eq!(verify::verify_submission(&it, &root), Ok(()));
    let mut reordered = it.clone();
    reordered.swap(0, 1);
    assert_eq!(
        verify::verify_submission(&reordered, &root),
        Err(ProofError::RootMismatch)
    );
    assert_eq!(
        verify::verify_submission(&it[..3], &root),
        Err(ProofError::RootMismatch)
    );
    let mut dup = it.clone();
    dup.push(it[3]);
    assert_eq!(
        verify::verify_submission(&dup, &root),
        Err(ProofError::RootMismatch)
    );
}
