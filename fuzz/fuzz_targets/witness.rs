//! The witness formats never panic on any input: C2SP tlog-policy text, a
//! cosigned head (genuine, then with bytes replaced) held to a genuine
//! 2-of-3 policy, tlog-proof files, and a witness's add-checkpoint
//! answers. An edited head never gains a witness the genuine one lacks.
#![no_main]

use bvs_core::cosignature::{cosign, witness_vkey, Freshness};
use bvs_core::policy::Policy;
use bvs_core::tlog_proof::TlogProof;
use bvs_core::witness;
use bvs_fuzz::{patched, signed_head};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Fixture {
    policy: Policy,
    head: String,
    cosigned: String,
}

static FIXTURE: OnceLock<Fixture> = OnceLock::new();

fn fixture() -> Fixture {
    let head = signed_head();
    let name = |n: u8| format!("w{n}.example");
    let mut text = String::new();
    for n in 1..=3u8 {
        text.push_str(&format!(
            "witness w{n} {}\n",
            witness_vkey(&name(n), &[n; 32]).expect("vkey")
        ));
    }
    text.push_str("group g 2 w1 w2 w3\nquorum g\n");
    let mut cosigned = head.clone();
    for n in 1..=2u8 {
        cosigned.push_str(&cosign(&head, &name(n), &[n; 32], 1_000).expect("cosign"));
    }
    Fixture {
        policy: Policy::parse(&text).expect("the fixture policy"),
        head,
        cosigned,
    }
}

fuzz_target!(|data: &[u8]| {
    let f = FIXTURE.get_or_init(fixture);
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match mode % 4 {
        0 => {
            if let Ok(p) = Policy::parse(&text) {
                let _ = p.check(&f.cosigned, Freshness::Offline);
                let _ = Policy::parse(&p.to_text()).expect("a written policy reads back");
            }
        }
        1 => {
            let edited = patched(&f.cosigned, rest);
            let genuine = f
                .policy
                .check(&f.cosigned, Freshness::Offline)
                .expect("verifies");
            if let Ok(q) = f.policy.check(
                &edited,
                Freshness::Latest {
                    now: 1_000,
                    max_age: 10,
                },
            ) {
                // No witness appears that did not cosign the genuine head.
                for ((_, a), (_, b)) in q.witnesses.iter().zip(&genuine.witnesses) {
                    if matches!(b, bvs_core::policy::Cosigned::No) {
                        assert!(matches!(a, bvs_core::policy::Cosigned::No), "{edited:?}");
                    }
                }
            }
        }
        2 => {
            if let Ok(p) = TlogProof::parse(&text) {
                assert_eq!(TlogProof::parse(&p.to_text()).as_ref(), Ok(&p));
                let _ = p.item();
            }
        }
        _ => {
            let key = f.policy.witnesses()[0].key.clone();
            let status = u16::from_be_bytes([
                rest.first().copied().unwrap_or(0),
                rest.get(1).copied().unwrap_or(0),
            ]);
            let _ = witness::read_add_checkpoint_answer(
                status % 600,
                Some("text/x.tlog.size"),
                Some("5"),
                &text,
                &f.head,
                &key,
            );
            let _ = witness::with_cosignatures(&f.head, &[&text]);
        }
    }
});
