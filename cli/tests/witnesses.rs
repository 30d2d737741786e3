//! `--policy`: heads, receipts, answers and the monitor held to a witness
//! quorum (C2SP tlog-policy, cosignature/v1), and receipts exported and
//! checked as C2SP tlog-proof files, on a log built with core's own
//! functions and witnesses made with core's test signer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::cosignature::{cosign, witness_vkey};
use bvs_core::verify::sample;
use std::path::PathBuf;
use std::process::{Command, Output};

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [5; 32];
const T0: i64 = 1_795_323_400_123; // 2026-11-22T04:56:40.123Z
/// When the witnesses cosigned, in seconds.
const AT: u64 = 1_795_323_500;

struct Files {
    dir: PathBuf,
    s: sample::Sample,
}

impl Files {
    fn new(label: &str) -> Files {
        let dir = std::env::temp_dir().join(format!("bvs-verify-w-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let s = sample::build(ORIGIN, &SEED, 30, &["100", "-0.1", "-0.2", "12.345"], T0).unwrap();
        Files { dir, s }
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// The sample's head cosigned by the witnesses `ns` (1..=3) at `at`.
    fn cosigned(&self, ns: &[u8], at: u64) -> String {
        let mut out = self.s.head.clone();
        for n in ns {
            out.push_str(
                &cosign(&self.s.head, &format!("w{n}.example/bvs"), &[*n; 32], at).unwrap(),
            );
        }
        out
    }

    /// The sample's receipt (as saved from the API) with `head` for its
    /// tree head.
    fn receipt_with(&self, head: &str) -> String {
        let from = serde_json::to_string(&self.s.head).unwrap();
        let to = serde_json::to_string(head).unwrap();
        assert!(self.s.receipt_json.contains(&from));
        self.s.receipt_json.replace(&from, &to)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three witnesses, any two of which make the quorum.
fn policy(extra: &str) -> String {
    let w = |n: u8| witness_vkey(&format!("w{n}.example/bvs"), &[n; 32]).unwrap();
    format!(
        "{extra}witness w1 {}\nwitness w2 {}\nwitness w3 {}\ngroup local 2 w1 w2 w3\nquorum local\n",
        w(1),
        w(2),
        w(3)
    )
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
fn a_receipt_passes_only_when_two_of_three_witnesses_cosigned_its_head_and_says_which() {
    let f = Files::new("receipt");
    let pol = f.write("policy.txt", &policy(""));
    let key = f.s.public_key.clone();

    let two = f.write("two.json", &f.receipt_with(&f.cosigned(&[1, 3], AT)));
    let o = bvs_verify(&["receipt", &two, "--key", &key, "--policy", &pol]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("PASS  witnesses") && out.contains("witnessed: cosigned by w1, w3; not cosigned by w2; the quorum is local: 2 of w1, w2, w3"),
        "{out}"
    );
    assert!(!out.contains("not checked"), "{out}");

    // A saved receipt is checked offline: a cosignature years old counts.
    let old = f.write("old.json", &f.receipt_with(&f.cosigned(&[1, 2], 1_000)));
    let o = bvs_verify(&["receipt", &old, "--key", &key, "--policy", &pol]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    let one = f.write("one.json", &f.receipt_with(&f.cosigned(&[2], AT)));
    let o = bvs_verify(&["receipt", &one, "--key", &key, "--policy", &pol]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  witnesses"), "{out}");
    assert!(
        out.contains("NOT witnessed: cosigned by w2; not cosigned by w1, w3"),
        "{out}"
    );

    // The same receipt without --policy verifies as before, and says the
    // witnesses were not checked.
    let o = bvs_verify(&["receipt", &one, "--key", &key]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("Witnesses: not checked (no --policy)"),
        "{out}"
    );

    // A policy that lists logs stands in for --key, and must list this one.
    let listed = f.write("listed.txt", &policy(&format!("log {key}\n")));
    let o = bvs_verify(&["receipt", &two, "--policy", &listed]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  policy.log"), "{out}");
    let other_log = bvs_core::note::public_key_string("elsewhere.example/log", &[9; 32]).unwrap();
    let elsewhere = f.write("elsewhere.txt", &policy(&format!("log {other_log}\n")));
    let o = bvs_verify(&["receipt", &two, "--key", &key, "--policy", &elsewhere]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  policy.log"));

    // A malformed policy is a usage error, by line.
    let bad = f.write("bad.txt", "witness w1 nonsense\nquorum w1\n");
    let o = bvs_verify(&["receipt", &two, "--key", &key, "--policy", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("policy line 1"));
}

#[test]
fn the_latest_head_needs_fresh_cosignatures() {
    let f = Files::new("head");
    let pol = f.write("policy.txt", &policy(""));
    let head = f.write("head.txt", &f.cosigned(&[1, 2, 3], AT));
    let now = (AT + 600).to_string();
    let o = bvs_verify(&[
        "head",
        &head,
        "--key",
        &f.s.public_key,
        "--policy",
        &pol,
        "--now",
        &now,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    // Two hours later the same head is a stale view.
    let later = (AT + 7200).to_string();
    let o = bvs_verify(&[
        "head",
        &head,
        "--key",
        &f.s.public_key,
        "--policy",
        &pol,
        "--now",
        &later,
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("too old for the latest head"), "{out}");
    // ... unless the bound says otherwise.
    let o = bvs_verify(&[
        "head",
        &head,
        "--key",
        &f.s.public_key,
        "--policy",
        &pol,
        "--now",
        &later,
        "--max-age",
        "86400",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn the_monitor_pins_the_policy_on_first_use_and_refuses_another() {
    let f = Files::new("monitor");
    let pol = f.write("policy.txt", &policy(""));
    let state = f.dir.join("heads.json").display().to_string();
    let head = f.write("head.txt", &f.cosigned(&[1, 2], AT));
    let now = (AT + 60).to_string();
    let key = f.s.public_key.clone();
    let o = bvs_verify(&[
        "monitor", &head, "--key", &key, "--state", &state, "--policy", &pol, "--now", &now,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains("witnessPolicy"), "{saved}");

    // Later runs use the pinned policy without --policy: one witness is
    // not enough, and the head is not recorded.
    let weak = f.write("weak.txt", &f.cosigned(&[3], AT));
    let o = bvs_verify(&[
        "monitor", &weak, "--key", &key, "--state", &state, "--now", &now,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("FAIL  witnesses"));

    // Another policy (one witness of three) is refused, never swapped in.
    let lax = policy("").replace("group local 2", "group local 1");
    let lax = f.write("lax.txt", &lax);
    let o = bvs_verify(&[
        "monitor", &weak, "--key", &key, "--state", &state, "--policy", &lax, "--now", &now,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("pins another witness policy"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read_to_string(&state).unwrap(), saved);
}

#[test]
fn a_receipt_exports_tlog_proof_files_that_verify_and_tampering_fails_them() {
    let f = Files::new("export");
    let pol = f.write("policy.txt", &policy(""));
    let key = f.s.public_key.clone();
    let receipt = f.write("receipt.json", &f.receipt_with(&f.cosigned(&[1, 2], AT)));
    let out_dir = f.dir.join("proofs").display().to_string();
    let o = bvs_verify(&[
        "export-proofs",
        &receipt,
        "--out",
        &out_dir,
        "--key",
        &key,
        "--policy",
        &pol,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let mut files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), f.s.receipt.deltas.len());
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "), "{text}");
    assert!(text.contains("\n\nbvs.example/log/sandbox\n"), "{text}");

    let mut args = vec!["proof"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--key", &key, "--policy", &pol]);
    let o = bvs_verify(&args);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  proofs[0].inclusion"), "{out}");
    assert!(out.contains("PASS  proofs[3].witnesses"), "{out}");

    // --item pins the entry: another delta's itemHash fails.
    let leaf = |i: usize| {
        let d = &f.s.receipt.deltas[i];
        let item = &f.s.receipt.proof.items[i];
        assert_eq!(item.item_hash, d.item_hash);
        format!("{}/leaf-{}.tlog-proof", out_dir, item.leaf_index)
    };
    let first_item = f.s.receipt.deltas[0].item_hash.to_hex();
    let o = bvs_verify(&["proof", &leaf(0), "--key", &key, "--item", &first_item]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = bvs_verify(&["proof", &leaf(1), "--key", &key, "--item", &first_item]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  entry"));

    // A changed proof line, or the index of another leaf, fails inclusion.
    let text = std::fs::read_to_string(leaf(0)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let hash_line = lines[3];
    let mut flipped = hash_line.as_bytes().to_vec();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    let tampered = text.replacen(hash_line, std::str::from_utf8(&flipped).unwrap(), 1);
    let bad = f.write("bad.tlog-proof", &tampered);
    let o = bvs_verify(&["proof", &bad, "--key", &key]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  inclusion"), "{}", stdout(&o));
    let idx = lines[2];
    let moved = text.replacen(
        idx,
        &format!("index {}", f.s.receipt.proof.items[0].leaf_index.0 + 1),
        1,
    );
    let bad = f.write("moved.tlog-proof", &moved);
    let o = bvs_verify(&["proof", &bad, "--key", &key]);
    assert_eq!(o.status.code(), Some(1));

    // A receipt that does not verify exports nothing.
    let one = f.write("one.json", &f.receipt_with(&f.cosigned(&[1], AT)));
    let none_dir = f.dir.join("none").display().to_string();
    let o = bvs_verify(&[
        "export-proofs",
        &one,
        "--out",
        &none_dir,
        "--key",
        &key,
        "--policy",
        &pol,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!std::path::Path::new(&none_dir).exists());
}
