//! A thin wasm-bindgen face over `bvs_core`'s verification: no logic here.
//!
//! Inputs are plain strings, and lists of hashes as JSON text (a proof
//! exactly as the API's `inclusionProof` or `consistencyProof` field reads,
//! e.g. `JSON.stringify(proof)`: one string crosses into WebAssembly, not
//! one per hash);
//! every function that checks something returns a report as JSON text,
//! `{"ok": bool, "checks": [{"name", "ok", "detail"}]}`, and never throws
//! or panics on bad input: what was wrong is a failed check.

use bvs_core::hash::Hash32;
use bvs_core::merkle;
use bvs_core::verify::{self, VerificationReport};
use wasm_bindgen::prelude::wasm_bindgen;

/// In the browser the TLSF allocator (rlsf) stands in for dlmalloc: the
/// same malloc/free contract in a fifth of the code (bench/README.md).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: rlsf::SmallGlobalTlsf = rlsf::SmallGlobalTlsf::new();

/// The verifier's version, so a page can show which build checked a proof.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Largest leaf index or tree size a JavaScript number carries exactly.
const JS_SAFE_INTEGER_MAX: f64 = 9_007_199_254_740_991.0; // Number.MAX_SAFE_INTEGER

fn json(report: &VerificationReport) -> String {
    report.to_json()
}

fn failed(name: &str, detail: String) -> String {
    json(&VerificationReport::failure(name, detail))
}

/// A JSON array of strings (hex hashes, or page texts), read with core's
/// JSON reader.
fn strings(name: &str, what: &str, json_text: &str) -> Result<Vec<String>, String> {
    bvs_core::json::parse_strings(json_text)
        .map_err(|e| format!("{name} must be a JSON array of {what}: {e}"))
}

fn hashes(name: &str, json_text: &str) -> Result<Vec<String>, String> {
    strings(name, "hex strings", json_text)
}

/// A JavaScript number that must be a whole number ≥ 0.
fn whole(name: &str, n: f64) -> Result<u64, String> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= JS_SAFE_INTEGER_MAX {
        Ok(n as u64)
    } else {
        // Not `{n}`: formatting a float would add ~15 KB of WebAssembly.
        Err(format!("{name} must be a whole number from 0 to 2^53-1"))
    }
}

/// `item_hash` is leaf `leaf_index` of the log of `tree_size` leaves with
/// `root`, by the RFC 9162 audit path `proof_json` (a JSON array of hex
/// hashes, leaf side first), the log's leaves hashed by `hash_scheme` (the
/// answer's `hashScheme`, e.g. `bvs-log-v1`; an unknown or empty one is a
/// failed `hashScheme` check, never a guess).
// Exported to JavaScript by the proof-only build only: the served verifier
// checks inclusion within receipts and answers, and makes room for the
// witness checks (bench/README.md, size); Rust callers and tests keep it.
#[cfg_attr(not(feature = "signatures"), wasm_bindgen(js_name = verifyInclusion))]
pub fn verify_inclusion(
    item_hash: &str,
    leaf_index: f64,
    tree_size: f64,
    root: &str,
    proof_json: &str,
    hash_scheme: &str,
) -> String {
    let args = whole("leafIndex", leaf_index)
        .and_then(|i| Ok((i, whole("treeSize", tree_size)?)))
        .and_then(|(i, n)| Ok((i, n, hashes("proof", proof_json)?)));
    match args {
        Ok((i, n, proof)) => json(&verify::inclusion_report(
            item_hash,
            i,
            n,
            root,
            &proof,
            hash_scheme,
        )),
        Err(e) => failed("inclusion", e),
    }
}

/// Longest inclusion proof of any tree with at most 2^64 leaves.
const INCLUSION_PATH_HASHES_MAX: usize = 64;

