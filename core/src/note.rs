//! Signed tree heads: C2SP tlog-checkpoint bodies in C2SP signed notes,
//! signed with Ed25519. Signing (the service, feature `server`) goes
//! through `signed_note` and `tlog_tiles::Checkpoint`; verification is
//! this module's own reading of the two formats with `ed25519-dalek`'s
//! signature check, so the browser verifier needs neither crate. Tests
//! hold the two readings to the same answers.
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
#[cfg(feature = "server")]
use ed25519_dalek::{Signer as _, SigningKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
#[cfg(feature = "server")]
use signed_note::Note;

/// Largest signed note we read, in bytes. Ours are ~200 bytes; room for a
/// few witness cosignatures. // spec: silent; bounds work on hostile input
pub const NOTE_BYTES_MAX: usize = 8 * 1024;
/// Signature algorithm byte of Ed25519 in signed-note keys. // C2SP signed-note
const ALG_ED25519: u8 = 0x01;
/// Most signature lines a note may carry, as `signed_note` allows. // C2SP signed-note
const NOTE_SIGNATURES_MAX: usize = 100;

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
    #[error(
        "checkpoint origin {} is not the trusted log {}",
        crate::json::quoted(.got),
        crate::json::quoted(.expected)
    )]
    OriginMismatch { expected: String, got: String },
    #[error("no signature by the trusted key {key_name}+{key_id:08x}")]
    NoTrustedSignature { key_name: String, key_id: u32 },
    #[error("the signature by the trusted key does not match the note text")]
    InvalidSignature,
}

#[cfg(feature = "server")]
fn verifier_key_bytes(signing: &SigningKey) -> Vec<u8> {
    let mut v = Vec::with_capacity(33);
    v.push(ALG_ED25519);
    v.extend_from_slice(signing.verifying_key().as_bytes());
    v
}

/// A key name (and a log origin) per C2SP signed-note: non-empty, no
/// white space, no `+`.
pub(crate) fn key_name_valid(name: &str) -> bool {
    !(name.is_empty() || name.chars().any(char::is_whitespace) || name.contains('+'))
}

#[cfg(feature = "server")]
fn check_origin(origin: &str) -> Result<(), NoteError> {
    if key_name_valid(origin) && !origin.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(NoteError::InvalidOrigin)
    }
}

/// A signed-note signer from an Ed25519 seed: the log's tree heads and
/// the counterparties' statements (`agreement`) are both signed with one.
#[cfg(feature = "server")]
pub(crate) struct SeedSigner {
    name: String,
    id: u32,
    key: SigningKey,
}

#[cfg(feature = "server")]
impl SeedSigner {
    /// The signer named `name` (not checked here: callers check it as
    /// their document requires), its key id over `0x01 || public key`.
    pub(crate) fn new(name: &str, seed: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(seed);
        Self {
            name: name.to_owned(),
            id: signed_note::key_id(name, &verifier_key_bytes(&key)),
            key,
        }
    }

    pub(crate) fn verifying_key(&self) -> ed25519_dalek::VerifyingKey {
        self.key.verifying_key()
    }
}

#[cfg(feature = "server")]
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
#[cfg(feature = "server")]
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
#[cfg(feature = "server")]
pub fn sign_tree_head(
    origin: &str,
    size: TreeSize,
    root: &Hash32,
    seed: &[u8; 32],
) -> Result<String, NoteError> {
    check_origin(origin)?;
    let checkpoint = tlog_tiles::Checkpoint::new(origin, size.0, (*root).into(), "")
        .map_err(|e| NoteError::Malformed(e.to_string()))?;
    let signer = SeedSigner::new(origin, seed);
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
    let key = VerifierKey::parse(verifier_key)?;
    let malformed = || NoteError::Malformed("malformed note".into());
    let (text, signatures) = split_note(note_text).ok_or_else(malformed)?;
    // Like `signed_note`: the first signature by the trusted key decides,
    // repeats of it are skipped, signatures by other keys are ignored.
    let mut verified = false;
    for (name, id, signature) in signatures {
        if verified || name != key.name || id != key.id {
            continue;
        }
        let signature =
            <[u8; 64]>::try_from(signature.as_slice()).map_err(|_| NoteError::InvalidSignature)?;
        // `Verifier::verify`, the check `signed_note` makes.
        ed25519_dalek::Verifier::verify(
            &key.key,
            text.as_bytes(),
            &ed25519_dalek::Signature::from_bytes(&signature),
        )
        .map_err(|_| NoteError::InvalidSignature)?;
        verified = true;
    }
    if !verified {
        return Err(NoteError::NoTrustedSignature {
            key_name: key.name.to_owned(),
            key_id: key.id,
        });
    }
    let (origin, size, root) = read_checkpoint(&text)?;
    if origin != key.name {
        return Err(NoteError::OriginMismatch {
            expected: key.name.to_owned(),
            got: origin.to_owned(),
        });
    }
    Ok(TreeHead {
        origin: origin.to_owned(),
        size,
        root,
    })
}

