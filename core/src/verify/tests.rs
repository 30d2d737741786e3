use super::*;
use crate::merkle::ProofError;
use crate::note;
use crate::receipt::Receipt;

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [9; 32];
const T0: i64 = 1_795_323_400_123;

fn sample() -> sample::Sample {
    sample::build(ORIGIN, &SEED, 37, &["100", "-0.1", "-0.2", "12.345"], T0).unwrap()
}

fn failed(r: &VerificationReport) -> Vec<String> {
    r.checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn documents_read_without_serde_equal_the_serde_reading() {
    let mut s = sample();
    let r = &mut s.receipt;
    if let Some(raw) = r.proof.items[0].raw.as_mut() {
        raw.metadata = Some(json::parse(r#"{"b":[1.5,-0,1e21,"é\n"],"a":{"x":null}}"#).unwrap());
    }
    r.proof.items[1].raw = None;
    let text = serde_json::to_string(&*r).unwrap();
    let ours = Receipt::from_json(&json::parse(&text).unwrap()).unwrap();
    let theirs: Receipt = serde_json::from_str(&text).unwrap();
    assert_eq!(ours, theirs);

    let envelope: serde_json::Value = serde_json::from_str(&s.public_json).unwrap();
    let data = envelope["data"].to_string();
    let ours = PublicAnswer::from_json(&json::parse(&data).unwrap()).unwrap();
    let theirs: PublicAnswer = serde_json::from_str(&data).unwrap();
    assert_eq!(ours, theirs);
}

#[test]
fn a_malformed_document_names_the_field_by_its_path() {
    let s = sample();
    let mut v: serde_json::Value = serde_json::from_str(&s.receipt_json).unwrap();
    v["data"]["deltas"][2]["itemHash"] = serde_json::json!("zz");
    let r = verify_receipt_document(&v.to_string(), None);
    assert_eq!(
        r.checks[0].detail,
        "not a receipt: deltas[2].itemHash: must be 64 lowercase hex digits"
    );
    let mut v: serde_json::Value = serde_json::from_str(&s.receipt_json).unwrap();
    v["data"]["proof"]["items"][1]
        .as_object_mut()
        .unwrap()
        .remove("leafIndex");
    let r = verify_receipt_document(&v.to_string(), None);
    assert_eq!(
        r.checks[0].detail,
        "not a receipt: proof.items[1].leafIndex: is required"
    );
    let r = verify_receipt_document("{\"data\": [1,}", None);
    assert_eq!(
        r.checks[0].detail,
        "not a receipt: not JSON: expected a JSON value at byte 12"
    );
    let r = verify_public_answer(&["[]"], None, None);
    assert_eq!(
        r.checks[0].detail,
        "not a public verification answer: document: must be an object, got an array"
    );
}

#[test]
fn a_report_is_written_as_the_json_serde_would_write() {
    let s = sample();
    let r = verify_receipt_document(&s.receipt_json, None);
    let mut tampered = r.clone();
    tampered.push("x\"\u{1}é", false, "line\nbreak \\ tab\t");
    for report in [r, tampered] {
        let ours: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(ours, serde_json::to_value(&report).unwrap());
    }
}

#[test]
fn a_public_answer_as_the_service_sends_it_verifies() {
    let s = sample();
    let root = s.proof_root.to_hex();
    let r = verify_public_answer(&[&s.public_json], Some(&root), Some(&s.public_key));
    assert!(r.ok, "{r:#?}");
    assert!(r.checks.iter().any(|c| c.name == "records[3].inclusion"));
    // Its `data` alone verifies too, and the receipt saved whole.
    let data: serde_json::Value = serde_json::from_str(&s.public_json).unwrap();
    let bare = data["data"].to_string();
    assert!(verify_public_answer(&[&bare], None, None).ok);
    assert!(verify_receipt_document(&s.receipt_json, Some(&s.public_key)).ok);
}

#[test]
fn a_tampered_public_answer_fails_the_check_that_names_it() {
    let s = sample();
    let root = s.proof_root.to_hex();
    let item = s.receipt.deltas[1].item_hash.to_hex();
    let forged = Hash32::digest(b"forged").to_hex();
    let cases: Vec<(String, Option<&str>, &str)> = vec![
        (
            s.public_json.replacen(&item, &forged, 1),
            None,
            "records[1].inclusion",
        ),
        (
            s.public_json.replace("\"delta\":-0.2", "\"delta\":-0.3"),
            None,
            "netAmount",
        ),
        (
            s.public_json.replace("\"itemCount\":4", "\"itemCount\":5"),
            None,
            "itemCount",
        ),
        (
            s.public_json.replace("\"treeSize\":45", "\"treeSize\":46"),
            None,
            "treeSize",
        ),
        (
            s.public_json.clone(),
            Some("other+01020304+AQ=="),
            "publicKey",
        ),
    ];
    for (text, key, want) in cases {
        let r = verify_public_answer(&[&text], Some(&root), key.or(Some(&s.public_key)));
        assert!(!r.ok, "{want}");
        assert!(
            failed(&r).contains(&want.to_string()),
            "{want}: {:?}",
            failed(&r)
        );
    }
    let r = verify_public_answer(&[&s.public_json], Some(&forged), None);
    assert_eq!(failed(&r), ["proofRoot", "verified"]);
    let r = verify_public_answer(&["{}"], None, None);
    assert_eq!(failed(&r), ["parse"]);
    assert!(!verify_public_answer(&[], None, None).ok);
}

#[test]
fn single_checks_report_what_they_checked() {
    let s = sample();
    assert!(tree_head_report(&s.head, &s.public_key).ok);
    assert!(!tree_head_report(&s.head.replace("45", "46"), &s.public_key).ok);
    assert!(consistency_report(&s.old_head, &s.head, &s.consistency_proof, &s.public_key).ok);
    let r = consistency_report(
        &s.old_head,
        &s.head,
        &s.consistency_proof[1..],
        &s.public_key,
    );
    assert_eq!(failed(&r), ["consistency"]);
    let d = &s.receipt.proof.items[0];
    let proof: Vec<String> = d.inclusion_proof.iter().map(Hash32::to_hex).collect();
    let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
    let root = head.root.to_hex();
    let item = d.item_hash.to_hex();
    let v1 = "bvs-log-v1";
    assert!(inclusion_report(&item, d.leaf_index.0, head.size.0, &root, &proof, v1).ok);
    assert!(!inclusion_report(&item, d.leaf_index.0 + 1, head.size.0, &root, &proof, v1).ok);
    assert!(!inclusion_report("zz", 0, 1, &root, &proof, v1).ok);
    let r = inclusion_report(
        &item,
        d.leaf_index.0,
        head.size.0,
        &root,
        &proof,
        "bvs-log-v9",
    );
    assert_eq!(failed(&r), ["hashScheme", "inclusion"]);
    assert!(r.checks[0]
        .detail
        .contains("unknown hash scheme \"bvs-log-v9\""));
    let hashes: Vec<String> = s
        .receipt
        .verification
        .item_hashes
        .iter()
        .map(Hash32::to_hex)
        .collect();
    assert!(submission_report(&hashes, &s.proof_root.to_hex()).ok);
    assert!(!submission_report(&hashes[1..], &s.proof_root.to_hex()).ok);
}

#[test]
fn an_unknown_hash_scheme_is_refused_by_name_and_no_proof_is_checked_under_a_guess() {
    let s = sample();
    let root = s.proof_root.to_hex();
    let scheme = "\"hashScheme\":\"bvs-log-v1\"";
    for other in ["bvs-log-v2", ""] {
        let renamed = format!("\"hashScheme\":\"{other}\"");
        let r = verify_receipt_document(
            &s.receipt_json.replacen(scheme, &renamed, 1),
            Some(&s.public_key),
        );
        let f = failed(&r);
        assert_eq!(f[0], "hashScheme", "{f:?}");
        assert_eq!(
            f.iter().filter(|n| n.ends_with(".inclusion")).count(),
            s.receipt.deltas.len()
        );
        let detail = &r.first_failure().unwrap().detail;
        let why = format!("unknown hash scheme \"{other}\"");
        assert!(detail.contains(&why), "{detail}");
        let r = verify_public_answer(
            &[&s.public_json.replacen(scheme, &renamed, 1)],
            Some(&root),
            Some(&s.public_key),
        );
        let f = failed(&r);
        assert_eq!(f[0], "hashScheme", "{f:?}");
        assert!(f.contains(&"records[0].inclusion".to_string()), "{f:?}");
    }
    // A document without one is not read at all.
    let r = verify_receipt_document(&s.receipt_json.replacen(scheme, "\"x\":1", 1), None);
    assert_eq!(
        r.checks[0].detail,
        "not a receipt: proof.hashScheme: is required"
    );
}

#[test]
fn a_plain_rfc_9162_leaf_does_not_pass_as_a_log_leaf() {
    // The log's proofs are over tagged leaves: the same proof does not
    // verify the item as a plain leaf, so a proof made before the
    // scheme (or under another) cannot pass as this one.
    let s = sample();
    let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
    let d = &s.receipt.proof.items[0];
    assert_eq!(
        HashScheme::BvsLogV1.verify_inclusion(
            &d.inclusion_proof,
            d.leaf_index,
            head.size,
            &head.root,
            &d.item_hash
        ),
        Ok(())
    );
    assert_eq!(
        merkle::verify_inclusion_of_leaf_hash(
            &d.inclusion_proof,
            d.leaf_index,
            head.size,
            &head.root,
            &merkle::leaf_hash(&d.item_hash)
        ),
        Err(ProofError::RootMismatch)
    );
}

#[test]
fn an_inclusion_answer_verifies_and_an_unknown_scheme_or_a_forgery_fails_by_name() {
    let s = sample();
    let d = &s.receipt.proof.items[1];
    let head = note::verify_tree_head(&s.head, &s.public_key).unwrap();
    let answer = |scheme: &str, item: &Hash32| {
        serde_json::json!({"success": true, "statusCode": 200, "data": {
            "hashScheme": scheme, "itemHash": item, "leafIndex": d.leaf_index,
            "treeSize": head.size, "inclusionProof": d.inclusion_proof, "treeHead": s.head,
        }})
        .to_string()
    };
    let r = inclusion_answer_report(&answer("bvs-log-v1", &d.item_hash), &s.public_key);
    assert!(r.ok, "{r:#?}");
    let r = inclusion_answer_report(&answer("bvs-log-v2", &d.item_hash), &s.public_key);
    assert_eq!(failed(&r), ["hashScheme", "inclusion"]);
    let r = inclusion_answer_report(
        &answer("bvs-log-v1", &Hash32::digest(b"forged")),
        &s.public_key,
    );
    assert_eq!(failed(&r), ["inclusion"]);
    let r = inclusion_answer_report("{}", &s.public_key);
    assert_eq!(failed(&r), ["parse"]);
}

#[test]
fn proofs_are_read_in_every_saved_form() {
    let a = "aa".repeat(32);
    let b = "bb".repeat(32);
    let want = vec![a.clone(), b.clone()];
    for text in [
        format!(r#"["{a}","{b}"]"#),
        format!("{a}\n{b}\n"),
        format!(r#"{{"from":1,"to":2,"consistencyProof":["{a}","{b}"]}}"#),
        format!(
            r#"{{"success":true,"statusCode":200,"data":{{"consistencyProof":["{a}","{b}"]}}}}"#
        ),
    ] {
        assert_eq!(parse_proof_document(&text).unwrap(), want, "{text}");
    }
    assert!(parse_proof_document("{").is_err());
    let named =
        |scheme: &str| format!(r#"{{"hashScheme":"{scheme}","consistencyProof":["{a}","{b}"]}}"#);
    assert_eq!(parse_proof_document(&named("bvs-log-v1")).unwrap(), want);
    assert!(parse_proof_document(&named("bvs-log-v7"))
        .unwrap_err()
        .to_string()
        .contains("unknown hash scheme"));
}
