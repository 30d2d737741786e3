//! Runs under Node with `wasm-bindgen-test-runner` (see scripts/test.sh):
//! the exported functions on a log built with core's own functions, and
//! tampered inputs that must fail the check naming them, never throw.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::note;
use bvs_core::verify::{sample, VerificationReport};
use bvs_verifier_wasm as v;
use wasm_bindgen_test::wasm_bindgen_test;

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [3; 32];
const T0: i64 = 1_795_323_400_123; // 2026-11-22T04:56:40.123Z
/// The log's hash scheme, as the API names it (`hashScheme`).
const V1: &str = "bvs-log-v1";

fn fixture() -> sample::Sample {
    sample::build(
        ORIGIN,
        &SEED,
        20,
        &["100", "-0.1", "-0.2", "12.345", "-4.25"],
        T0,
    )
    .unwrap()
}

fn report(json: &str) -> VerificationReport {
    serde_json::from_str(json).unwrap()
}

fn failed(json: &str) -> Vec<String> {
    let r = report(json);
    assert_eq!(r.ok, r.checks.iter().all(|c| c.ok), "ok is the conjunction");
    r.checks
        .into_iter()
        .filter(|c| !c.ok)
        .map(|c| c.name)
        .collect()
}

#[wasm_bindgen_test]
fn the_module_loads_and_reports_its_version() {
    assert_eq!(v::version(), env!("CARGO_PKG_VERSION"));
}

#[wasm_bindgen_test]
fn a_receipt_verifies_pinned_or_not_and_a_tampered_one_names_the_failure() {
    let s = fixture();
    assert!(
        report(&v::verify_receipt(
            &s.receipt_json,
            Some(s.public_key.clone())
        ))
        .ok
    );
    assert!(report(&v::verify_receipt(&s.receipt_json, None)).ok);

    let amount = s
        .receipt_json
        .replacen("\"delta\":12.345", "\"delta\":12.346", 1);
    assert!(failed(&v::verify_receipt(&amount, None)).contains(&"deltas[3].proofItem".to_string()));
    let other_key = note::public_key_string(ORIGIN, &[4; 32]).unwrap();
    let f = failed(&v::verify_receipt(&s.receipt_json, Some(other_key)));
    assert!(
        f.contains(&"publicKey".to_string()) && f.contains(&"treeHead".to_string()),
        "{f:?}"
    );
    let renamed = s.receipt_json.replacen(
        "\"hashScheme\":\"bvs-log-v1\"",
        "\"hashScheme\":\"bvs-log-v2\"",
        1,
    );
    let f = failed(&v::verify_receipt(&renamed, Some(s.public_key.clone())));
    assert_eq!(f[0], "hashScheme", "{f:?}");
    assert!(f.contains(&"deltas[0].inclusion".to_string()), "{f:?}");
    assert_eq!(failed(&v::verify_receipt("not json", None)), ["parse"]);
    assert_eq!(failed(&v::verify_receipt("", None)), ["parse"]);
}

#[wasm_bindgen_test]
fn a_public_answer_verifies_and_a_forged_record_fails() {
    let s = fixture();
    let root = s.proof_root.to_hex();
    // Pages cross as one JSON array of their texts (JSON.stringify(pages)).
    let pages = |texts: &[&str]| serde_json::to_string(texts).unwrap();
    let ok = v::verify_public_answer(
        &pages(&[&s.public_json]),
        Some(root.clone()),
        Some(s.public_key.clone()),
    );
    assert!(report(&ok).ok, "{ok}");
    let item = s.receipt.deltas[2].item_hash.to_hex();
    let forged = s
        .public_json
        .replacen(&item, &Hash32::digest(b"x").to_hex(), 1);
    let f = failed(&v::verify_public_answer(
        &pages(&[&forged]),
        Some(root.clone()),
        None,
    ));
    assert!(f.contains(&"records[2].inclusion".to_string()), "{f:?}");
    let f = failed(&v::verify_public_answer(
        &pages(&[]),
        Some(root.clone()),
        None,
    ));
    assert_eq!(f, ["parse"]);
    // Not an array of texts: a failed check, not a throw.
    for bad in ["", "{}", "[1]", &s.public_json] {
        let f = failed(&v::verify_public_answer(bad, Some(root.clone()), None));
        assert_eq!(f, ["parse"], "{bad:.40}");
    }
}