/// A parsed verifier key `<name>+<8 hex digit id>+<base64(0x01 || key)>`.
pub(crate) struct VerifierKey<'a> {
    pub(crate) name: &'a str,
    pub(crate) id: u32,
    pub(crate) key: ed25519_dalek::VerifyingKey,
}

impl<'a> VerifierKey<'a> {
    pub(crate) fn parse(text: &'a str) -> Result<Self, NoteError> {
        let (name, id, key) = vkey_parts(text)?;
        if key[0] != ALG_ED25519 {
            return Err(NoteError::MalformedKey("unknown verifier algorithm".into()));
        }
        let key = ed25519_key(&key[1..])?;
        Ok(Self { name, id, key })
    }
}

/// The parts of a vkey `<name>+<8 hex digit id>+<base64(type || key)>`:
/// name, id (checked against the name and key) and the type byte
/// followed by the key material (never empty). Any signature type.
pub(crate) fn vkey_parts(text: &str) -> Result<(&str, u32, Vec<u8>), NoteError> {
    let format = || NoteError::MalformedKey("malformed verifier key".into());
    let (name, rest) = text.split_once('+').ok_or_else(format)?;
    let (id_hex, key_b64) = rest.split_once('+').ok_or_else(format)?;
    if id_hex.len() != 8 || !id_hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format());
    }
    // Eight hex digits, checked above.
    let id = id_hex.bytes().fold(0u32, |id, b| {
        (id << 4) | (b as char).to_digit(16).unwrap_or(0)
    });
    let key = base64_decode(key_b64).ok_or_else(format)?;
    if !key_name_valid(name) || key.is_empty() {
        return Err(format());
    }
    if id != key_id(name, &key) {
        return Err(NoteError::MalformedKey("invalid verifier ID".into()));
    }
    Ok((name, id, key))
}

/// 32 bytes of an Ed25519 public key, as a verifying key.
pub(crate) fn ed25519_key(bytes: &[u8]) -> Result<ed25519_dalek::VerifyingKey, NoteError> {
    let format = || NoteError::MalformedKey("malformed verifier key".into());
    let bytes = <[u8; 32]>::try_from(bytes).map_err(|_| format())?;
    ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(|_| format())
}

/// A signed-note key id: the first 4 bytes of SHA-256(name || "\n" || key).
pub(crate) fn key_id(name: &str, key: &[u8]) -> u32 {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update(b"\n")
        .chain_update(key)
        .finalize();
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// A signature line: key name, key id, signature bytes.
pub(crate) type NoteSignature<'a> = (&'a str, u32, Vec<u8>);