/// The fast path for bulk checks: the same RFC 9162 inclusion check as
/// [`verify_inclusion`] on raw bytes (`root` and `item` 32 bytes each,
/// `path` the proof's hashes concatenated, 32 bytes each, leaf side first),
/// with no text to parse and no report to build. `true` only if the proof
/// holds; malformed input, and a `hash_scheme` this verifier does not
/// know, are `false`, never a panic. The verify page keeps using
/// [`verify_inclusion`], whose report says what failed.
#[wasm_bindgen(js_name = verifyInclusionBytes)]
pub fn verify_inclusion_bytes(
    leaf_index: f64,
    tree_size: f64,
    root: &[u8],
    item: &[u8],
    path: &[u8],
    hash_scheme: &str,
) -> bool {
    let Ok(scheme) = merkle::HashScheme::parse(hash_scheme) else {
        return false;
    };
    let (Ok(index), Ok(size)) = (whole("leafIndex", leaf_index), whole("treeSize", tree_size))
    else {
        return false;
    };
    let (Ok(root), Ok(item)) = (<[u8; 32]>::try_from(root), <[u8; 32]>::try_from(item)) else {
        return false;
    };
    if !path.len().is_multiple_of(32) || path.len() / 32 > INCLUSION_PATH_HASHES_MAX {
        return false;
    }
    // On the stack: no allocation per call.
    let mut proof = [Hash32::default(); INCLUSION_PATH_HASHES_MAX];
    let k = path.len() / 32;
    for (slot, chunk) in proof.iter_mut().zip(path.chunks_exact(32)) {
        slot.0.copy_from_slice(chunk);
    }
    // The inline halves, so this path compiles at the shim's speed level.
    merkle::verify_inclusion_of_leaf_hash(
        &proof[..k],
        merkle::LeafIndex(index),
        merkle::TreeSize(size),
        &Hash32(root),
        &scheme.leaf_hash(&Hash32(item)),
    )
    .is_ok()
}

/// A submission's `itemsRoot` (= `receiptId`) is the RFC 9162 root over
/// its `itemHashes` (a JSON array of hex hashes) in order.
// Exported by the proof-only build only, as `verifyInclusion`.
#[cfg_attr(not(feature = "signatures"), wasm_bindgen(js_name = verifySubmission))]
pub fn verify_submission(item_hashes_json: &str, items_root: &str) -> String {
    match hashes("itemHashes", item_hashes_json) {
        Ok(h) => json(&verify::submission_report(&h, items_root)),
        Err(e) => failed("itemsRoot", e),
    }
}

/// A receipt (the receipt route's whole answer, or its `data`): key,
/// signed head, recomputed itemHashes, every inclusion proof, roots,
/// counts and the replayed balance. `trusted_key` pins the log's key.
#[cfg(feature = "signatures")]
#[wasm_bindgen(js_name = verifyReceipt)]
pub fn verify_receipt(receipt_json: &str, trusted_key: Option<String>) -> String {
    json(&verify::verify_receipt_document(
        receipt_json,
        trusted_key.as_deref(),
    ))
}

/// As [`verify_receipt`], followed by the checks of the receipt's
/// agreement side (the customer's key binding and signed statements, each
/// with its inclusion proof): core's `agreement::receipt_report`, what
/// `bvs-verify receipt` runs. Only in the SDKs' build (feature
/// `receipt-agreement`).
#[cfg(feature = "receipt-agreement")]
#[wasm_bindgen(js_name = verifyReceiptWithAgreement)]
pub fn verify_receipt_with_agreement(receipt_json: &str, trusted_key: Option<String>) -> String {
    json(&bvs_core::agreement::receipt_report(
        receipt_json,
        trusted_key.as_deref(),
    ))
}

/// A balance as of a moment (derive's whole answer with `asOf`, its
/// `data`, or the `asOf` object; issue 43): core's
/// `verify::verify_as_of_document`, what `bvs-verify as-of` runs. In the
/// SDKs' build and the verify page's second module (`liabilities`), never
/// in the page's own (its size budget).
#[cfg(any(feature = "receipt-agreement", feature = "liabilities"))]
#[wasm_bindgen(js_name = verifyAsOf)]
pub fn verify_as_of(answer_json: &str, trusted_key: Option<String>) -> String {
    json(&verify::verify_as_of_document(
        answer_json,
        trusted_key.as_deref(),
    ))
}

