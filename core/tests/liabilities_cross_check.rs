//! The sum trees and the proof check against a second implementation:
//! `liabilities_xcheck.py`, written from docs/liabilities.md alone with the
//! Python standard library. Both build the same statements from the same
//! balances and seeds (roots, totals, counts, the statement's JSON and
//! hash, every customer's leaf and path must be equal), and both judge the
//! same proof documents, honest and tampered (their verdicts must be equal).
#![cfg(all(feature = "server", feature = "liabilities"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::liabilities::proof::{verify_proof, Checker};
use bvs_core::liabilities::{sample, LeafProof, ProofDocument};
use bvs_core::types::CustomerId;
use bvs_core::types::Period;
use bvs_core::{Amount, Hash32};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// A small deterministic generator (xorshift64*): the cases are the same
/// on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A balance: zero, small with cents, large, with 18 decimals, or negative.
fn balance(rng: &mut Rng) -> Amount {
    let units: i128 = match rng.below(6) {
        0 => 0,
        1 => i128::from(rng.below(100_000)) * 10_000_000_000_000_000,
        2 => i128::from(rng.below(1_000_000_000_000_000)) * 1_000_000_000_000_000_000,
        3 => i128::from(rng.next() >> 1) * 1_000 + 1,
        4 => -(i128::from(rng.below(50_000)) * 10_000_000_000_000_000) - 1,
        _ => i128::from(rng.below(10_000)) * 1_000_000_000_000_000_000,
    };
    Amount::from_units(units)
}

struct Case {
    seed: [u8; 32],
    balances: Vec<(String, Amount)>,
    sample: sample::Sample,
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    [1usize, 2, 3, 4, 5, 7, 8, 9, 13, 31, 64, 100]
        .iter()
        .map(|&n| {
            let mut seed = [0u8; 32];
            for chunk in seed.chunks_mut(8) {
                chunk.copy_from_slice(&rng.next().to_le_bytes());
            }
            let balances: Vec<(String, Amount)> = (0..n)
                .map(|i| (format!("cust_{n}_{i}"), balance(&mut rng)))
                .collect();
            let refs: Vec<(&str, Amount)> =
                balances.iter().map(|(c, b)| (c.as_str(), *b)).collect();
            let sample = sample::build(
                "bvs.example/log/sandbox",
                &[0x42; 32],
                "ten_xcheck",
                Period::parse("2026-11").unwrap(),
                &refs,
                seed,
                7,
                3,
            )
            .unwrap();
            Case {
                seed,
                balances,
                sample,
            }
        })
        .collect()
}

fn python(request: &Value) -> Value {
    let mut child = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/liabilities_xcheck.py"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the second implementation");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn leaf_json(l: &LeafProof) -> Value {
    json!({
        "leafIndex": l.index,
        "salt": l.salt.to_hex(),
        "amount": l.amount.to_string(),
        "path": l.path.iter().map(|n| json!({"hash": n.hash.to_hex(), "sum": n.sum.to_string()})).collect::<Vec<_>>(),
    })
}

