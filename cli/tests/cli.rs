//! The binary on files as an auditor saves them from the API: exit status,
//! human output and `--json`, on a log built with core's own functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::verify::{sample, VerificationReport};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [5; 32];
const T0: i64 = 1_795_323_400_123; // 2026-11-22T04:56:40.123Z

struct Files {
    dir: PathBuf,
    s: sample::Sample,
}

impl Files {
    fn new(label: &str) -> Files {
        let dir = std::env::temp_dir().join(format!("bvs-verify-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = sample::build(ORIGIN, &SEED, 30, &["100", "-0.1", "-0.2", "12.345"], T0).unwrap();
        Files { dir, s }
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn bvs_verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bvs-verify"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_receipt_saved_from_the_api_verifies_with_the_pinned_key() {
    let f = Files::new("receipt-ok");
    let receipt = f.write("receipt.json", &f.s.receipt_json);
    let o = bvs_verify(&["receipt", &receipt, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("PASS  treeHead"), "{out}");
    assert!(out.contains("PASS  finalBalance"), "{out}");
    assert!(out.contains("VERIFIED:"), "{out}");
}

#[test]
fn a_tampered_receipt_fails_with_the_reason_and_exit_status_1() {
    let f = Files::new("receipt-tampered");
    // The balance claimed is not what the deltas add up to.
    let text =
        f.s.receipt_json
            .replace("\"finalBalance\":122.045", "\"finalBalance\":1122.045");
    assert_ne!(text, f.s.receipt_json);
    let receipt = f.write("receipt.json", &text);
    let o = bvs_verify(&["receipt", &receipt]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("FAIL  finalBalance"), "{out}");
    assert!(out.contains("the receipt says 1122.045"), "{out}");
    assert!(out.contains("NOT VERIFIED"), "{out}");

    // A forged item hash fails its inclusion proof, and --json says so.
    let item = f.s.receipt.deltas[0].item_hash.to_hex();
    let forged =
        f.s.receipt_json
            .replace(&item, &Hash32::digest(b"forged").to_hex());
    let receipt = f.write("forged.json", &forged);
    let o = bvs_verify(&["receipt", &receipt, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let report: VerificationReport = serde_json::from_slice(&o.stdout).unwrap();
    let failed: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert!(failed.contains(&"deltas[0].inclusion"), "{failed:?}");
    assert!(failed.contains(&"deltas[0].itemHash"), "{failed:?}");
}

#[test]
fn a_receipt_or_answer_fails_against_another_pinned_key() {
    // The pinned key is the one checked: a document that verifies under
    // the key it names fails under any other (a planted `--key` that was
    // read and then ignored passed every other test).
    let f = Files::new("receipt-other-key");
    let other = bvs_core::note::public_key_string(ORIGIN, &[6; 32]).unwrap();
    let receipt = f.write("receipt.json", &f.s.receipt_json);
    let o = bvs_verify(&["receipt", &receipt, "--key", &other]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("FAIL  publicKey"), "{}", stdout(&o));
    let answer = f.write("answer.json", &f.s.public_json);
    let o = bvs_verify(&["public", &answer, "--key", &other]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("NOT VERIFIED"), "{}", stdout(&o));
}

#[test]
fn a_signed_head_verifies_against_its_key_only() {
    let f = Files::new("head");
    let head = f.write("head.txt", &f.s.head);
    let o = bvs_verify(&["head", &head, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let other = bvs_core::note::public_key_string(ORIGIN, &[6; 32]).unwrap();
    let o = bvs_verify(&["head", &head, "--key", &other]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  treeHead"));
    let edited = f.write("edited.txt", &f.s.head.replacen("\n", "\n1", 1));
    let o = bvs_verify(&["head", &edited, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn consistency_between_two_saved_heads_verifies_and_a_bad_proof_fails() {
    let f = Files::new("consistency");
    let old = f.write("old.txt", &f.s.old_head);
    let new = f.write("new.txt", &f.s.head);
    let answer = format!(
        r#"{{"success":true,"statusCode":200,"data":{{"consistencyProof":{}}}}}"#,
        serde_json::to_string(&f.s.consistency_proof).unwrap()
    );
    let proof = f.write("proof.json", &answer);
    let o = bvs_verify(&["consistency", &old, &new, &proof, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("PASS  consistency"));

    let lines = f.write("proof.txt", &f.s.consistency_proof[1..].join("\n"));
    let o = bvs_verify(&["consistency", &old, &new, &lines, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  consistency"));
}

#[test]
fn a_public_answer_verifies_and_names_the_root_it_is_about() {
    let f = Files::new("public");
    let answer = f.write("answer.json", &f.s.public_json);
    let root = f.s.proof_root.to_hex();
    let o = bvs_verify(&["public", &answer, "--root", &root, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = bvs_verify(&["public", &answer, "--root", &"0".repeat(64)]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn log_proofs_are_checked_under_the_scheme_they_name_and_an_unknown_one_is_refused() {
    let f = Files::new("scheme");
    let v1 = "\"hashScheme\":\"bvs-log-v1\"";
    let v2 = "\"hashScheme\":\"bvs-log-v2\"";
    let receipt = f.write("receipt.json", &f.s.receipt_json.replacen(v1, v2, 1));
    let o = bvs_verify(&["receipt", &receipt, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("FAIL  hashScheme") && out.contains("unknown hash scheme \"bvs-log-v2\""),
        "{out}"
    );
    assert!(out.contains("First failure: hashScheme"), "{out}");

    // An answer of the inclusion route, saved whole.
    let d = &f.s.receipt.proof.items[2];
    let head = bvs_core::note::verify_tree_head(&f.s.head, &f.s.public_key).unwrap();
    let answer = serde_json::json!({"success": true, "statusCode": 200, "data": {
        "hashScheme": "bvs-log-v1", "itemHash": d.item_hash, "leafIndex": d.leaf_index,
        "treeSize": head.size, "inclusionProof": d.inclusion_proof, "treeHead": f.s.head,
    }})
    .to_string();
    let ok = f.write("inclusion.json", &answer);
    let o = bvs_verify(&["inclusion", &ok, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("PASS  inclusion"));
    let other = f.write("inclusion-v2.json", &answer.replacen(v1, v2, 1));
    let o = bvs_verify(&["inclusion", &other, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("FAIL  hashScheme"));
    assert_eq!(bvs_verify(&["inclusion", &ok]).status.code(), Some(2));

    // A consistency answer naming an unknown scheme is not read.
    let old = f.write("old.txt", &f.s.old_head);
    let new = f.write("new.txt", &f.s.head);
    let cons = format!(
        r#"{{"hashScheme":"bvs-log-v2","consistencyProof":{}}}"#,
        serde_json::to_string(&f.s.consistency_proof).unwrap()
    );
    let cons = f.write("cons.json", &cons);
    let o = bvs_verify(&["consistency", &old, &new, &cons, "--key", &f.s.public_key]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown hash scheme"));
}

#[test]
fn without_a_pinned_key_nothing_is_called_verified_unless_allowed_and_then_it_says_unpinned() {
    let f = Files::new("unpinned");
    let receipt = f.write("receipt.json", &f.s.receipt_json);
    let o = bvs_verify(&["receipt", &receipt]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("FAIL  publicKey") && out.contains("not pinned"),
        "{out}"
    );
    assert!(out.contains("NOT VERIFIED"), "{out}");

    let o = bvs_verify(&["receipt", &receipt, "--allow-unpinned"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("PASS  publicKey") && out.contains("UNPINNED (--allow-unpinned)"),
        "{out}"
    );
    assert!(out.contains("VERIFIED WITH AN UNPINNED KEY"), "{out}");
    // --allow-unpinned never turns a failed check into a pass.
    let forged = f.write(
        "forged.json",
        &f.s.receipt_json
            .replace("\"finalBalance\":122.045", "\"finalBalance\":1122.045"),
    );
    let o = bvs_verify(&["receipt", &forged, "--allow-unpinned"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));

    let answer = f.write("answer.json", &f.s.public_json);
    assert_eq!(bvs_verify(&["public", &answer]).status.code(), Some(1));
    let o = bvs_verify(&["public", &answer, "--allow-unpinned", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("UNPINNED"));
}

#[test]
fn the_monitor_remembers_heads_per_log_and_fails_loudly_on_a_fork() {
    use bvs_core::log::{self, StoredHashes};
    use bvs_core::merkle::TreeSize;
    use bvs_core::note;

    let f = Files::new("monitor");
    let seed = [7u8; 32];
    let key = note::public_key_string(ORIGIN, &seed).unwrap();
    let items: Vec<Hash32> = (0..20u64)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let mut forked_items = items.clone();
    forked_items[3] = Hash32::digest(b"rewritten");
    let store = |it: &[Hash32]| {
        let mut s = StoredHashes::new();
        for (k, v) in log::append(TreeSize(0), it, &StoredHashes::new()).unwrap() {
            s.insert(k, v);
        }
        s
    };
    let (good, bad) = (store(&items), store(&forked_items));
    let head = |s: &StoredHashes, n: u64| {
        let root = log::tree_root(TreeSize(n), s).unwrap();
        note::sign_tree_head(ORIGIN, TreeSize(n), &root, &seed).unwrap()
    };
    let proof = |s: &StoredHashes, m: u64, n: u64| {
        let p: Vec<String> = log::consistency_proof(TreeSize(m), TreeSize(n), s)
            .unwrap()
            .iter()
            .map(Hash32::to_hex)
            .collect();
        serde_json::json!({"hashScheme": "bvs-log-v1", "from": m, "to": n, "consistencyProof": p})
            .to_string()
    };
    let state = f.dir.join("heads.json").display().to_string();
    let run = |files: &[&str]| {
        let mut a = vec!["monitor"];
        a.extend_from_slice(files);
        a.extend_from_slice(&["--key", &key, "--state", &state]);
        bvs_verify(&a)
    };

    let h8 = f.write("h8.txt", &head(&good, 8));
    let o = run(&[&h8]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("first head seen"), "{}", stdout(&o));
    let h15 = f.write("h15.txt", &head(&good, 15));
    let o = run(&[&h15]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("proof/consistency?from=8&to=15"),
        "{}",
        stdout(&o)
    );
    let p = f.write("p8-15.json", &proof(&good, 8, 15));
    let o = run(&[&h15, &p]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = std::fs::read_to_string(&state).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(saved["logs"][ORIGIN]["heads"].as_array().unwrap().len(), 2);
    assert_eq!(saved["logs"][ORIGIN]["verifierKey"], key);

    // A fork: the log shows another history of size 15, then of size 20.
    let fork15 = f.write("fork15.txt", &head(&bad, 15));
    let o = run(&[&fork15]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FORK"));
    assert!(
        stdout(&o).contains("FAIL  history")
            && stdout(&o).contains("FORK: the log signed two different trees of size 15")
    );
    let fork20 = f.write("fork20.txt", &head(&bad, 20));
    let fp = f.write("p15-20.json", &proof(&bad, 15, 20));
    let o = run(&[&fork20, &fp]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FORK"));
    // Nothing of the fork was recorded.
    assert_eq!(std::fs::read_to_string(&state).unwrap(), text);
    // The honest log goes on.
    let h20 = f.write("h20.txt", &head(&good, 20));
    let gp = f.write("g15-20.json", &proof(&good, 15, 20));
    assert_eq!(run(&[&h20, &gp]).status.code(), Some(0));

    // Another key for the same origin is refused; a head of another key fails.
    let other = note::public_key_string(ORIGIN, &[8u8; 32]).unwrap();
    let o = bvs_verify(&["monitor", &h20, "--key", &other, "--state", &state]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  treeHead"));
    assert_eq!(
        bvs_verify(&["monitor", &h20, "--key", &key]).status.code(),
        Some(2)
    );
}

#[test]
fn usage_and_io_errors_exit_with_2() {
    assert_eq!(bvs_verify(&[]).status.code(), Some(2));
    assert_eq!(bvs_verify(&["--help"]).status.code(), Some(0));
    assert_eq!(bvs_verify(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(bvs_verify(&["receipt"]).status.code(), Some(2));
    assert_eq!(
        bvs_verify(&["receipt", "/nonexistent/r.json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        bvs_verify(&["receipt", "a", "--bogus"]).status.code(),
        Some(2)
    );
    let f = Files::new("usage");
    let head = f.write("head.txt", &f.s.head);
    let o = bvs_verify(&["head", &head]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs --key"));
    assert!(Path::new(&head).exists());
}
