//! core's own reading of signed tree heads (C2SP signed note + tlog
//! checkpoint) gives the same answer as `signed_note` and
//! `tlog_tiles::Checkpoint`, the crates the service signs with: on valid
//! heads, on validly signed odd bodies and on mangled notes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::note::{self, NoteError, TreeHead};
use ed25519_dalek::{Signer as _, SigningKey};
use proptest::prelude::*;
use signed_note::{Note, NoteError as LibNoteError, StandardVerifier, VerifierList};

const ORIGIN: &str = "bvs.example/log/production";
const SEED: [u8; 32] = [3; 32];
const WITNESS_SEED: [u8; 32] = [4; 32];

/// The reading core had before it read notes itself, kept as the reference.
fn reference(note_text: &str, verifier_key: &str) -> Result<TreeHead, NoteError> {
    if note_text.len() > note::NOTE_BYTES_MAX {
        return Err(NoteError::TooLarge {
            max: note::NOTE_BYTES_MAX,
        });
    }
    let verifier =
        StandardVerifier::new(verifier_key).map_err(|e| NoteError::MalformedKey(e.to_string()))?;
    let key_name = signed_note::Verifier::name(&verifier).to_owned();
    let key_id = signed_note::Verifier::key_id(&verifier);
    let note =
        Note::from_bytes(note_text.as_bytes()).map_err(|e| NoteError::Malformed(e.to_string()))?;
    match note.verify(&VerifierList::new(vec![Box::new(verifier)])) {
        Ok(_) => {}
        Err(LibNoteError::UnverifiedNote) => {
            return Err(NoteError::NoTrustedSignature { key_name, key_id })
        }
        Err(LibNoteError::InvalidSignature { .. }) => return Err(NoteError::InvalidSignature),
        Err(e) => return Err(NoteError::Malformed(e.to_string())),
    }
    let checkpoint = tlog_tiles::Checkpoint::from_bytes(note.text()).map_err(|_| {
        NoteError::Malformed("body is not origin, size and base64 root lines".into())
    })?;
    if !checkpoint.extension().is_empty() {
        return Err(NoteError::ExtraLines);
    }
    if checkpoint.origin() != key_name {
        return Err(NoteError::OriginMismatch {
            expected: key_name,
            got: checkpoint.origin().to_owned(),
        });
    }
    Ok(TreeHead {
        origin: checkpoint.origin().to_owned(),
        size: TreeSize(checkpoint.size()),
        root: Hash32(checkpoint.hash().0),
    })
}

fn signature_line(text: &str, name: &str, seed: &[u8; 32]) -> String {
    let key = SigningKey::from_bytes(seed);
    let mut public = vec![1u8];
    public.extend_from_slice(key.verifying_key().as_bytes());
    let mut blob = signed_note::key_id(name, &public).to_be_bytes().to_vec();
    blob.extend_from_slice(&key.sign(text.as_bytes()).to_bytes());
    format!(
        "— {name} {}\n",
        base64::engine::general_purpose::STANDARD.encode(blob)
    )
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn assert_same(note_text: &str, key: &str) -> Result<(), TestCaseError> {
    let ours = note::verify_tree_head(note_text, key);
    let theirs = reference(note_text, key);
    prop_assert_eq!(&ours, &theirs, "note {:?} key {:?}", note_text, key);
    Ok(())
}

fn key() -> String {
    note::public_key_string(ORIGIN, &SEED).unwrap()
}

#[test]
fn valid_heads_and_known_bad_ones_read_the_same() {
    let root = Hash32::digest(b"r");
    let good = note::sign_tree_head(ORIGIN, TreeSize(12), &root, &SEED).unwrap();
    let witness = signature_line(
        &format!("{ORIGIN}\n12\n{}\n", b64(&root.0)),
        "witness.example",
        &WITNESS_SEED,
    );
    let other_key = note::public_key_string("other.example", &SEED).unwrap();
    for (text, key) in [
        (good.clone(), key()),
        (format!("{good}{witness}"), key()),
        (
            good.replacen("\n\n— ", &format!("\n\n{witness}— "), 1),
            key(),
        ),
        (good.replacen("12", "13", 1), key()),
        (good.clone(), other_key),
        (good.clone(), key().replacen('+', "+0", 1)),
        (good.clone(), format!("{ORIGIN}+00000000+{}", b64(&[1; 33]))),
        (good.clone(), "x+y+z".into()),
        (good.replace('\n', "\r\n"), key()),
        (format!("{good}{}", good.lines().last().unwrap()), key()),
    ] {
        assert_same(&text, &key).unwrap();
    }
}

fn body_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(ORIGIN.to_string()),
        Just("other.example".to_string()),
        Just(String::new()),
        Just(" ".to_string()),
        "(0|1|07|12|\\+5|-1|18446744073709551615|18446744073709551616| 3)",
        Just(b64(&[7; 32])),
        Just(b64(&[7; 31])),
        Just(b64(&[7; 33])),
        Just(b64(&[7; 32]).trim_end_matches('=').to_string()),
        "[a-z0-9 +/=]{0,6}",
    ]
}

/// A mangling of a note: insert, delete or replace a short run.
fn mangle(text: &str, at: usize, len: usize, with: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    let end = (at + len).min(chars.len());
    chars[..at]
        .iter()
        .chain(with.chars().collect::<Vec<_>>().iter())
        .chain(chars[end..].iter())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn validly_signed_bodies_of_any_shape_read_the_same(
        lines in prop::collection::vec(body_line(), 0..6),
        trailing_newline in any::<bool>(),
        witness_first in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if trailing_newline {
            text.push('\n');
        }
        let ours = signature_line(&text, ORIGIN, &SEED);
        let witness = signature_line(&text, "witness.example", &WITNESS_SEED);
        let sigs = if witness_first { format!("{witness}{ours}") } else { format!("{ours}{witness}") };
        assert_same(&format!("{text}\n{sigs}"), &key())?;
    }

    #[test]
    fn mangled_notes_read_the_same(
        size in 0u64..1000,
        at in 0usize..400,
        len in 0usize..4,
        with in prop_oneof![
            Just(String::new()), Just("\n".to_string()), Just("\n\n".to_string()),
            Just("— ".to_string()), Just(" ".to_string()), Just("+".to_string()),
            Just("=".to_string()), "[A-Za-z0-9+/=]{1,4}", Just("\u{0}".to_string()),
        ],
        with_witness in any::<bool>(),
    ) {
        let root = Hash32::digest(&size.to_le_bytes());
        let mut good = note::sign_tree_head(ORIGIN, TreeSize(size), &root, &SEED).unwrap();
        if with_witness {
            let body = good.split("\n\n").next().unwrap().to_string() + "\n";
            good.push_str(&signature_line(&body, "witness.example", &WITNESS_SEED));
        }
        assert_same(&mangle(&good, at, len, &with), &key())?;
    }

    #[test]
    fn mangled_keys_read_the_same(
        at in 0usize..80,
        len in 0usize..3,
        with in prop_oneof![Just(String::new()), Just("+".to_string()), "[A-Za-z0-9+/= ]{1,3}"],
    ) {
        let good = note::sign_tree_head(ORIGIN, TreeSize(5), &Hash32::EMPTY, &SEED).unwrap();
        assert_same(&good, &mangle(&key(), at, len, &with))?;
    }
}
