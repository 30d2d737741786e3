//! Known-answer vectors and tampered statements, one named reason each.

use super::*;

const ORIGIN: &str = "bvs.example/log/sandbox";
const SEED: [u8; 32] = [0x42; 32];
const OTHER_SEED: [u8; 32] = [0x43; 32];
const KEY_NAME: &str = "customer";

fn ledger() -> Hash32 {
    // ledger_id("tenant_1", "cust_1") as the worker derives it.
    Hash32::digest(b"bvs-ledger-v1\ntenant_1\ncust_1")
}

fn checkpoint() -> CheckpointRef {
    CheckpointRef {
        origin: Origin::parse(ORIGIN).unwrap(),
        ledger: ledger(),
        period: Period::parse("2026-11").unwrap(),
        root: Hash32::digest(b"root"),
        deltas: 42,
    }
}

fn balance() -> Statement {
    Statement::Balance(BalanceStatement {
        checkpoint: checkpoint(),
        balance: Amount::parse("112.045").unwrap(),
    })
}

fn dispute() -> Statement {
    Statement::Dispute(Dispute {
        checkpoint: checkpoint(),
        kind: DivergenceKind::Missing,
        after: 17,
        delta: EntryId::AnchorId("anc_0017".into()),
        agreed: Amount::parse("-3.5").unwrap(),
    })
}

fn key() -> String {
    counterparty_key(KEY_NAME, &SEED).unwrap()
}

fn binding() -> Statement {
    Statement::Key(KeyBinding::new(Origin::parse(ORIGIN).unwrap(), ledger(), &key()).unwrap())
}

fn signed(s: &Statement) -> String {
    sign(s, KEY_NAME, &SEED).unwrap()
}

fn resign(text: &str) -> String {
    // Sign arbitrary text as the counterparty, bypassing `to_text`.
    let mut note = signed_note::Note::new(text.as_bytes(), &[]).unwrap();
    let s = sign::test_signer(KEY_NAME, &SEED);
    note.add_sigs(&[&s]).unwrap();
    String::from_utf8(note.to_bytes()).unwrap()
}

#[test]
fn known_answer_balance_statement() {
    let note = signed(&balance());
    assert_eq!(key(), KAT_KEY);
    assert_eq!(note, KAT_BALANCE);
    assert_eq!(item_hash(&note).to_hex(), KAT_BALANCE_ITEM_HASH);
    assert_eq!(verify(&note, &key()).unwrap(), balance());
}

#[test]
fn known_answer_dispute_and_key_binding() {
    assert_eq!(signed(&dispute()), KAT_DISPUTE);
    assert_eq!(signed(&binding()), KAT_BINDING);
    assert_eq!(verify(KAT_DISPUTE, &key()).unwrap(), dispute());
    let Statement::Key(b) = binding() else {
        unreachable!()
    };
    assert_eq!(verify_key_binding(KAT_BINDING).unwrap(), b);
}

#[test]
fn statements_round_trip_through_text() {
    for s in [balance(), dispute(), binding()] {
        assert_eq!(Statement::parse(&s.to_text()).unwrap(), s);
    }
    for delta in [
        EntryId::ItemHash(Hash32::digest(b"x")),
        EntryId::ReferenceId("inv 42".into()),
    ] {
        let s = Statement::Dispute(Dispute {
            delta,
            ..match dispute() {
                Statement::Dispute(d) => d,
                _ => unreachable!(),
            }
        });
        assert_eq!(verify(&signed(&s), &key()).unwrap(), s);
    }
}

#[test]
fn a_cosigned_balance_matches_its_checkpoint() {
    let note = signed(&balance());
    let b = Amount::parse("112.045").unwrap();
    assert!(verify_cosigned_balance(&note, &key(), &checkpoint(), b).is_ok());
}

