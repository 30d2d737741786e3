//! Fixtures shared by the fuzz targets: a signing key, a signed tree head
//! and a genuine receipt, so the fuzzer starts from inputs that pass and
//! explores what lies just beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::amount::Amount;
use bvs_core::derive::{self, DerivedDelta};
use bvs_core::hash::{item_hash, DeltaContent, Hash32};
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use bvs_core::note;
use bvs_core::receipt::{ProvenItem, Receipt, ReceiptProof, ReceiptVerification};
use bvs_core::time::format_iso_ms;
use bvs_core::types::Period;

pub const ORIGIN: &str = "bvs.example/log/sandbox";
pub const SEED: [u8; 32] = [9; 32];
const T0: i64 = 1_795_323_400_123;

/// The verifier key of `SEED` under `ORIGIN`.
pub fn public_key() -> String {
    note::public_key_string(ORIGIN, &SEED).expect("valid origin")
}

/// A signed tree head of size 3 over three fixed items.
pub fn signed_head() -> String {
    let items: Vec<Hash32> = (0..3u8).map(|i| Hash32::digest(&[i])).collect();
    note::sign_tree_head(ORIGIN, TreeSize(3), &merkle::root(&items), &SEED).expect("sign")
}

/// Replaces bytes of `base` as `patch` says: each 3-byte group is a
/// (big-endian u16 position, new byte) edit. Keeps the result UTF-8 lossy.
pub fn patched(base: &str, patch: &[u8]) -> String {
    let mut bytes = base.as_bytes().to_vec();
    for edit in patch.chunks_exact(3) {
        if bytes.is_empty() {
            break;
        }
        let pos = usize::from(u16::from_be_bytes([edit[0], edit[1]])) % bytes.len();
        bytes[pos] = edit[2];
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A genuine receipt (as the worker builds one) as JSON text.
pub fn receipt_json() -> String {
    let mut log_items: Vec<Hash32> = (0..5u64)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let amounts = ["100", "-0.1", "12.345"];
    let mut contents = Vec::new();
    let mut leaf_of = Vec::new();
    for (k, a) in amounts.iter().enumerate() {
        let content = DeltaContent {
            anchor_id: format!("anc_{k}"),
            customer_id: "cust_42".into(),
            delta: Amount::parse(a).unwrap(),
            reason: format!("reason {k}"),
            reference_id: (k % 2 == 0).then(|| format!("ref-{k}")),
            metadata: (k == 1).then(|| bvs_core::json::parse(r#"{"invoice": 17}"#).expect("JSON")),
            declared_timestamp: format_iso_ms(T0 + k as i64),
        };
        leaf_of.push(log_items.len() as u64);
        log_items.push(item_hash(&content).unwrap());
        contents.push(content);
    }
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
        deltas.push(DerivedDelta {
            anchor_id: c.anchor_id.clone(),
            item_hash: h,
            items_root: merkle::root(&[h]),
            receipt_id: merkle::root(&[h]),
            delta: c.delta,
            reason: Some(c.reason.clone()),
            reference_id: c.reference_id.clone(),
            window: Period::containing(T0),
            declared_timestamp: T0 + k as i64,
            block_timestamp: T0 + 1000,
            data_purged: false,
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
            raw: Some(c.clone()),
        });
    }
    let hashes: Vec<Hash32> = deltas.iter().map(|d| d.item_hash).collect();
    let items_root = merkle::root(&hashes);
    let receipt = Receipt {
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
            message: "fuzz fixture".into(),
            item_hashes: hashes,
            proof_root: items_root,
            verify_url: format!("/api/v1/verify/{items_root}"),
        },
        proof: ReceiptProof {
            tree_head,
            public_key: public_key(),
            items,
        },
    };
    serde_json::to_string(&receipt).unwrap()
}