#[wasm_bindgen_test]
fn tree_heads_inclusion_consistency_and_submissions() {
    let s = fixture();
    assert!(report(&v::verify_tree_head(&s.head, &s.public_key)).ok);
    let flipped = s.head.replacen("sandbox\n", "sandbox2\n", 1);
    assert_eq!(
        failed(&v::verify_tree_head(&flipped, &s.public_key)),
        ["treeHead"]
    );
    assert_eq!(failed(&v::verify_tree_head(&s.head, "junk")), ["treeHead"]);

    let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
    let item = &s.receipt.proof.items[0];
    let hex: Vec<String> = item.inclusion_proof.iter().map(Hash32::to_hex).collect();
    let proof = serde_json::to_string(&hex).unwrap();
    let short = serde_json::to_string(&hex[1..]).unwrap();
    let (hash, root) = (item.item_hash.to_hex(), head.root.to_hex());
    let (i, n) = (item.leaf_index.0 as f64, head.size.0 as f64);
    assert!(report(&v::verify_inclusion(&hash, i, n, &root, &proof, V1)).ok);
    assert_eq!(
        failed(&v::verify_inclusion(&hash, i + 1.0, n, &root, &proof, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, -1.0, n, &root, &proof, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, 0.5, n, &root, &proof, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, i, f64::NAN, &root, &proof, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, i, n, &root, &short, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, i, n, &root, r#"["zz"]"#, V1)),
        ["inclusion"]
    );
    assert_eq!(
        failed(&v::verify_inclusion(&hash, i, n, &root, "not json", V1)),
        ["inclusion"]
    );
    // An unknown or missing scheme is refused by name, never guessed.
    for other in ["bvs-log-v2", ""] {
        assert_eq!(
            failed(&v::verify_inclusion(&hash, i, n, &root, &proof, other)),
            ["hashScheme", "inclusion"]
        );
    }

    let js = |v: &Vec<String>| serde_json::to_string(v).unwrap();
    let c = js(&s.consistency_proof);
    assert!(
        report(&v::verify_consistency(
            &s.old_head,
            &s.head,
            &c,
            &s.public_key
        ))
        .ok
    );
    assert_eq!(
        failed(&v::verify_consistency(
            &s.head,
            &s.old_head,
            &c,
            &s.public_key
        )),
        ["consistency"]
    );
    let mut bad = s.consistency_proof.clone();
    bad[0] = Hash32::digest(b"y").to_hex();
    assert_eq!(
        failed(&v::verify_consistency(
            &s.old_head,
            &s.head,
            &js(&bad),
            &s.public_key
        )),
        ["consistency"]
    );
    assert_eq!(
        failed(&v::verify_consistency(
            &s.old_head,
            &s.head,
            "{",
            &s.public_key
        )),
        ["consistency"]
    );

    let hashes: Vec<String> = s
        .receipt
        .verification
        .item_hashes
        .iter()
        .map(Hash32::to_hex)
        .collect();
    let root = s.proof_root.to_hex();
    assert!(report(&v::verify_submission(&js(&hashes), &root)).ok);
    let mut swapped = hashes.clone();
    swapped.swap(0, 1);
    assert_eq!(
        failed(&v::verify_submission(&js(&swapped), &root)),
        ["itemsRoot"]
    );
    assert_eq!(
        failed(&v::verify_submission(&js(&hashes), "nothex")),
        ["itemsRoot"]
    );
}

#[wasm_bindgen_test]
fn the_bytes_fast_path_agrees_with_the_report_and_rejects_any_flip() {
    let s = fixture();
    let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
    let root = head.root.0;
    let n = head.size.0 as f64;
    for item in &s.receipt.proof.items {
        let path: Vec<u8> = item.inclusion_proof.iter().flat_map(|h| h.0).collect();
        let (i, hash) = (item.leaf_index.0 as f64, item.item_hash.0);
        assert!(v::verify_inclusion_bytes(i, n, &root, &hash, &path, V1));

        for byte in 0..path.len() {
            let mut bad = path.clone();
            bad[byte] ^= 0x01;
            assert!(!v::verify_inclusion_bytes(i, n, &root, &hash, &bad, V1));
        }
        for byte in 0..32 {
            let (mut bad_root, mut bad_item) = (root, hash);
            bad_root[byte] ^= 0x80;
            bad_item[byte] ^= 0x80;
            assert!(!v::verify_inclusion_bytes(
                i, n, &bad_root, &hash, &path, V1
            ));
            assert!(!v::verify_inclusion_bytes(
                i, n, &root, &bad_item, &path, V1
            ));
        }
        assert!(!v::verify_inclusion_bytes(
            i + 1.0,
            n,
            &root,
            &hash,
            &path,
            V1
        ));
        for other in ["bvs-log-v2", ""] {
            assert!(!v::verify_inclusion_bytes(i, n, &root, &hash, &path, other));
        }
        // (A larger size can reuse the same path for leaves in a complete
        // left subtree: the signed head, not the path, binds the size.)
        assert!(!v::verify_inclusion_bytes(i, 1.0, &root, &hash, &path, V1));
        for bad_number in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e300] {
            assert!(!v::verify_inclusion_bytes(
                bad_number, n, &root, &hash, &path, V1
            ));
            assert!(!v::verify_inclusion_bytes(
                i, bad_number, &root, &hash, &path, V1
            ));
        }
        // Wrong lengths are false, not a panic.
        assert!(!v::verify_inclusion_bytes(
            i,
            n,
            &root[..31],
            &hash,
            &path,
            V1
        ));
        assert!(!v::verify_inclusion_bytes(i, n, &root, &[], &path, V1));
        if !path.is_empty() {
            assert!(!v::verify_inclusion_bytes(
                i,
                n,
                &root,
                &hash,
                &path[1..],
                V1
            ));
            assert!(!v::verify_inclusion_bytes(
                i,
                n,
                &root,
                &hash,
                &path[32..],
                V1
            ));
        }
        let mut long = path.clone();
        long.extend_from_slice(&[0; 32]);
        assert!(!v::verify_inclusion_bytes(i, n, &root, &hash, &long, V1));
        assert!(!v::verify_inclusion_bytes(
            i,
            n,
            &root,
            &hash,
            &vec![0; 32 * 65],
            V1
        ));
    }
}

#[cfg(feature = "liabilities")]
#[wasm_bindgen_test]
fn a_liabilities_proof_verifies_in_webassembly_and_a_tampered_one_names_the_failure() {
    use bvs_core::liabilities::sample as liabilities;
    use bvs_core::types::Period;
    use bvs_core::Amount;
    let balances = [
        ("cust_a", Amount::parse("42.1").unwrap()),
        ("cust_b", Amount::parse("1234525.79").unwrap()),
        ("cust_c", Amount::parse("-5").unwrap()),
    ];
    let s = liabilities::build(
        ORIGIN,
        &SEED,
        "ten_wasm",
        Period::parse("2026-11").unwrap(),
        &balances,
        [0x11; 32],
        2,
        3,
    )
    .unwrap();
    for c in &s.customers {
        let text = c.document.to_json();
        let r = report(&v::verify_liabilities(
            &text,
            &c.customer_id,
            Some(s.public_key.clone()),
            Some(c.balance.to_string()),
        ));
        assert!(r.ok, "{:?}", r.checks);
        assert_eq!(r.checks.last().unwrap().name, "summary");
    }
    let a = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_a")
        .unwrap();
    let text = a.document.to_json();
    assert_eq!(
        report(&v::verify_liabilities(&text, "cust_a", None, None))
            .checks
            .last()
            .unwrap()
            .detail,
        "your balance of 42.1 is counted in a total of 1234567.89 owed to 3 customers on 2026-11-30"
    );
    assert_eq!(
        failed(&v::verify_liabilities(
            &text,
            "cust_a",
            Some(s.public_key.clone()),
            Some("42.2".into())
        )),
        vec!["balance"]
    );
    let mut tampered = a.document.clone();
    tampered.liabilities.path[0].sum = Amount::parse("1").unwrap();
    assert_eq!(
        failed(&v::verify_liabilities(
            &tampered.to_json(),
            "cust_a",
            Some(s.public_key.clone()),
            None
        )),
        vec!["liabilities.path"]
    );
    assert_eq!(
        failed(&v::verify_liabilities("[]", "cust_a", None, None)),
        vec!["parse"]
    );
    assert_eq!(
        failed(&v::verify_liabilities(
            &text,
            "cust_a",
            None,
            Some("x".into())
        )),
        vec!["balance"]
    );
    // Another customer's proof, even with its customerId taken out, fails
    // for the customer checking it (issue 40); by ledger id as well.
    let anonymous = text.replacen("\"customerId\":\"cust_a\"", "\"customerId\":null", 1);
    assert_ne!(anonymous, text);
    assert!(report(&v::verify_liabilities(&anonymous, "cust_a", None, None)).ok);
    assert_eq!(
        failed(&v::verify_liabilities(&anonymous, "cust_b", None, None)),
        vec!["customer.ledgerId"]
    );
    assert_eq!(
        failed(&v::verify_liabilities(&text, "cust_b", None, None)),
        vec!["customer.ledgerId"]
    );
    let own = a.document.ledger_id.to_hex();
    assert!(
        report(&v::verify_liabilities_of_ledger(
            &anonymous, &own, None, None
        ))
        .ok
    );
    let other = s
        .customers
        .iter()
        .find(|c| c.customer_id != "cust_a")
        .unwrap();
    assert_eq!(
        failed(&v::verify_liabilities_of_ledger(
            &anonymous,
            &other.document.ledger_id.to_hex(),
            None,
            None
        )),
        vec!["customer.ledgerId"]
    );
}

/// When the witnesses of [`witnesses`] cosign.
const WITNESSED_AT: u64 = 1_795_323_500;

/// Three witnesses (w1..w3.example/bvs, seeds 1..3): their cosignature
/// vkeys, and `head` cosigned at [`WITNESSED_AT`] by those chosen (by
/// index).
fn witnesses(head: &str) -> (Vec<String>, impl Fn(&[usize]) -> String + '_) {
    use bvs_core::cosignature::{cosign, witness_vkey};
    const NAMES: [&str; 3] = ["w1.example/bvs", "w2.example/bvs", "w3.example/bvs"];
    let keys = NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| witness_vkey(n, &[i as u8 + 1; 32]).unwrap())
        .collect();
    let cosigned = move |ws: &[usize]| {
        let mut note = head.to_string();
        for w in ws {
            note.push_str(&cosign(head, NAMES[*w], &[*w as u8 + 1; 32], WITNESSED_AT).unwrap());
        }
        note
    };
    (keys, cosigned)
}