/// A statement validly signed, but about another checkpoint or balance
/// than the one the receipt shows: each field fails with its own reason.
#[test]
fn a_cosignature_for_another_checkpoint_is_refused_by_field() {
    let note = signed(&balance());
    let b = Amount::parse("112.045").unwrap();
    let expect = |f: fn(&mut CheckpointRef)| {
        let mut c = checkpoint();
        f(&mut c);
        verify_cosigned_balance(&note, &key(), &c, b).unwrap_err()
    };
    assert!(matches!(
        expect(|c| c.ledger = Hash32::digest(b"other")),
        StatementError::LedgerMismatch { .. }
    ));
    assert!(matches!(
        expect(|c| c.period = Period::parse("2026-10").unwrap()),
        StatementError::PeriodMismatch { .. }
    ));
    assert!(matches!(
        expect(|c| c.root = Hash32::digest(b"other")),
        StatementError::RootMismatch { .. }
    ));
    assert!(matches!(
        expect(|c| c.deltas = 43),
        StatementError::DeltasMismatch { .. }
    ));
    assert!(matches!(
        expect(|c| c.origin = Origin::parse("bvs.example/log/production").unwrap()),
        StatementError::OriginMismatch { .. }
    ));
    assert!(matches!(
        verify_cosigned_balance(
            &note,
            &key(),
            &checkpoint(),
            Amount::parse("112.04").unwrap()
        ),
        Err(StatementError::BalanceMismatch { .. })
    ));
    assert!(matches!(
        verify_cosigned_balance(&signed(&dispute()), &key(), &checkpoint(), b),
        Err(StatementError::WrongKind {
            expected: "balance",
            got: "dispute"
        })
    ));
}

/// Tampering with the signed bytes: each kind fails with its own reason.
#[test]
fn tampered_statements_fail_with_named_reasons() {
    let note = signed(&balance());
    let k = key();
    let edit = |from: &str, to: &str| {
        assert!(note.contains(from), "{from}");
        verify(&note.replacen(from, to, 1), &k).unwrap_err()
    };
    // Same form, other value: only the signature can tell.
    let flip_last = |hex: String| {
        let last = if hex.ends_with('0') { "1" } else { "0" };
        format!("{}{last}", &hex[..63])
    };
    let root = checkpoint().root.to_hex();
    let ledger_hex = ledger().to_hex();
    for (from, to) in [
        ("balance 112.045".to_owned(), "balance 112.046".to_owned()),
        ("period 2026-11".to_owned(), "period 2026-12".to_owned()),
        ("deltas 42".to_owned(), "deltas 43".to_owned()),
        (
            format!("root {root}"),
            format!("root {}", flip_last(root.clone())),
        ),
        (
            format!("ledger {ledger_hex}"),
            format!("ledger {}", flip_last(ledger_hex.clone())),
        ),
    ] {
        assert_eq!(edit(&from, &to), StatementError::InvalidSignature, "{from}");
    }
    assert_eq!(
        edit("balance 112.045", "balance 112.0450"),
        StatementError::NonCanonical {
            field: "balance",
            canonical: "112.045".into()
        }
    );
    assert_eq!(
        edit("balance 112.045", "balance  112.045"),
        StatementError::ExtraWhitespace { line: 7 }
    );
    assert_eq!(
        edit("deltas 42\n", "deltas 42 \n"),
        StatementError::ExtraWhitespace { line: 6 }
    );
    assert_eq!(
        edit("deltas 42", "deltas 042"),
        StatementError::NonCanonical {
            field: "deltas",
            canonical: "42".into()
        }
    );
    assert!(matches!(
        edit("period 2026-11\nroot", "root"),
        StatementError::WrongOrder { line: 4, .. }
    ));
    assert!(matches!(
        edit("balance 112.045\n", "balance 112.045\nnote hello\n"),
        StatementError::UnknownLine { line: 8, .. }
    ));
    assert!(matches!(
        edit("bvs-agreement/v1 balance", "bvs-agreement/v2 balance"),
        StatementError::UnknownFormat
    ));
    let truncated = note.replacen("balance 112.045\n", "", 1);
    assert!(matches!(
        verify(&truncated, &k),
        Err(StatementError::Truncated {
            expected: "balance",
            ..
        })
    ));
    assert_eq!(
        verify(&note[..note.len() - 20], &k),
        Err(StatementError::NotASignedNote)
    );
    // A signature that is not the key's: swapped key, corrupted bytes.
    let other = counterparty_key(KEY_NAME, &OTHER_SEED).unwrap();
    assert!(matches!(
        verify(&note, &other),
        Err(StatementError::NoSignatureByKey { .. })
    ));
    let sig_line = note.lines().last().unwrap();
    let b64 = sig_line.rsplit(' ').next().unwrap();
    let mut bytes = crate::note::base64_decode(b64).unwrap();
    bytes[10] ^= 1;
    let flipped = note.replacen(b64, &encode(&bytes), 1);
    assert_eq!(verify(&flipped, &k), Err(StatementError::InvalidSignature));
    assert!(matches!(
        verify(&note, "customer+00000000+AAAA"),
        Err(StatementError::MalformedKey(_))
    ));
    assert!(matches!(
        verify(&"x".repeat(STATEMENT_BYTES_MAX + 1), &k),
        Err(StatementError::TooLarge { .. })
    ));
}