/// A saved document's signed tree head (a receipt, or a liabilities
/// proof) held to a witness policy, C2SP tlog-policy text as the log
/// list's `witnessPolicyText` and `bvs-verify --policy` read it: checks
/// `policy`, `policy.log` (when it lists logs) and `witnesses`, with the
/// trusted key or else the one the document names; every valid
/// cosignature counts whatever its age. Core's
/// `verify::document_witness_report`. The SDKs' `witnessPolicy` (issue
/// 40); only in the SDKs' build.
#[cfg(feature = "receipt-agreement")]
#[wasm_bindgen(js_name = verifyWitnessPolicy)]
pub fn verify_witness_policy(
    document_json: &str,
    trusted_key: Option<String>,
    policy_text: &str,
) -> String {
    json(&verify::document_witness_report(
        document_json,
        trusted_key.as_deref(),
        policy_text,
    ))
}

/// A signed tree head against a log key and a witness policy given as
/// C2SP tlog-policy text (the log list's `witnessPolicyText`, nested groups
/// included): checks `treeHead`, `policy`, `policy.log` (when it lists
/// logs) and `witnesses`. `now_seconds` only for a log's latest head
/// checked now (cosignatures then count only when recent, as
/// `verifyCosignatures`); without it, every valid cosignature counts.
/// Core's `verify::witness_report`. In the liabilities module, which the
/// verify page loads only for a policy the log list's k-of-n form cannot
/// say (issue 41: checked, never reported ok unchecked), and the SDKs'.
#[cfg(feature = "liabilities")]
#[wasm_bindgen(js_name = verifyWitnessPolicyText)]
pub fn verify_witness_policy_text(
    note: &str,
    key: &str,
    policy_text: &str,
    now_seconds: Option<f64>,
) -> String {
    use bvs_core::cosignature::{Freshness, LATEST_HEAD_AGE_SECONDS_DEFAULT};
    let freshness = match now_seconds {
        None => Freshness::Offline,
        Some(now) => Freshness::Latest {
            now: now as u64,
            max_age: LATEST_HEAD_AGE_SECONDS_DEFAULT,
        },
    };
    json(&verify::witness_report(note, key, policy_text, freshness))
}

/// A public verify answer's agreement side (the customer's key bindings
/// and signed statements about the checkpoint it shows), checked against
/// the log `log_origin` (the name of the key the page pinned): core's
/// `agreement::answer_agreement_report`, what `bvs-verify public` checks.
/// In the liabilities module, which the verify page loads only for an
/// answer with an agreement side (issue 41: no checks in TypeScript).
#[cfg(feature = "liabilities")]
#[wasm_bindgen(js_name = verifyAnswerAgreement)]
pub fn verify_answer_agreement(answer_json: &str, log_origin: &str) -> String {
    json(&bvs_core::agreement::answer_agreement_report(
        answer_json,
        log_origin,
    ))
}

/// A plain Ed25519 check: `signature` (64 bytes) of `message` by
/// `public_key` (32 bytes); false for anything malformed. The Python SDK's
/// Standard Webhooks `v1a` check (its standard library has no Ed25519).
/// Only in the SDKs' build.
#[cfg(feature = "receipt-agreement")]
#[wasm_bindgen(js_name = verifyEd25519)]
pub fn verify_ed25519(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    let (Ok(key), Ok(sig)) = (
        <[u8; 32]>::try_from(public_key),
        <[u8; 64]>::try_from(signature),
    ) else {
        return false;
    };
    let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(&key) else {
        return false;
    };
    key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&sig))
        .is_ok()
}

