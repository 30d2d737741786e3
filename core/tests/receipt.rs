//! A receipt built the way the worker builds one verifies; every tampering
//! fails a named check.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::amount::Amount;
use bvs_core::conditions::{Conditions, Failed, Position, Refusal};
use bvs_core::derive::{self, DerivedDelta};
use bvs_core::hash::Hash32;
use bvs_core::item::{item_hash, DeltaContent};
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use bvs_core::note;
use bvs_core::receipt::{ProvenItem, ProvenRefusal, Receipt, ReceiptProof, ReceiptVerification};
use bvs_core::time::format_iso_ms;
use bvs_core::types::Period;
use bvs_core::verify::{verify_receipt, verify_receipt_json, VerificationReport};

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [9; 32];
const T0: i64 = 1_795_323_400_123; // 2026-11-22T04:56:40.123Z

fn build_receipt(purge_first: bool) -> Receipt {
    build(purge_first, false)
}

/// The refused debit the log of [`build`] holds in place of its third
/// noise item: -500 with `balanceAtLeast: 0`, met after three deltas.
fn refusal() -> Refusal {
    Refusal {
        item_hash: Hash32::digest(b"the refused debit's content"),
        customer_id: "cust_42".into(),
        asset: bvs_core::types::Asset::Default,
        delta: Amount::parse("-500").unwrap(),
        failed: Failed::Floor {
            balance_at_least: Amount::ZERO,
            tenant_default: false,
        },
        at: Position {
            sequence: 3,
            balance: Amount::parse("109.7").unwrap(),
        },
    }
}