/// Splits a signed note into its signed text (ending in a newline) and its
/// signature lines `— <name> <base64(key id || signature)>`, by the rules
/// `signed_note` applies: no control characters but newlines, a blank line
/// before the signatures, every line ending in a newline, at most
/// [`NOTE_SIGNATURES_MAX`] signatures. `None` if the note is malformed.
pub(crate) fn split_note(note: &str) -> Option<(String, Vec<NoteSignature<'_>>)> {
    if note.chars().any(|c| c < ' ' && c != '\n') {
        return None;
    }
    // The last blank line (a byte search: a &str pattern would bring the
    // Two-Way searcher into the browser verifier).
    let blank = note.as_bytes().windows(2).rposition(|w| w == b"\n\n")?;
    let (text, signatures) = (note.get(..blank)?, note.get(blank + 2..)?);
    let signatures = signatures.strip_suffix('\n')?;
    let mut out = Vec::new();
    for line in signatures.split('\n') {
        let (name, b64) = line.strip_prefix("\u{2014} ")?.split_once(' ')?;
        let bytes = base64_decode(b64)?;
        if b64.is_empty() || bytes.len() < 5 || !key_name_valid(name) {
            return None;
        }
        let id = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        out.push((name, id, bytes[4..].to_vec()));
        if out.len() > NOTE_SIGNATURES_MAX {
            return None;
        }
    }
    Some((format!("{text}\n"), out))
}

/// Standard base64 (RFC 4648 section 4) as the `base64` crate's strict
/// STANDARD engine reads it: padded to a multiple of 4, `=` only at the
/// end, unused trailing bits zero; anything else is `None`. Hand-written
/// because the crate's engine was ~3 KB of the browser verifier; a test
/// holds the two to the same answers.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (i, chunk) in bytes.chunks_exact(4).enumerate() {
        let last = (i + 1) * 4 == bytes.len();
        let pad = match chunk {
            [_, _, b'=', b'='] if last => 2,
            [_, _, _, b'='] if last => 1,
            _ => 0,
        };
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | sextet(c)?;
        }
        n <<= 6 * pad;
        let [_, a, b, c] = n.to_be_bytes();
        // The bits a shorter final group leaves unused must be zero.
        let unused = match pad {
            2 => u32::from(b) | u32::from(c),
            1 => u32::from(c),
            _ => 0,
        };
        if unused != 0 {
            return None;
        }
        out.extend_from_slice(&[a, b, c][..3 - pad]);
    }
    Some(out)
}

/// Standard base64 (RFC 4648 section 4), padded: what
/// [`base64_decode`] reads back.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A C2SP tlog-checkpoint body: exactly `<origin>\n<size>\n<base64 root>\n`,
/// the size in decimal without leading zeros.
pub(crate) fn read_checkpoint(text: &str) -> Result<(&str, TreeSize, Hash32), NoteError> {
    let body = || NoteError::Malformed("body is not origin, size and base64 root lines".into());
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .ok_or_else(body)?
        .split('\n')
        .collect();
    let [origin, size, root, rest @ ..] = lines.as_slice() else {
        return Err(body());
    };
    // An empty first line is no origin (tlog_tiles refuses it as malformed,
    // not as another log's head).
    if origin.is_empty() {
        return Err(body());
    }
    let n: u64 = size.parse().map_err(|_| body())?;
    if *size != n.to_string() {
        return Err(body());
    }
    let root = base64_decode(root)
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(body)?;
    if !rest.is_empty() {
        return Err(if rest.iter().all(|l| !l.is_empty()) {
            NoteError::ExtraLines
        } else {
            body()
        });
    }
    Ok((origin, TreeSize(n), Hash32(root)))
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn base64_reads_as_the_base64_crate_reads(
            text in "[A-Za-z0-9+/=]{0,12}|[A-Za-z0-9+/= \n_-]{0,9}",
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        ) {
            use base64::Engine as _;
            let crate_reads = |t: &str| base64::engine::general_purpose::STANDARD.decode(t).ok();
            proptest::prop_assert_eq!(base64_decode(&text), crate_reads(&text), "{}", text);
            let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
            proptest::prop_assert_eq!(&base64_encode(&bytes), &encoded);
            proptest::prop_assert_eq!(base64_decode(&encoded), Some(bytes));
        }
    }

    #[test]
    fn a_body_with_an_empty_origin_line_is_malformed() {
        // Found by note_cross_check's property test: tlog_tiles calls it
        // malformed; core named it another log's head (OriginMismatch).
        let root = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [7; 32]);
        assert!(matches!(
            read_checkpoint(&format!("\n0\n{root}\n")),
            Err(NoteError::Malformed(_))
        ));
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
