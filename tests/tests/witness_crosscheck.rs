//! Our cosignature code against code the project did not write, with no
//! `wrangler dev`: real `aics-witness serve` processes (started by
//! `scripts/witnesses.sh`, as `scripts/dev.sh` does) cosign checkpoints
//! signed by core's signer with consistency proofs built by core, refuse a
//! fork and a stale size as C2SP tlog-witness says, and core verifies what
//! they return; aics-tlog (a second C2SP implementation, same author as
//! aics-witness) verifies our cosigned checkpoints under a quorum, and core
//! verifies a cosignature aics-tlog made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::cosignature::{cosign, witness_vkey, Freshness, WitnessKey};
use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::TreeSize;
use bvs_core::note;
use bvs_core::policy::Policy;
use bvs_core::witness::{self, AddCheckpointAnswer};
use bvs_tests::witness::Witnesses;
use bvs_tests::{dev_var, fresh_state_dir, repo_root, run_ok};
use std::process::Command;

/// The sandbox log's origin, as wrangler.toml names it (shard 0).
fn sandbox_origin() -> String {
    let toml = std::fs::read_to_string(repo_root().join("wrangler.toml")).unwrap();
    toml.lines()
        .find_map(|l| l.strip_prefix("LOG_ORIGIN_SANDBOX = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap()
        .to_string()
}

fn sandbox_seed() -> [u8; 32] {
    hex::decode(dev_var("LOG_SEED_SANDBOX"))
        .unwrap()
        .try_into()
        .unwrap()
}

/// A log grown with core, as the sequencer grows it.
struct Log {
    items: Vec<Hash32>,
    store: StoredHashes,
}

impl Log {
    fn new() -> Log {
        Log {
            items: Vec::new(),
            store: StoredHashes::new(),
        }
    }

    fn grow(&mut self, n: u64, salt: &str) {
        let new: Vec<Hash32> = (0..n)
            .map(|i| Hash32::digest(format!("{salt} {i}").as_bytes()))
            .collect();
        for (k, v) in log::append(TreeSize(self.items.len() as u64), &new, &self.store).unwrap() {
            self.store.insert(k, v);
        }
        self.items.extend(new);
    }

    fn size(&self) -> TreeSize {
        TreeSize(self.items.len() as u64)
    }

    fn head(&self, origin: &str, seed: &[u8; 32]) -> String {
        let root = log::tree_root(self.size(), &self.store).unwrap();
        note::sign_tree_head(origin, self.size(), &root, seed).unwrap()
    }

    fn proof(&self, old: TreeSize) -> Vec<Hash32> {
        if old.0 == 0 {
            return Vec::new();
        }
        log::consistency_proof(old, self.size(), &self.store).unwrap()
    }
}

/// POSTs `add-checkpoint` and reads the answer with core.
fn add_checkpoint(
    url: &str,
    old: TreeSize,
    proof: &[Hash32],
    head: &str,
    key: &WitnessKey,
) -> AddCheckpointAnswer {
    let body = witness::add_checkpoint_body(old, proof, head).unwrap();
    let r = reqwest::blocking::Client::new()
        .post(format!("{url}/add-checkpoint"))
        .body(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let header = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (ct, retry) = (header("content-type"), header("retry-after"));
    let text = r.text().unwrap();
    witness::read_add_checkpoint_answer(status, ct.as_deref(), retry.as_deref(), &text, head, key)
        .unwrap_or_else(|e| panic!("{status} {text:?}: {e}"))
}

fn policy_keys(policy: &Policy) -> Vec<WitnessKey> {
    policy.witnesses().iter().map(|w| w.key.clone()).collect()
}

fn aics_tlog(args: &[&str]) -> (bool, String) {
    let out = Command::new(repo_root().join(".venv-witness/bin/aics-tlog"))
        .args(args)
        .output()
        .expect("run aics-tlog (scripts/setup.sh installs it)");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn real_witnesses_cosign_core_checkpoints_refuse_forks_and_aics_tlog_agrees() {
    let dir = fresh_state_dir("witness-crosscheck");
    let witnesses = Witnesses::start(&dir, 3, 2);
    let policy = Policy::parse(witnesses.policy()).unwrap();
    let keys = policy_keys(&policy);
    let (origin, seed) = (sandbox_origin(), sandbox_seed());
    let log_key = note::public_key_string(&origin, &seed).unwrap();

    // First contact: old 0, no proof; every witness cosigns.
    let mut log = Log::new();
    log.grow(5, "a");
    let head5 = log.head(&origin, &seed);
    let mut lines = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        match add_checkpoint(&witnesses.url(i + 1), TreeSize(0), &[], &head5, key) {
            AddCheckpointAnswer::Cosigned { line, .. } => lines.push(line),
            other => panic!("witness {} answered {other:?}", i + 1),
        }
    }

    // The log grows; a consistency proof built by core, from the size each
    // witness cosigned, is accepted, and the cosignatures verify in core.
    log.grow(300, "b");
    let head305 = log.head(&origin, &seed);
    let mut cosigned = Vec::new();
    for (i, key) in keys.iter().enumerate().take(2) {
        match add_checkpoint(
            &witnesses.url(i + 1),
            TreeSize(5),
            &log.proof(TreeSize(5)),
            &head305,
            key,
        ) {
            AddCheckpointAnswer::Cosigned { line, .. } => cosigned.push(line),
            other => panic!("witness {} answered {other:?}", i + 1),
        }
    }
    let refs: Vec<&str> = cosigned.iter().map(String::as_str).collect();
    let published = witness::with_cosignatures(&head305, &refs).unwrap();
    let q = policy.check(&published, Freshness::Offline).unwrap();
    assert!(q.met, "{}", q.summary());
    assert!(
        q.summary()
            .contains("cosigned by w1, w2; not cosigned by w3"),
        "{}",
        q.summary()
    );
    assert!(note::verify_tree_head(&published, &log_key).is_ok());

    // Witness 3 was left at 5: a request from another size gets 409 and
    // its size, and the resend from there succeeds.
    assert_eq!(
        add_checkpoint(
            &witnesses.url(3),
            TreeSize(4),
            &log.proof(TreeSize(4)),
            &head305,
            &keys[2]
        ),
        AddCheckpointAnswer::Conflict { size: TreeSize(5) }
    );
    assert!(matches!(
        add_checkpoint(
            &witnesses.url(3),
            TreeSize(5),
            &log.proof(TreeSize(5)),
            &head305,
            &keys[2]
        ),
        AddCheckpointAnswer::Cosigned { .. }
    ));

    // A fork: another history of a larger size, with a proof from a tree
    // that shares only the first items. Every witness refuses it (422).
    let mut fork = Log::new();
    fork.grow(5, "a");
    fork.grow(320, "forked");
    let forked_head = fork.head(&origin, &seed);
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(
            add_checkpoint(
                &witnesses.url(i + 1),
                TreeSize(305),
                &fork.proof(TreeSize(305)),
                &forked_head,
                key
            ),
            AddCheckpointAnswer::Inconsistent,
            "witness {}",
            i + 1
        );
    }
    // Same size, other root: refused too.
    let mut same_size = Log::new();
    same_size.grow(305, "other");
    assert_eq!(
        add_checkpoint(
            &witnesses.url(1),
            TreeSize(305),
            &[],
            &same_size.head(&origin, &seed),
            &keys[0]
        ),
        AddCheckpointAnswer::Inconsistent
    );
    // An origin the witness does not know (404), and a log key it does not
    // trust for the origin (403).
    assert_eq!(
        add_checkpoint(
            &witnesses.url(1),
            TreeSize(0),
            &[],
            &log.head("unknown.example/log", &seed),
            &keys[0]
        ),
        AddCheckpointAnswer::UnknownLog
    );
    assert_eq!(
        add_checkpoint(
            &witnesses.url(1),
            TreeSize(305),
            &[],
            &log.head(&origin, &[9; 32]),
            &keys[0]
        ),
        AddCheckpointAnswer::Forbidden
    );

    // The witness's monitoring endpoint serves its latest cosigned
    // checkpoint; core reads its cosignature and the log's signature.
    let origin_hash = Hash32::digest(origin.as_bytes()).to_hex();
    let served = reqwest::blocking::get(format!("{}/{origin_hash}/checkpoint", witnesses.url(1)))
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(
        note::verify_tree_head(&served, &log_key).unwrap().size,
        TreeSize(305)
    );
    let found = bvs_core::cosignature::cosignatures(&served, &keys).unwrap();
    assert!(found[0].is_some() && found[1].is_none(), "{found:?}");

    // aics-tlog verifies the checkpoint the service would publish: the
    // log's signature and a quorum of 2 of the 3 witness keys.
    let file = dir.join("published.txt");
    std::fs::write(&file, &published).unwrap();
    let mut args = vec![
        "verify-checkpoint".to_string(),
        "--note".into(),
        file.display().to_string(),
        "--origin".into(),
        origin.clone(),
        "--log-key".into(),
        log_key.clone(),
        "--quorum".into(),
        "2".into(),
    ];
    for k in &keys {
        args.extend(["--witness-key".to_string(), k.vkey()]);
    }
    let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out) = aics_tlog(&args_ref);
    assert!(ok, "{out}");
    // ... and refuses it with a quorum of 3 (w3 did not cosign this copy).
    let mut three = args_ref.clone();
    let q = three.iter().position(|a| *a == "2").unwrap();
    three[q] = "3";
    let (ok, out) = aics_tlog(&three);
    assert!(!ok, "{out}");
}

#[test]
fn aics_tlog_and_core_read_each_others_cosignatures() {
    let origin = "bvs.example/log/sandbox";
    let seed = [7u8; 32];
    let mut log = Log::new();
    log.grow(17, "x");
    let head = log.head(origin, &seed);
    let log_key = note::public_key_string(origin, &seed).unwrap();
    let dir = fresh_state_dir("cosign-crosscheck");

    // core signs, aics-tlog verifies (with its own freshness bound).
    let name = "witness.example/core";
    let w_seed = [3u8; 32];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let ours = format!("{head}{}", cosign(&head, name, &w_seed, now).unwrap());
    let file = dir.join("ours.txt");
    std::fs::write(&file, &ours).unwrap();
    let vkey = witness_vkey(name, &w_seed).unwrap();
    let (ok, out) = aics_tlog(&[
        "verify-checkpoint",
        "--note",
        &file.display().to_string(),
        "--log-key",
        &log_key,
        "--witness-key",
        &vkey,
        "--quorum",
        "1",
        "--max-age",
        "600",
    ]);
    assert!(ok, "{out}");
    // A byte of the signature changed: aics-tlog does not count it.
    let b64 = ours.lines().last().unwrap().rsplit(' ').next().unwrap();
    let mut bytes = b64.as_bytes().to_vec();
    bytes[20] = if bytes[20] == b'A' { b'B' } else { b'A' };
    let bad = ours.replacen(b64, std::str::from_utf8(&bytes).unwrap(), 1);
    std::fs::write(&file, &bad).unwrap();
    let (ok, out) = aics_tlog(&[
        "verify-checkpoint",
        "--note",
        &file.display().to_string(),
        "--log-key",
        &log_key,
        "--witness-key",
        &vkey,
        "--quorum",
        "1",
    ]);
    assert!(!ok, "{out}");

    // aics-tlog signs (its own key id, message and encoding), core verifies.
    let script = format!(
        r#"
import base64
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from aics_tlog.cosign import sign_cosignature, cosignature_vkey
from aics_tlog.note import format_vkey
key = Ed25519PrivateKey.from_private_bytes(bytes([5] * 32))
blob, line = sign_cosignature(key, "witness.example/aics", 1700000000, "{origin}", {size}, base64.b64decode("{root}"))
print(format_vkey(cosignature_vkey("witness.example/aics", key.public_key())))
print("\u2014 " + line.name + " " + base64.b64encode(line.key_id + line.signature).decode())
"#,
        size = log.size(),
        root = head.lines().nth(2).unwrap(),
    );
    let out = run_ok(
        Command::new(repo_root().join(".venv-witness/bin/python")).args(["-c", &script]),
        "aics-tlog signs a cosignature",
    );
    let mut lines = out.lines();
    let theirs_vkey = lines.next().unwrap().trim().to_string();
    let theirs_line = lines.next().unwrap();
    let key = WitnessKey::parse(&theirs_vkey).unwrap_or_else(|e| panic!("{theirs_vkey}: {e}"));
    // Our vkey writer agrees with theirs.
    assert_eq!(
        witness_vkey("witness.example/aics", &[5; 32]).unwrap(),
        theirs_vkey
    );
    let with_theirs = format!("{head}{theirs_line}\n");
    assert_eq!(
        bvs_core::cosignature::cosignatures(&with_theirs, &[key]).unwrap(),
        vec![Some(1_700_000_000)]
    );
}

#[test]
fn a_witness_learns_an_added_shards_log_on_reload_and_keeps_its_state_across_a_restart() {
    let dir = fresh_state_dir("witness-reload");
    let mut witnesses = Witnesses::start(&dir, 1, 1);
    let policy = Policy::parse(witnesses.policy()).unwrap();
    let key = &policy_keys(&policy)[0];
    let seed = sandbox_seed();
    // wrangler.toml has two sandbox shards: logs `<origin>` and `<origin>/1`.
    let third = format!("{}/2", sandbox_origin());
    let mut log = Log::new();
    log.grow(3, "shard 2");
    let head = log.head(&third, &seed);
    assert_eq!(
        add_checkpoint(&witnesses.url(1), TreeSize(0), &[], &head, key),
        AddCheckpointAnswer::UnknownLog
    );
    // A third shard: the running witness trusts its log after SIGHUP.
    witnesses.add_shards(3, 2);
    bvs_tests::eventually(
        std::time::Duration::from_secs(10),
        "the reload",
        || match add_checkpoint(&witnesses.url(1), TreeSize(0), &[], &head, key) {
            AddCheckpointAnswer::Cosigned { .. } => Some(()),
            AddCheckpointAnswer::UnknownLog => None,
            other => panic!("{other:?}"),
        },
    );
    // Stopped and started again, it remembers what it cosigned.
    witnesses.stop(1);
    witnesses.resume(1);
    log.grow(2, "more");
    let head5 = log.head(&third, &seed);
    assert_eq!(
        add_checkpoint(&witnesses.url(1), TreeSize(0), &[], &head5, key),
        AddCheckpointAnswer::Conflict { size: TreeSize(3) }
    );
}
