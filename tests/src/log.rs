//! The public log, checked with `core` the way an auditor would: the
//! verifier key, hash lists, inclusion and consistency proofs, receipts.

use bvs_core::log;
use bvs_core::merkle::{LeafIndex, TreeSize};
use bvs_core::note::TreeHead;
use bvs_core::verify::{verify_consistency_between_heads, verify_receipt_json};
use bvs_core::Hash32;
use serde_json::Value;

use crate::client::{Api, Reply};

/// The sandbox log's verifier key.
pub fn log_key(api: &Api) -> String {
    let r = api.get("/api/v1/log/sandbox/key");
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["verifierKey"]
        .as_str()
        .unwrap_or_else(|| panic!("no verifierKey: {}", r.text))
        .to_string()
}

/// One hex hash from a JSON string.
pub fn hash(v: &Value) -> Hash32 {
    v.as_str()
        .and_then(|h| Hash32::parse(h).ok())
        .unwrap_or_else(|| panic!("not a hash: {v}"))
}

/// A JSON array of hex hashes (an inclusion or consistency proof).
pub fn hashes(v: &Value) -> Vec<Hash32> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a hash list: {v}"))
        .iter()
        .map(hash)
        .collect()
}

/// Checks that `item` is at `leaf_index` under `head`, by the JSON
/// `inclusionProof` list, over the log's tagged leaves (`bvs-log-v1`).
pub fn check_inclusion(proof: &Value, leaf_index: &Value, head: &TreeHead, item: &Hash32) {
    let index = leaf_index
        .as_u64()
        .unwrap_or_else(|| panic!("not a leaf index: {leaf_index}"));
    log::HASH_SCHEME
        .verify_inclusion(
            &hashes(proof),
            LeafIndex(index),
            head.size,
            &head.root,
            item,
        )
        .unwrap_or_else(|e| panic!("leaf {index} of {:?}: {e:?}", head.size));
}

/// Fetches the consistency proof from tree size `from` to `to` and checks
/// it, with both signed heads, against `key`.
pub fn check_consistency(api: &Api, key: &str, from: u64, to: u64) {
    let r = api.get(&format!(
        "/api/v1/log/sandbox/proof/consistency?from={from}&to={to}"
    ));
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    let note = |name: &str| {
        d[name]
            .as_str()
            .unwrap_or_else(|| panic!("no {name}: {}", r.text))
    };
    let (old, new) = verify_consistency_between_heads(
        note("fromTreeHead"),
        note("toTreeHead"),
        &hashes(&d["consistencyProof"]),
        key,
    )
    .unwrap_or_else(|e| panic!("{from}→{to}: {e:?}"));
    assert_eq!((old.size, new.size), (TreeSize(from), TreeSize(to)));
}

/// Checks a receipt reply with core, on the server's exact bytes.
pub fn check_receipt(r: &Reply, key: &str) {
    let report = verify_receipt_json(r.raw_data(), Some(key));
    assert!(
        report.ok,
        "{:#?}",
        report.checks.iter().filter(|c| !c.ok).collect::<Vec<_>>()
    );
}