#[wasm_bindgen_test]
fn a_head_passes_only_with_a_quorum_of_fresh_cosignatures_and_says_which() {
    let s = fixture();
    let (keys, cosigned) = witnesses(&s.head);
    let keys_json = serde_json::to_string(&keys).unwrap();
    let at = WITNESSED_AT;
    let detail = |json: &str| {
        report(json)
            .checks
            .into_iter()
            .find(|c| c.name == "witnesses")
            .unwrap()
            .detail
    };

    // A saved head (no clock): two of three is the quorum.
    let two = v::verify_cosignatures(
        &cosigned(&[0, 2]),
        &s.public_key,
        &keys_json,
        2.0,
        None,
        None,
    );
    assert!(report(&two).ok, "{two}");
    assert!(
        detail(&two).starts_with(
            "witnessed: cosigned by w1.example/bvs, w3.example/bvs; not cosigned by w2.example/bvs; the quorum is 2 of the 3 witnesses"
        ),
        "{two}"
    );
    let one = v::verify_cosignatures(&cosigned(&[1]), &s.public_key, &keys_json, 2.0, None, None);
    assert_eq!(failed(&one), vec!["witnesses"]);
    assert!(
        detail(&one).starts_with("NOT witnessed: cosigned by w2.example/bvs;"),
        "{one}"
    );

    // The latest head, checked now: within the hour it counts, after it not.
    let all = cosigned(&[0, 1, 2]);
    let now = at as f64;
    assert!(
        report(&v::verify_cosignatures(
            &all,
            &s.public_key,
            &keys_json,
            2.0,
            Some(now + 60.0),
            None
        ))
        .ok
    );
    let stale = v::verify_cosignatures(
        &all,
        &s.public_key,
        &keys_json,
        2.0,
        Some(now + 7200.0),
        None,
    );
    assert_eq!(failed(&stale), vec!["witnesses"]);
    assert!(
        detail(&stale).contains("too old for the latest head"),
        "{stale}"
    );
    assert!(
        report(&v::verify_cosignatures(
            &all,
            &s.public_key,
            &keys_json,
            2.0,
            Some(now + 7200.0),
            Some(86400.0)
        ))
        .ok
    );
    // A clock that is not a number fails the bound, never passes it.
    assert_eq!(
        failed(&v::verify_cosignatures(
            &all,
            &s.public_key,
            &keys_json,
            2.0,
            Some(f64::NAN),
            None
        )),
        vec!["witnesses"]
    );

    // Bad input is a failed check: a quorum that is no whole number or
    // larger than the witnesses, a key that is no witness key, a forged
    // line, another log's key.
    for q in [f64::NAN, -1.0, 1.5, 4.0] {
        assert_eq!(
            failed(&v::verify_cosignatures(
                &all,
                &s.public_key,
                &keys_json,
                q,
                None,
                None
            )),
            vec!["witnesses"],
            "{q}"
        );
    }
    let with_log_key = serde_json::to_string(&[&s.public_key]).unwrap();
    assert_eq!(
        failed(&v::verify_cosignatures(
            &all,
            &s.public_key,
            &with_log_key,
            1.0,
            None,
            None
        )),
        vec!["witnesses"]
    );
    assert_eq!(
        failed(&v::verify_cosignatures(
            &all,
            &s.public_key,
            "not json",
            1.0,
            None,
            None
        )),
        vec!["witnesses"]
    );
    // w1's line with one signature byte changed.
    let w1_line = all.lines().find(|l| l.contains("w1.example")).unwrap();
    let mut b = w1_line.as_bytes().to_vec();
    let k = b.len() - 10;
    b[k] = if b[k] == b'A' { b'B' } else { b'A' };
    let forged = all.replace(w1_line, std::str::from_utf8(&b).unwrap());
    assert_eq!(
        failed(&v::verify_cosignatures(
            &forged,
            &s.public_key,
            &keys_json,
            1.0,
            None,
            None
        )),
        vec!["witnesses"]
    );
    let other = note::public_key_string(ORIGIN, &[9; 32]).unwrap();
    assert_eq!(
        failed(&v::verify_cosignatures(
            &all, &other, &keys_json, 2.0, None, None
        )),
        vec!["treeHead"]
    );
}