/// A public verification answer (`GET /api/v1/verify/{root}`), given as
/// a JSON array of the text of each of its pages (`JSON.stringify(texts)`:
/// one string crosses into WebAssembly, and each page keeps its exact
/// text, so amounts are read from it as written). `expected_root` is the
/// root asked for; `trusted_key` the key published at
/// `/api/v1/log/{env}/key`.
#[cfg(feature = "signatures")]
#[wasm_bindgen(js_name = verifyPublicAnswer)]
pub fn verify_public_answer(
    pages_json: &str,
    expected_root: Option<String>,
    trusted_key: Option<String>,
) -> String {
    match strings("pages", "answer texts", pages_json) {
        Ok(pages) => {
            let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
            json(&verify::verify_public_answer(
                &pages,
                expected_root.as_deref(),
                trusted_key.as_deref(),
            ))
        }
        Err(e) => failed("parse", e),
    }
}

/// A signed tree head (C2SP signed note) against a verifier key.
#[cfg(feature = "signatures")]
#[wasm_bindgen(js_name = verifyTreeHead)]
pub fn verify_tree_head(note: &str, verifier_key: &str) -> String {
    json(&verify::tree_head_report(note, verifier_key))
}

/// Two signed tree heads of one log and the consistency proof between
/// them (a JSON array of hex hashes): the newer tree extends the older one.
#[cfg(feature = "signatures")]
#[wasm_bindgen(js_name = verifyConsistency)]
pub fn verify_consistency(
    old_note: &str,
    new_note: &str,
    proof_json: &str,
    verifier_key: &str,
) -> String {
    match hashes("consistencyProof", proof_json) {
        Ok(proof) => json(&verify::consistency_report(
            old_note,
            new_note,
            &proof,
            verifier_key,
        )),
        Err(e) => failed("consistency", e),
    }
}

/// A customer's liabilities proof (docs/liabilities.md): the statement's
/// hash, the statement in the signed log (`trusted_key` pins the log's
/// key), that the proof is for `customer_id`'s own ledger (recomputed
/// from it and the statement's tenantId: another customer's proof, or one
/// that names none but is for another ledger, fails `customer.ledgerId`),
/// the leaf amounts and each sum-tree path to the statement's root, total
/// and leaf count; `expected_balance` (decimal text, e.g. the receipt's
/// `finalBalance`) pins the balance. The report's last check, `summary`,
/// is the sentence a page shows once all passed.
///
/// Only in the separate module built with the `liabilities` feature
/// (`scripts/build-verifier.sh --liabilities`, into
/// `public/pkg-liabilities/`): the verify page's own module is at its size
/// budget (bench/README.md).
#[cfg(feature = "liabilities")]
#[wasm_bindgen(js_name = verifyLiabilities)]
pub fn verify_liabilities(
    proof_json: &str,
    customer_id: &str,
    trusted_key: Option<String>,
    expected_balance: Option<String>,
) -> String {
    let customer = match bvs_core::types::CustomerId::parse(customer_id.trim()) {
        Ok(c) => c,
        Err(e) => return failed("customer.ledgerId", format!("your {e}")),
    };
    let balance = match expected(expected_balance) {
        Ok(b) => b,
        Err(e) => return e,
    };
    json(&bvs_core::liabilities::proof::verify_proof_json(
        proof_json,
        bvs_core::liabilities::proof::Checker::Customer(&customer),
        trusted_key.as_deref(),
        balance,
    ))
}

/// The expected balance as decimal text (none when absent or blank), or
/// the failed report that names it.
#[cfg(feature = "liabilities")]
fn expected(text: Option<String>) -> Result<Option<bvs_core::Amount>, String> {
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => bvs_core::Amount::parse(text)
            .map(Some)
            .map_err(|e| failed("balance", format!("expectedBalance {e}"))),
    }
}

