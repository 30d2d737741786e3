//! The browser's k-of-n witness check (`verify::cosignature_report`, the
//! form the log list publishes) and a tlog-policy of one group `k of`
//! the same witnesses (`Policy::check`, what `bvs-verify --policy` and the
//! service use) judge every head alike; and the tlog-policy report
//! (`verify::witness_report`) checks the log key a policy lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::cosignature::{cosign, witness_vkey, Freshness};
use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::note;
use bvs_core::policy::Policy;
use bvs_core::verify;
use proptest::prelude::*;

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [7; 32];

fn name(w: usize) -> String {
    format!("w{w}.example/bvs")
}

fn vkeys(n: usize) -> Vec<String> {
    (0..n)
        .map(|w| witness_vkey(&name(w), &[w as u8 + 1; 32]).unwrap())
        .collect()
}

fn head_cosigned(mask: u32, n: usize, at: &[u64]) -> String {
    let head = note::sign_tree_head(ORIGIN, TreeSize(9), &Hash32::digest(b"r"), &SEED).unwrap();
    let mut out = head.clone();
    for (w, t) in at.iter().enumerate().take(n) {
        if mask >> w & 1 == 1 {
            out.push_str(&cosign(&head, &name(w), &[w as u8 + 1; 32], *t).unwrap());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn k_of_n_and_a_one_group_policy_agree(
        n in 1usize..=5,
        mask: u32,
        k_pick: usize,
        at in proptest::collection::vec(0u64..10_000, 5),
        latest: bool,
    ) {
        let k = 1 + k_pick % n;
        let keys = vkeys(n);
        let note = head_cosigned(mask, n, &at);
        let freshness = if latest {
            Freshness::Latest { now: 10_000, max_age: 5_000 }
        } else {
            Freshness::Offline
        };
        let mut text = String::new();
        for (w, v) in keys.iter().enumerate() {
            text.push_str(&format!("witness {} {v}\n", name(w)));
        }
        let names: Vec<String> = (0..n).map(name).collect();
        text.push_str(&format!("group g {k} {}\nquorum g\n", names.join(" ")));
        let policy = Policy::parse(&text).unwrap();
        let by_policy = policy.check(&note, freshness).unwrap();
        let log_key = note::public_key_string(ORIGIN, &SEED).unwrap();
        let report = verify::cosignature_report(&note, &log_key, &keys, k as u64, freshness);
        let check = report.checks.iter().find(|c| c.name == "witnesses").unwrap();
        prop_assert_eq!(check.ok, by_policy.met);
        // The same words, but for how each names its rule.
        let cut = |s: &str| s[..s.find("; the quorum is").unwrap()].to_owned();
        prop_assert_eq!(cut(&check.detail), cut(&by_policy.summary()));
        let counted = (0..n).filter(|w| mask >> w & 1 == 1 && (!latest || at[*w] >= 5_000)).count();
        prop_assert_eq!(check.ok, counted >= k);
    }
}

#[test]
fn a_tlog_policy_report_checks_the_log_it_lists_and_the_quorum() {
    let keys = vkeys(3);
    let log_key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let other = note::public_key_string(ORIGIN, &[8; 32]).unwrap();
    let policy = format!(
        "log {log_key}\nwitness a {}\nwitness b {}\nwitness c {}\ngroup all3 2 a b c\nquorum all3\n",
        keys[0], keys[1], keys[2]
    );
    let note = head_cosigned(0b011, 3, &[5, 5, 5]);
    let r = verify::witness_report(&note, &log_key, &policy, Freshness::Offline);
    assert!(r.ok, "{r:?}");
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["treeHead", "policy", "policy.log", "witnesses"]);
    // Another log key: the head does not verify, and the policy does not list it.
    let r = verify::witness_report(&note, &other, &policy, Freshness::Offline);
    let failed: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(failed, ["treeHead", "policy.log"]);
    // One witness is not enough.
    let r = verify::witness_report(
        &head_cosigned(0b100, 3, &[5, 5, 5]),
        &log_key,
        &policy,
        Freshness::Offline,
    );
    let failed: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(failed, ["witnesses"]);
    // A policy that does not read is a failed check naming its line.
    let r = verify::witness_report(&note, &log_key, "quorum nobody\n", Freshness::Offline);
    assert!(r
        .checks
        .iter()
        .any(|c| c.name == "policy" && !c.ok && c.detail.contains("line 1")));
}

/// Issue 40: the SDKs' `witnessPolicy` check of a saved document (a
/// receipt's `proof.treeHead`, a liabilities proof's `log.treeHead`,
/// enveloped or not): 2 of 3 cosigned passes, the same head with its
/// cosignature lines stripped fails `witnesses`, a policy that lists
/// another log fails `policy.log`, and bad policy text fails `policy`.
#[test]
fn a_documents_head_is_held_to_a_witness_policy_and_stripped_cosignatures_fail() {
    let keys = vkeys(3);
    let log_key = note::public_key_string(ORIGIN, &SEED).unwrap();
    let mut policy = format!("log {log_key}\n");
    for (w, v) in keys.iter().enumerate() {
        policy.push_str(&format!("witness {} {v}\n", name(w)));
    }
    policy.push_str("group g 2 w0.example/bvs w1.example/bvs w2.example/bvs\nquorum g\n");
    let cosigned = head_cosigned(0b011, 3, &[100, 100, 100]);
    let stripped = cosigned[..cosigned.find("\u{2014} w0").unwrap()].to_owned();
    let receipt = |head: &str| {
        serde_json::json!({"success": true, "statusCode": 200,
            "data": {"proof": {"treeHead": head, "publicKey": log_key, "witnessed": true}}})
        .to_string()
    };
    let liabilities = |head: &str| {
        serde_json::json!({"log": {"treeHead": head, "publicKey": log_key}}).to_string()
    };
    let failed = |r: &verify::VerificationReport| {
        r.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    for doc in [receipt(&cosigned), liabilities(&cosigned)] {
        let r = verify::document_witness_report(&doc, Some(&log_key), &policy);
        assert!(r.ok, "{}", r.to_json());
        let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["policy", "policy.log", "witnesses"]);
        // Without a trusted key: the key the document names.
        assert!(verify::document_witness_report(&doc, None, &policy).ok);
    }
    for doc in [receipt(&stripped), liabilities(&stripped)] {
        let r = verify::document_witness_report(&doc, Some(&log_key), &policy);
        assert_eq!(failed(&r), ["witnesses"], "{}", r.to_json());
    }
    let other = note::public_key_string("other.example/log", &SEED).unwrap();
    let r = verify::document_witness_report(&receipt(&cosigned), Some(&other), &policy);
    assert_eq!(failed(&r), ["policy.log"], "{}", r.to_json());
    let r = verify::document_witness_report(&receipt(&cosigned), None, "quorum");
    assert_eq!(failed(&r), ["policy"]);
    let r = verify::document_witness_report("{}", None, &policy);
    assert_eq!(failed(&r), ["witnesses"]);
    // A policy that requires no witness passes a bare head.
    let none = verify::document_witness_report(&receipt(&stripped), None, "quorum none\n");
    assert!(none.ok, "{}", none.to_json());
}