/// A nested witness policy (groups of groups, which the log list's k-of-n
/// form cannot say) is checked from its tlog-policy text by the lazily
/// loaded module's `verifyWitnessPolicyText` (issue 41): the quorum met
/// passes, one group short fails, and a stale latest head fails.
#[cfg(feature = "liabilities")]
#[wasm_bindgen_test]
fn a_nested_witness_policy_is_checked_from_its_text() {
    let s = fixture();
    let (keys, cosigned) = witnesses(&s.head);
    // (w1 and w2) or w3.
    let policy = format!(
        "witness w1 {}\nwitness w2 {}\nwitness w3 {}\ngroup pair all w1 w2\ngroup top any pair w3\nquorum top\n",
        keys[0], keys[1], keys[2]
    );
    let at = WITNESSED_AT;
    for ws in [&[0, 1][..], &[2][..]] {
        let r = v::verify_witness_policy_text(&cosigned(ws), &s.public_key, &policy, None);
        assert!(report(&r).ok, "{ws:?}: {r}");
    }
    let short = v::verify_witness_policy_text(&cosigned(&[0]), &s.public_key, &policy, None);
    assert_eq!(failed(&short), vec!["witnesses"], "{short}");
    let other = note::public_key_string("other.example/log", &[9; 32]).unwrap();
    let forged = v::verify_witness_policy_text(&cosigned(&[2]), &other, &policy, None);
    assert!(
        failed(&forged).contains(&"treeHead".to_string()),
        "{forged}"
    );
    let stale = v::verify_witness_policy_text(
        &cosigned(&[2]),
        &s.public_key,
        &policy,
        Some(at as f64 + 7200.0),
    );
    assert_eq!(failed(&stale), vec!["witnesses"], "{stale}");
    let bad =
        v::verify_witness_policy_text(&cosigned(&[2]), &s.public_key, "quorum nobody\n", None);
    assert!(failed(&bad).contains(&"policy".to_string()), "{bad}");
}