#[test]
fn both_implementations_build_the_same_statements_and_paths() {
    let cases = cases();
    let request = json!({"build": cases.iter().map(|c| json!({
        "tenantId": "ten_xcheck",
        "environment": "sandbox",
        "period": "2026-11",
        "seed": hex(&c.seed),
        "balances": c.balances.iter().map(|(id, b)| json!([id, b.to_string()])).collect::<Vec<_>>(),
    })).collect::<Vec<_>>()});
    let answer = python(&request);
    for (case, theirs) in cases.iter().zip(answer["build"].as_array().unwrap()) {
        let s = &case.sample.statement;
        assert_eq!(theirs["statement"].as_str().unwrap(), s.canonical_json());
        assert_eq!(
            theirs["statementHash"].as_str().unwrap(),
            s.item_hash().to_hex()
        );
        for c in &case.sample.customers {
            let t = &theirs["customers"][&c.customer_id];
            assert_eq!(
                t["liabilities"],
                leaf_json(&c.document.liabilities),
                "{}",
                c.customer_id
            );
            let ours = c
                .document
                .receivables
                .as_ref()
                .map_or(Value::Null, leaf_json);
            assert_eq!(t["receivables"], ours, "{}", c.customer_id);
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Honest documents and tampered ones, each changed in one way.
/// Each document with what was done to it and the customer who checks it.
fn documents(cases: &[Case]) -> Vec<(String, String, ProofDocument)> {
    let mut out = Vec::new();
    let mut rng = Rng(77);
    for case in cases {
        let customers = &case.sample.customers;
        // Every customer honest; tampered, the first and last leaves, the
        // first negative balance and one more (Ed25519 in a debug build is
        // the cost here).
        let first_negative = customers.iter().position(|c| c.balance.signum() < 0);
        let some = rng.below(customers.len() as u64) as usize;
        for (k, c) in customers.iter().enumerate() {
            let d = &c.document;
            out.push(("honest".into(), c.customer_id.clone(), d.clone()));
            if !(k == 0 || k + 1 == customers.len() || Some(k) == first_negative || k == some) {
                continue;
            }
            let n = d.liabilities.path.len();
            let mut add = |what: &str, f: &dyn Fn(&mut ProofDocument)| {
                let mut t = d.clone();
                f(&mut t);
                out.push((
                    format!("{what} ({})", c.customer_id),
                    c.customer_id.clone(),
                    t,
                ));
            };
            if n > 0 {
                let i = rng.below(n as u64) as usize;
                add("a sibling hash flipped", &|t| {
                    t.liabilities.path[i].hash.0[i % 32] ^= 0x80
                });
                add("a sibling sum one unit more", &|t| {
                    let s = &mut t.liabilities.path[i].sum;
                    *s = s.checked_add(Amount::from_units(1)).unwrap();
                });
                add("a sibling sum negative", &|t| {
                    t.liabilities.path[i].sum = Amount::from_units(-1)
                });
                add("a sibling dropped", &|t| {
                    t.liabilities.path.remove(i);
                });
                add("another leaf index", &|t| {
                    t.liabilities.index = (t.liabilities.index + 1) % (n as u64 + 1)
                });
            }
            add("the amount and balance a cent more", &|t| {
                let cent = Amount::parse("0.01").unwrap();
                t.balance = t.balance.checked_add(cent).unwrap();
                if t.balance.signum() > 0 {
                    t.liabilities.amount = t.balance;
                    t.receivables = None;
                }
            });
            add("a salt flipped", &|t| t.liabilities.salt.0[0] ^= 1);
            add("another customerId", &|t| {
                t.customer_id = Some(format!("{}x", c.customer_id))
            });
            add("the statement's count one more, its hash kept", &|t| {
                t.statement.liabilities.leaf_count += 1
            });
            add("no log proof", &|t| t.log = None);
            add("the statement hash of another statement", &|t| {
                t.statement_hash = Hash32::digest(b"another")
            });
            if d.receivables.is_some() {
                add("the receivables leaf dropped", &|t| t.receivables = None);
                add("the receivables amount one more", &|t| {
                    let r = t.receivables.as_mut().unwrap();
                    r.amount = r.amount.checked_add(Amount::from_int(1).unwrap()).unwrap();
                });
            } else if let Some(other) = customers.iter().find(|o| o.document.receivables.is_some())
            {
                let r = other.document.receivables.clone();
                add("someone else's receivables leaf", &|t| {
                    t.receivables = r.clone()
                });
            }
        }
    }
    out
}

#[test]
fn both_implementations_judge_every_proof_the_same_way() {
    let cases = cases();
    let docs = documents(&cases);
    let key = &cases[0].sample.public_key;
    let request = json!({"verify": docs.iter().map(|(_, _, d)| d.to_json()).collect::<Vec<_>>()});
    let answer = python(&request);
    let verdicts = answer["verify"].as_array().unwrap();
    assert_eq!(verdicts.len(), docs.len());
    let (mut honest, mut tampered) = (0, 0);
    for ((what, checker, doc), theirs) in docs.iter().zip(verdicts) {
        let checker = CustomerId::parse(checker).unwrap();
        let ours = verify_proof(doc, Checker::Customer(&checker), Some(key), None);
        assert_eq!(
            theirs["ok"].as_bool().unwrap(),
            ours.ok,
            "{what}: python says {}, core says {}",
            theirs["why"],
            ours.to_json()
        );
        if what == "honest" {
            assert!(ours.ok, "{}", ours.to_json());
            honest += 1;
        } else {
            assert!(!ours.ok, "{what} passed");
            tampered += 1;
        }
    }
    assert!(
        honest >= 200 && tampered >= 400,
        "{honest} honest, {tampered} tampered"
    );
}