/// [`verify_liabilities`] for a customer that knows its ledger id rather
/// than the vendor's name for it (the agreement page: its co-signing key
/// is bound to that ledger): the proof must be for `ledger_id` (64 hex
/// characters); `expected_balance` as there.
#[cfg(feature = "liabilities")]
#[wasm_bindgen(js_name = verifyLiabilitiesOfLedger)]
pub fn verify_liabilities_of_ledger(
    proof_json: &str,
    ledger_id: &str,
    trusted_key: Option<String>,
    expected_balance: Option<String>,
) -> String {
    let ledger = match bvs_core::hash::Hash32::parse(ledger_id.trim()) {
        Ok(h) => h,
        Err(e) => return failed("customer.ledgerId", format!("your ledgerId {e}")),
    };
    let balance = match expected(expected_balance) {
        Ok(b) => b,
        Err(e) => return e,
    };
    json(&bvs_core::liabilities::proof::verify_proof_json(
        proof_json,
        bvs_core::liabilities::proof::Checker::Ledger(&ledger),
        trusted_key.as_deref(),
        balance,
    ))
}

/// A period receipt's liabilities proof tied to the receipt (the receipt's
/// own `liabilities`, or `proof_json`, a proof saved apart): every check of
/// [`verify_liabilities`] with the receipt's `finalBalance` as the expected
/// balance, then `liabilities.receipt` (the proof's customer, period and
/// balance are the receipt's); check names are prefixed `liabilities.`.
/// No checks at all when the receipt carries no proof and none is given.
/// What `bvs-verify receipt` adds to a receipt's checks (core's
/// `liabilities::receipt::verify_receipt_proof`). Only in the SDKs' build.
#[cfg(all(feature = "receipt-agreement", feature = "liabilities"))]
#[wasm_bindgen(js_name = verifyReceiptLiabilities)]
pub fn verify_receipt_liabilities(
    receipt_json: &str,
    proof_json: Option<String>,
    trusted_key: Option<String>,
) -> String {
    use bvs_core::liabilities::receipt;
    if proof_json.is_none() && !receipt::receipt_carries_proof(receipt_json) {
        return json(&VerificationReport {
            ok: true,
            checks: Vec::new(),
        });
    }
    json(&receipt::verify_receipt_proof(
        receipt_json,
        proof_json.as_deref(),
        trusted_key.as_deref(),
    ))
}

/// A signed tree head held to the log's witness policy as the log list
/// publishes it (`witnessPolicy`: `quorum`, and `witnesses`, their
/// cosignature/v1 vkeys, here as a JSON array of strings): the log's
/// signature (`treeHead`) and whether at least `quorum` of the witnesses
/// cosigned the head (`witnesses`, naming those that did and did not).
/// `now_seconds` (Unix time) is given only when checking the log's latest
/// head just fetched: a cosignature then counts only when made within
/// `max_age_seconds` (default one hour). A receipt's or answer's head is a
/// saved document: leave `now_seconds` out, and every valid cosignature
/// counts whatever its age.
#[cfg(feature = "signatures")]
#[wasm_bindgen(js_name = verifyCosignatures)]
pub fn verify_cosignatures(
    note: &str,
    verifier_key: &str,
    witnesses_json: &str,
    quorum: f64,
    now_seconds: Option<f64>,
    max_age_seconds: Option<f64>,
) -> String {
    use bvs_core::cosignature::{Freshness, LATEST_HEAD_AGE_SECONDS_DEFAULT};
    // A clock or bound that is not a number (NaN) reads as 0: every
    // cosignature then fails the bound, never passes it.
    let freshness = match now_seconds {
        None => Freshness::Offline,
        Some(now) => Freshness::Latest {
            now: now as u64,
            max_age: max_age_seconds.map_or(LATEST_HEAD_AGE_SECONDS_DEFAULT, |m| m as u64),
        },
    };
    let quorum = match whole("quorum", quorum) {
        Ok(q) => q,
        Err(e) => return failed("witnesses", e),
    };
    match strings("witnesses", "vkeys", witnesses_json) {
        Ok(keys) => json(&verify::cosignature_report(
            note,
            verifier_key,
            &keys,
            quorum,
            freshness,
        )),
        Err(e) => failed("witnesses", e),
    }
}