fn build(purge_first: bool, refused: bool) -> Receipt {
    // Other tenants' items come first in the shared log.
    let mut log_items: Vec<Hash32> = (0..37u64)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let amounts = ["100", "-0.1", "-0.2", "12.345", "-4.25"];
    let mut contents = Vec::new();
    let mut leaf_of = Vec::new();
    for (k, a) in amounts.iter().enumerate() {
        let content = DeltaContent {
            asset: bvs_core::types::Asset::Default,
            conditions: Default::default(),
            anchor_id: format!("anc_{k}"),
            customer_id: "cust_42".into(),
            delta: Amount::parse(a).unwrap(),
            reason: format!("reason {k}"),
            reference_id: (k % 2 == 0).then(|| format!("ref-{k}")),
            metadata: (k == 3)
                .then(|| bvs_core::json::parse(r#"{"invoice": 17, "lines": [1.5, "x"]}"#).unwrap()),
            declared_timestamp: format_iso_ms(T0 + k as i64),
        };
        leaf_of.push(log_items.len() as u64);
        log_items.push(item_hash(&content).unwrap());
        if refused && k == 2 {
            log_items.push(refusal().hash());
        } else {
            log_items.push(Hash32::digest(format!("noise {k}").as_bytes()));
        }
        contents.push(content);
    }
    let refusal_leaf = leaf_of[2] + 1;
    let mut store = StoredHashes::new();
    for (k, v) in log::append(TreeSize(0), &log_items, &StoredHashes::new()).unwrap() {
        store.insert(k, v);
    }
    let size = TreeSize(log_items.len() as u64);
    let root = log::tree_root(size, &store).unwrap();
    let tree_head = note::sign_tree_head(ORIGIN, size, &root, &SEED).unwrap();

    let mut deltas = Vec::new();
    let mut items = Vec::new();
    let mut balance = Amount::parse("10").unwrap();
    for (k, c) in contents.iter().enumerate() {
        let h = item_hash(c).unwrap();
        balance = balance.checked_add(c.delta).unwrap();
        let purged = purge_first && k == 0;
        deltas.push(DerivedDelta {
            anchor_id: c.anchor_id.clone(),
            item_hash: h,
            items_root: merkle::root(&[h]),
            receipt_id: merkle::root(&[h]),
            delta: c.delta,
            reason: (!purged).then(|| c.reason.clone()),
            reference_id: if purged { None } else { c.reference_id.clone() },
            window: Period::containing(T0),
            declared_timestamp: T0 + k as i64,
            block_timestamp: T0 + 1000,
            data_purged: purged,
            verified: true,
            seq: k as u64 + 1,
            balance_after: balance,
        });
        items.push(ProvenItem {
            anchor_id: c.anchor_id.clone(),
            item_hash: h,
            leaf_index: LeafIndex(leaf_of[k]),
            inclusion_proof: log::inclusion_proof(LeafIndex(leaf_of[k]), size, &store).unwrap(),
            delta: c.delta,
            raw: (!purged).then(|| c.clone()),
        });
    }
    let hashes: Vec<Hash32> = deltas.iter().map(|d| d.item_hash).collect();
    let items_root = merkle::root(&hashes);
    Receipt {
        asset: bvs_core::types::Asset::Default,
        customer_id: "cust_42".into(),
        period: Some("2026-11".into()),
        generated_at: format_iso_ms(T0 + 5000),
        deltas_count: deltas.len() as u64,
        starting_balance: Amount::parse("10").unwrap(),
        final_balance: balance,
        items_root,
        receipt_id: items_root,
        proof_root: items_root,
        latest_checkpoint: Some(items_root.to_string()),
        window_summaries: derive::window_summaries(&deltas).unwrap(),
        deltas,
        verification: ReceiptVerification {
            message: "Verify with the public key of the sandbox log".into(),
            item_hashes: hashes,
            proof_root: items_root,
            verify_url: format!("/api/v1/verify/{items_root}"),
        },
        proof: ReceiptProof {
            hash_scheme: log::HASH_SCHEME.name().into(),
            tree_head,
            public_key: note::public_key_string(ORIGIN, &SEED).unwrap(),
            items,
            witnessed: None,
        },
        log: None,
        agreement: None,
        refusals: if refused {
            let r = refusal();
            vec![ProvenRefusal {
                anchor_id: "anc_refused".into(),
                item_hash: r.item_hash,
                delta: r.delta,
                code: "balance_below_floor".into(),
                condition: Conditions {
                    balance_at_least: Some(Amount::ZERO),
                    expected_sequence: None,
                },
                sequence: 3,
                balance: r.at.balance,
                tenant_default: false,
                refusal_hash: r.hash(),
                leaf_index: LeafIndex(refusal_leaf),
                inclusion_proof: log::inclusion_proof(LeafIndex(refusal_leaf), size, &store)
                    .unwrap(),
            }]
        } else {
            Vec::new()
        },
        starting_sequence: refused.then_some(0),
    }
}

#[test]
fn a_receipt_with_a_refusal_verifies_and_each_tampering_fails_by_name() {
    let key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let receipt = build(false, true);
    let json = serde_json::to_string(&receipt).unwrap();
    let report = verify_receipt_json(&json, Some(&key));
    assert!(report.ok, "{:#?}", report.first_failure());
    assert!(report
        .checks
        .iter()
        .any(|c| c.name == "refusals[0].position" && c.ok));
    let tampered = |f: &dyn Fn(&mut Receipt)| {
        let mut r = build(false, true);
        f(&mut r);
        failed(&verify_receipt(&r, Some(&key)))
    };
    // Another amount, balance or condition: the refusal hashes apart.
    assert!(
        tampered(&|r| r.refusals[0].delta = Amount::parse("-5").unwrap())
            .contains(&"refusals[0].refusalHash".to_string())
    );
    // A balance it did not meet (rehashed to match): the deltas before it
    // add up to something else.
    let moved = tampered(&|r| {
        r.refusals[0].balance = Amount::parse("600").unwrap();
        let mut item = refusal();
        item.at.balance = r.refusals[0].balance;
        r.refusals[0].refusal_hash = item.hash();
    });
    assert!(
        moved.contains(&"refusals[0].position".to_string()),
        "{moved:?}"
    );
    // Not in the log.
    assert!(tampered(&|r| r.refusals[0].leaf_index = LeafIndex(0))
        .contains(&"refusals[0].inclusion".to_string()));
    // A refused delta counted among the deltas.
    let counted = tampered(&|r| r.refusals[0].item_hash = r.deltas[1].item_hash);
    assert!(
        counted.contains(&"refusals[0].position".to_string()),
        "{counted:?}"
    );
    // Without startingSequence a period receipt cannot place it.
    assert!(tampered(&|r| r.starting_sequence = None).contains(&"refusals[0].position".to_string()));
}

fn failed(report: &VerificationReport) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn a_genuine_receipt_verifies_through_json() {
    let receipt = build_receipt(false);
    let key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let json = serde_json::to_string_pretty(&receipt).unwrap();
    let report = verify_receipt_json(&json, Some(&key));
    assert!(report.ok, "{:#?}", report.first_failure());
    assert!(report
        .checks
        .iter()
        .any(|c| c.name == "deltas[3].itemHash" && c.detail.starts_with("recomputed")));
    // The JSON uses the spec's field names and exact numbers.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for f in [
        "customerId",
        "period",
        "generatedAt",
        "deltasCount",
        "startingBalance",
        "finalBalance",
        "itemsRoot",
        "receiptId",
        "proofRoot",
        "deltas",
        "verification",
        "proof",
    ] {
        assert!(v.get(f).is_some(), "{f}");
    }
    assert!(json.contains("\"finalBalance\": 117.795"), "{json}");
    assert!(v["proof"]["items"][0].get("inclusionProof").is_some());
}

#[test]
fn purged_raw_data_is_skipped_not_failed() {
    let report = verify_receipt(&build_receipt(true), None);
    assert!(report.ok, "{:#?}", report.first_failure());
    let c = report
        .checks
        .iter()
        .find(|c| c.name == "deltas[0].itemHash")
        .unwrap();
    assert!(c.detail.contains("purged"));
    assert!(report
        .checks
        .iter()
        .find(|c| c.name == "publicKey")
        .unwrap()
        .detail
        .contains("not pinned"));
}

#[test]
fn each_tampering_fails_its_check() {
    let key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let other_key = note::public_key_string(ORIGIN, &[1; 32]).unwrap();
    type Tamper = fn(&mut Receipt);
    let cases: Vec<(&str, Tamper, &[&str])> = vec![
        (
            "final balance inflated",
            |r| {
                r.final_balance = r
                    .final_balance
                    .checked_add(Amount::parse("0.01").unwrap())
                    .unwrap()
            },
            &["finalBalance"],
        ),
        (
            "starting balance changed",
            |r| r.starting_balance = Amount::ZERO,
            &["finalBalance"],
        ),
        (
            "a delta amount changed",
            |r| r.deltas[1].delta = Amount::parse("-1").unwrap(),
            &["deltas[1].proofItem", "deltas[1].itemHash", "finalBalance"],
        ),
        (
            "raw reason edited",
            |r| r.proof.items[2].raw.as_mut().unwrap().reason.push('!'),
            &["deltas[2].itemHash"],
        ),
        (
            "raw metadata edited",
            |r| {
                r.proof.items[3].raw.as_mut().unwrap().metadata =
                    Some(bvs_core::json::parse(r#"{"invoice": 18}"#).unwrap())
            },
            &["deltas[3].itemHash"],
        ),
        (
            "a delta dropped",
            |r| {
                r.deltas.remove(4);
                r.proof.items.remove(4);
            },
            &[
                "itemsRoot",
                "receiptId",
                "proofRoot",
                "verification.proofRoot",
                "verification.itemHashes",
                "deltasCount",
                "finalBalance",
            ],
        ),
        (
            "deltas reordered",
            |r| {
                r.deltas.swap(0, 1);
                r.proof.items.swap(0, 1);
            },
            &[
                "itemsRoot",
                "receiptId",
                "proofRoot",
                "verification.proofRoot",
                "verification.itemHashes",
            ],
        ),
        (
            "wrong leaf index",
            |r| r.proof.items[0].leaf_index = LeafIndex(r.proof.items[0].leaf_index.0 + 2),
            &["deltas[0].inclusion"],
        ),
        (
            "proof hash flipped",
            |r| r.proof.items[1].inclusion_proof[0].0[0] ^= 1,
            &["deltas[1].inclusion"],
        ),
        (
            "tree head size edited",
            |r| r.proof.tree_head = r.proof.tree_head.replacen("\n47\n", "\n48\n", 1),
            &[
                "treeHead",
                "deltas[0].inclusion",
                "deltas[1].inclusion",
                "deltas[2].inclusion",
                "deltas[3].inclusion",
                "deltas[4].inclusion",
            ],
        ),
        (
            "deltasCount edited",
            |r| r.deltas_count += 1,
            &["deltasCount"],
        ),
    ];
    for (name, tamper, want) in cases {
        let mut r = build_receipt(false);
        tamper(&mut r);
        let report = verify_receipt(&r, Some(&key));
        assert!(!report.ok, "case {name}");
        assert_eq!(
            failed(&report),
            want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "case {name}"
        );
    }
    // Re-signed by another key: the pinned key catches it, the unpinned one cannot.
    let mut r = build_receipt(false);
    let head = note::verify_tree_head(&r.proof.tree_head, &key).unwrap();
    r.proof.tree_head = note::sign_tree_head(ORIGIN, head.size, &head.root, &[1; 32]).unwrap();
    r.proof.public_key = other_key;
    assert_eq!(
        failed(&verify_receipt(&r, Some(&key))),
        vec![
            "publicKey",
            "treeHead",
            "deltas[0].inclusion",
            "deltas[1].inclusion",
            "deltas[2].inclusion",
            "deltas[3].inclusion",
            "deltas[4].inclusion"
        ]
    );
    assert!(verify_receipt(&r, None).ok);
}

#[test]
fn garbage_is_a_parse_failure_not_a_panic() {
    for text in [
        "",
        "{}",
        "[]",
        "null",
        "{\"deltas\": 5}",
        &"[".repeat(10_000),
    ] {
        let report = verify_receipt_json(text, None);
        assert!(!report.ok);
        assert_eq!(report.checks[0].name, "parse");
    }
}