#[test]
fn a_key_binding_must_be_signed_by_its_own_key() {
    let other = counterparty_key(KEY_NAME, &OTHER_SEED).unwrap();
    let for_other =
        Statement::Key(KeyBinding::new(Origin::parse(ORIGIN).unwrap(), ledger(), &other).unwrap());
    // Signed by SEED, naming OTHER's key.
    let note = signed(&for_other);
    assert_eq!(verify(&note, &key()), Err(StatementError::KeyNotSelfSigned));
    assert!(matches!(
        verify_key_binding(&note),
        Err(StatementError::NoSignatureByKey { .. })
    ));
    assert!(matches!(
        verify_key_binding(&signed(&balance())),
        Err(StatementError::WrongKind {
            expected: "key",
            ..
        })
    ));
}

#[test]
fn bad_values_are_refused_by_field() {
    let text = balance().to_text();
    let bad = |from: &str, to: &str| Statement::parse(&text.replacen(from, to, 1)).unwrap_err();
    assert!(matches!(
        bad("period 2026-11", "period 2026-13"),
        StatementError::BadValue {
            field: "period",
            ..
        }
    ));
    let upper = checkpoint().root.to_hex().to_uppercase();
    assert!(matches!(
        bad(&checkpoint().root.to_hex(), &upper),
        StatementError::NonCanonical { field: "root", .. }
    ));
    assert!(matches!(
        bad("balance 112.045", "balance 1.5e2"),
        StatementError::NonCanonical {
            field: "balance",
            ..
        }
    ));
    assert!(matches!(
        bad("origin bvs", "origin a+bvs"),
        StatementError::BadValue {
            field: "origin",
            ..
        }
    ));
    assert!(matches!(
        Statement::parse(&dispute().to_text().replacen("missing", "lost", 1)),
        Err(StatementError::BadValue {
            field: "divergence",
            ..
        })
    ));
    assert!(matches!(
        Statement::parse(&dispute().to_text().replacen("anchorId", "seq", 1)),
        Err(StatementError::BadValue { field: "delta", .. })
    ));
    // A statement signed with its own mistakes is still refused by form.
    assert!(matches!(
        verify(
            &resign(&text.replacen("deltas 42", "deltas 42.0", 1)),
            &key()
        ),
        Err(StatementError::BadValue {
            field: "deltas",
            ..
        })
    ));
}

#[test]
fn a_pinpointed_divergence_becomes_a_signed_dispute() {
    use crate::pinpoint::{pinpoint, CallerEntry, ServiceDelta, Start};
    let service: Vec<ServiceDelta> = [("1", "anc_0"), ("2", "anc_1")]
        .iter()
        .map(|(a, id)| ServiceDelta {
            item_hash: Hash32::digest(id.as_bytes()),
            anchor_id: (*id).to_owned(),
            reference_id: None,
            amount: Amount::parse(a).unwrap(),
        })
        .collect();
    let caller =
        vec![CallerEntry::new(None, Some("anc_0"), None, Amount::parse("1").unwrap()).unwrap()];
    let found = pinpoint(Start::ORIGIN, &service, &caller).unwrap();
    let d = Dispute::from_divergence(checkpoint(), found.divergence.as_ref().unwrap()).unwrap();
    assert_eq!(d.kind, DivergenceKind::Missing);
    assert_eq!((d.after, d.agreed), (1, Amount::parse("1").unwrap()));
    assert_eq!(d.delta, EntryId::ItemHash(Hash32::digest(b"anc_1")));
    let s = Statement::Dispute(d);
    assert_eq!(verify(&signed(&s), &key()).unwrap(), s);
}

