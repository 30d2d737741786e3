//! Signed tree heads: C2SP tlog-checkpoint bodies in C2SP signed notes,
//! signed with Ed25519 (`signed_note`, `tlog_tiles::Checkpoint`).
//!
//! ```text
//! <origin>
//! <tree size>
//! <base64 root>
//!
//! — <origin> <base64(key id || signature)>
//! ```
//!
//! The key name is the origin, so a head signed for the sandbox log can
//! never pass as a production head. Keys come in as 32-byte Ed25519 seeds
//! (hex in the worker's secrets); signing is deterministic, no randomness.

use crate::hash::Hash32;
use crate::merkle::TreeSize;
use ed25519_dalek::{Signer as _, SigningKey};
use serde::{Deserialize, Serialize};
use signed_note::{Note, NoteError as LibNoteError, StandardVerifier, VerifierList};

/// Largest signed note we read, in bytes. Ours are ~200 bytes; room for a
/// few witness cosignatures. // spec: silent; bounds work on hostile input
pub const NOTE_BYTES_MAX: usize = 8 * 1024;
/// Signature algorithm byte of Ed25519 in signed-note keys. // C2SP signed-note
const ALG_ED25519: u8 = 0x01;

/// What a signed tree head says: the log `origin` had `size` leaves with `root`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeHead {
    pub origin: String,
    pub size: TreeSize,
    pub root: Hash32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("origin must be non-empty, without spaces, '+' or line breaks")]
    InvalidOrigin,
    #[error("verifier key is malformed: {0}")]
    MalformedKey(String),
    #[error("signed note is larger than {max} bytes")]
    TooLarge { max: usize },
    #[error("signed note is malformed: {0}")]
    Malformed(String),
    #[error("checkpoint has extra lines after the root; none are allowed")]
    ExtraLines,
    #[error("checkpoint origin {got:?} is not the trusted log {expected:?}")]
    OriginMismatch { expected: String, got: String },
    #[error("no signature by the trusted key {key_name}+{key_id:08x}")]
    NoTrustedSignature { key_name: String, key_id: u32 },
    #[error("the signature by the trusted key does not match the note text")]
    InvalidSignature,
}

fn verifier_key_bytes(signing: &SigningKey) -> Vec<u8> {
    let mut v = Vec::with_capacity(33);
    v.push(ALG_ED25519);
    v.extend_from_slice(signing.verifying_key().as_bytes());
    v
}

fn check_origin(origin: &str) -> Result<(), NoteError> {
    if signed_note::is_key_name_valid(origin) && !origin.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(NoteError::InvalidOrigin)
    }
}

struct SeedSigner {
    name: String,
    id: u32,
    key: SigningKey,
}

impl signed_note::Signer for SeedSigner {
    fn name(&self) -> &str {
        &self.name
    }
    fn key_id(&self) -> u32 {
        self.id
    }
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, ed25519_dalek::SignatureError> {
        Ok(self.key.sign(msg).to_bytes().to_vec())
    }
}

/// The verifier key string to publish: `<origin>+<hex key id>+<base64(0x01 || public key)>`.
///
/// # Errors
/// [`NoteError::InvalidOrigin`].
pub fn public_key_string(origin: &str, seed: &[u8; 32]) -> Result<String, NoteError> {
    check_origin(origin)?;
    let key = SigningKey::from_bytes(seed);
    Ok(signed_note::new_ed25519_verifier_key(
        origin,
        &key.verifying_key(),
    ))
}

/// Signs a tree head, returning the full signed-note text (ends in `\n`).
///
/// # Errors
/// [`NoteError::InvalidOrigin`].
pub fn sign_tree_head(
    origin: &str,
    size: TreeSize,
    root: &Hash32,
    seed: &[u8; 32],
) -> Result<String, NoteError> {
    check_origin(origin)?;
    let checkpoint = tlog_tiles::Checkpoint::new(origin, size.0, (*root).into(), "")
        .map_err(|e| NoteError::Malformed(e.to_string()))?;
    let key = SigningKey::from_bytes(seed);
    let signer = SeedSigner {
        name: origin.to_owned(),
        id: signed_note::key_id(origin, &verifier_key_bytes(&key)),
        key,
    };
    let mut note =
        Note::new(&checkpoint.to_bytes(), &[]).map_err(|e| NoteError::Malformed(e.to_string()))?;
    note.add_sigs(&[&signer])
        .map_err(|e| NoteError::Malformed(e.to_string()))?;
    String::from_utf8(note.to_bytes()).map_err(|e| NoteError::Malformed(e.to_string()))
}

/// Verifies a signed tree head against a trusted verifier key string and
/// returns what it says. Rejects a note with extension lines, one whose
/// origin is not the key's name, one not signed by the key, and any change
/// to the signed text. Signatures by other keys (witnesses) are ignored.
///
/// # Errors
/// One [`NoteError`] variant per reason.
pub fn verify_tree_head(note_text: &str, verifier_key: &str) -> Result<TreeHead, NoteError> {
    if note_text.len() > NOTE_BYTES_MAX {
        return Err(NoteError::TooLarge {
            max: NOTE_BYTES_MAX,
        });
    }
    let verifier =
        StandardVerifier::new(verifier_key).map_err(|e| NoteError::MalformedKey(e.to_string()))?;
    let key_name = signed_note::Verifier::name(&verifier).to_owned();
    let key_id = signed_note::Verifier::key_id(&verifier);
    let note =
        Note::from_bytes(note_text.as_bytes()).map_err(|e| NoteError::Malformed(e.to_string()))?;
    let known = VerifierList::new(vec![Box::new(verifier)]);
    match note.verify(&known) {
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
        root: (*checkpoint.hash()).into(),
    })
}

/// The API's `txHash`: SHA-256 of the full signed-note bytes.
pub fn tree_head_hash(note_text: &str) -> Hash32 {
    Hash32::digest(note_text.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const ORIGIN: &str = "bvs.example/log/sandbox";

    #[test]
    fn sign_then_verify_round_trips() {
        let seed = [7u8; 32];
        let root = Hash32::digest(b"root");
        let note = sign_tree_head(ORIGIN, TreeSize(42), &root, &seed).unwrap();
        let key = public_key_string(ORIGIN, &seed).unwrap();
        assert!(key.starts_with("bvs.example/log/sandbox+"));
        let lines: Vec<&str> = note.lines().collect();
        assert_eq!(lines[0], ORIGIN);
        assert_eq!(lines[1], "42");
        assert_eq!(lines[3], "");
        assert!(lines[4].starts_with("— bvs.example/log/sandbox "));
        let head = verify_tree_head(&note, &key).unwrap();
        assert_eq!(
            head,
            TreeHead {
                origin: ORIGIN.into(),
                size: TreeSize(42),
                root
            }
        );
        // Deterministic: same inputs, same bytes, same txHash.
        assert_eq!(
            sign_tree_head(ORIGIN, TreeSize(42), &root, &seed).unwrap(),
            note
        );
        assert_eq!(tree_head_hash(&note), Hash32::digest(note.as_bytes()));
    }

    #[test]
    fn bad_origins_are_refused() {
        for bad in ["", "a b", "a+b", "a\nb"] {
            assert_eq!(
                sign_tree_head(bad, TreeSize(1), &Hash32::EMPTY, &[1; 32]),
                Err(NoteError::InvalidOrigin)
            );
        }
    }
}