#[test]
fn the_report_reads_as_checks() {
    let note = signed(&balance());
    let r = statement_report(&note, &key(), Some(&checkpoint().root));
    assert!(r.ok, "{r:?}");
    assert!(r.checks.iter().any(|c| c.name == "agreed"));
    let r = statement_report(&note, &key(), Some(&Hash32::digest(b"x")));
    assert!(!r.ok);
    let r = statement_report(
        &note,
        &counterparty_key(KEY_NAME, &OTHER_SEED).unwrap(),
        None,
    );
    assert!(!r.ok);
    assert_eq!(signature_bytes(&note, &key()).map(|s| s.len()), Some(64));
    assert_eq!(
        public_key_bytes(&key()),
        Some(
            *ed25519_dalek::SigningKey::from_bytes(&SEED)
                .verifying_key()
                .as_bytes()
        )
    );
}

#[test]
#[ignore = "prints the known-answer vectors"]
fn print_known_answers() {
    println!("KEY {}", key());
    println!("BALANCE {:?}", signed(&balance()));
    println!("HASH {}", item_hash(&signed(&balance())));
    println!("DISPUTE {:?}", signed(&dispute()));
    println!("BINDING {:?}", signed(&binding()));
}

fn encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

    #[test]
    fn parsing_never_panics(text in "\\PC{0,300}") {
        let _ = Statement::parse(&text);
        let _ = verify(&text, &key());
    }

    #[test]
    fn flipping_any_byte_of_a_signed_statement_fails_it(at in proptest::prelude::any::<proptest::sample::Index>(), bit in 0u8..7) {
        let note = signed(&balance());
        let mut bytes = note.clone().into_bytes();
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        if let Ok(text) = String::from_utf8(bytes) {
            proptest::prop_assert!(verify(&text, &key()).is_err(), "{}", text);
        }
    }
}

/// Verifier key of the seed `[0x42; 32]` named `customer`.
const KAT_KEY: &str = "customer+6246b44f+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS";
const KAT_BALANCE: &str = concat!(
    "bvs-agreement/v1 balance\n",
    "origin bvs.example/log/sandbox\n",
    "ledger b5bbf093a28d4ff8e203941f102206379e9ae6e4a304829009a7670ca16a94c4\n",
    "period 2026-11\n",
    "root 4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2\n",
    "deltas 42\n",
    "balance 112.045\n",
    "\n",
    "— customer Yka0T7eQDWBBIZYmpMhPmUMNZLdipEViI0l1wZDdRkWhiL8pzXjCGYCk73jisMGK1YzXrHetJScJxlfOk1YuBabjsw8=\n",
);
/// `sha256sum` of the bytes of KAT_BALANCE (docs/agreement.md).
const KAT_BALANCE_ITEM_HASH: &str =
    "f8f3d1083e4bd6c0edc9954d171a627e3eedb15abb34b1b79515e34e6d6656f0";
const KAT_DISPUTE: &str = concat!(
    "bvs-agreement/v1 dispute\n",
    "origin bvs.example/log/sandbox\n",
    "ledger b5bbf093a28d4ff8e203941f102206379e9ae6e4a304829009a7670ca16a94c4\n",
    "period 2026-11\n",
    "root 4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2\n",
    "deltas 42\n",
    "divergence missing\n",
    "after 17\n",
    "delta anchorId anc_0017\n",
    "agreed -3.5\n",
    "\n",
    "— customer Yka0TyGTv32OotPnXY6YaIuQeEFUQy5YRc0VyWhs+GoDNu7RL+EALx2LcrvKfJ3jwjB8nw/58dKRw1q/5C5oXx6GJg0=\n",
);
const KAT_BINDING: &str = concat!(
    "bvs-agreement/v1 key\n",
    "origin bvs.example/log/sandbox\n",
    "ledger b5bbf093a28d4ff8e203941f102206379e9ae6e4a304829009a7670ca16a94c4\n",
    "key customer+6246b44f+ASFS+NGbeR0kRTJC4V8uq2y3z/p7al7TAJeWDgaYgdsS\n",
    "\n",
    "— customer Yka0T2j6ed7dyoLth4reAAm5Gqjgo5fnB36BVcRn9EUHCIhwaba7OR9iW1wOaAM4UJ8Uu6aCZdxU0TeNh8RVtnwDxwo=\n",
);
