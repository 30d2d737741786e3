//! Canonical statements (issue 25). A signed note may carry signature
//! lines by any key, and lines by keys nobody checks are ignored when it
//! is verified, so the bytes of a note are not what makes a statement:
//! anyone can append a junk line to a published statement and get a "new"
//! note. The service stores, logs and hashes a statement in its canonical
//! form instead: its text and the signature lines of the keys that make it
//! (the signing key's own; for a key binding that rotates a key, the new
//! key's and the current key's), each exactly as written, every other line
//! dropped. Base64 is read strictly (`note::base64_decode`), so one
//! signature has one line, and signatures are checked strictly
//! (`verify_strict`: no small-order keys, no malleable encodings).

use super::{verify, KeyBinding, Statement, StatementError};
use crate::note::{base64_decode, split_note, VerifierKey};

fn malformed(e: impl std::fmt::Display) -> StatementError {
    StatementError::MalformedKey(e.to_string())
}

/// The signature lines of a signed note as written, each with the key
/// name and id it names.
fn signature_lines(signed: &str) -> Result<Vec<(&str, u32, &str)>, StatementError> {
    let blank = signed
        .as_bytes()
        .windows(2)
        .rposition(|w| w == b"\n\n")
        .ok_or(StatementError::NotASignedNote)?;
    let block = signed[blank + 2..]
        .strip_suffix('\n')
        .ok_or(StatementError::NotASignedNote)?;
    block
        .split('\n')
        .map(|line| {
            let (name, b64) = line
                .strip_prefix("\u{2014} ")
                .and_then(|l| l.split_once(' '))
                .ok_or(StatementError::NotASignedNote)?;
            let bytes = base64_decode(b64).ok_or(StatementError::NotASignedNote)?;
            let id = bytes
                .get(..4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or(StatementError::NotASignedNote)?;
            Ok((name, id, line))
        })
        .collect()
}

/// The first signature line of `key` in `signed`, if any.
pub(super) fn line_of<'a>(
    signed: &'a str,
    key: &VerifierKey<'_>,
) -> Result<Option<&'a str>, StatementError> {
    Ok(signature_lines(signed)?
        .into_iter()
        .find(|(name, id, _)| *name == key.name && *id == key.id)
        .map(|(_, _, line)| line))
}

/// `text` (through its last newline), a blank line, then `lines`.
pub(super) fn note(text: &str, lines: &[&str]) -> String {
    let mut out =
        String::with_capacity(text.len() + 1 + lines.iter().map(|l| l.len() + 1).sum::<usize>());
    out.push_str(text);
    out.push('\n');
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// A statement signed by `verifier_key`, checked ([`verify`]), and its
/// canonical form: its text and that key's own signature line only.
///
/// # Errors
/// As [`verify`].
pub fn canonical_statement(
    signed: &str,
    verifier_key: &str,
) -> Result<(Statement, String), StatementError> {
    let statement = verify(signed, verifier_key)?;
    let key = VerifierKey::parse(verifier_key).map_err(malformed)?;
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    let line = line_of(signed, &key)?.ok_or_else(|| StatementError::NoSignatureByKey {
        key_name: key.name.to_owned(),
        key_id: key.id,
    })?;
    Ok((statement, note(&text, &[line])))
}

/// Whether `signed` carries a valid signature by `verifier_key` over its
/// text: `false` when it has no line by that key.
///
/// # Errors
/// [`StatementError::InvalidSignature`] for a line by the key that does
/// not verify; a malformed note or key.
pub fn signed_by(signed: &str, verifier_key: &str) -> Result<bool, StatementError> {
    let key = VerifierKey::parse(verifier_key).map_err(malformed)?;
    let Some(line) = line_of(signed, &key)? else {
        return Ok(false);
    };
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    let b64 = line.rsplit(' ').next().unwrap_or_default();
    let bytes = base64_decode(b64).ok_or(StatementError::NotASignedNote)?;
    let signature = bytes
        .get(4..)
        .and_then(|s| <[u8; 64]>::try_from(s).ok())
        .ok_or(StatementError::InvalidSignature)?;
    key.key
        .verify_strict(
            text.as_bytes(),
            &ed25519_dalek::Signature::from_bytes(&signature),
        )
        .map_err(|_| StatementError::InvalidSignature)?;
    Ok(true)
}

/// A key binding in canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalBinding {
    pub binding: KeyBinding,
    /// The binding's text, the new key's own line, and the previous key's
    /// line when it signed the binding too.
    pub signed: String,
    /// The ledger's current key (`previous`) signed it: a rotation by the
    /// key's holder, not a change through an invitation alone.
    pub signed_by_previous: bool,
}

/// A self-signed key binding ([`super::verify_key_binding`]), with the
/// current key's signature when `previous` is given and signed it.
///
/// # Errors
/// As [`super::verify_key_binding`]; `InvalidSignature` for a line by
/// `previous` that does not verify.
pub fn canonical_key_binding(
    signed: &str,
    previous: Option<&str>,
) -> Result<CanonicalBinding, StatementError> {
    let binding = super::verify_key_binding(signed)?;
    let own = VerifierKey::parse(binding.key()).map_err(malformed)?;
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    let own_line = line_of(signed, &own)?.ok_or(StatementError::KeyNotSelfSigned)?;
    let mut lines = vec![own_line];
    let mut signed_by_previous = false;
    if let Some(previous) = previous.filter(|p| *p != binding.key()) {
        if signed_by(signed, previous)? {
            let key = VerifierKey::parse(previous).map_err(malformed)?;
            lines.extend(line_of(signed, &key)?);
            signed_by_previous = true;
        }
    }
    Ok(CanonicalBinding {
        signed: note(&text, &lines),
        binding,
        signed_by_previous,
    })
}

#[cfg(all(test, feature = "server"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::agreement::{counterparty_key, item_hash, sign, Origin};
    use crate::hash::Hash32;

    fn binding(key: &str) -> Statement {
        Statement::Key(
            KeyBinding::new(
                Origin::parse("example.com/log").unwrap(),
                Hash32::digest(b"ledger"),
                key,
            )
            .unwrap(),
        )
    }

    /// A junk line by a key nobody registered (68 zero bytes).
    fn junk(n: u8) -> String {
        format!("\u{2014} w{n} {}=\n", "A".repeat(91))
    }

    #[test]
    fn junk_lines_and_their_order_do_not_change_a_statements_canonical_form() {
        let key = counterparty_key("customer", &[3; 32]).unwrap();
        let signed = sign(&binding(&key), "customer", &[3; 32]).unwrap();
        let (_, plain) = canonical_statement(&signed, &key).unwrap();
        assert_eq!(
            plain, signed,
            "a note with only its own line is canonical already"
        );
        let padded = format!("{signed}{}", junk(1));
        let (text, own) = signed.split_once("\n\n").unwrap();
        let before = format!("{text}\n\n{}{own}", junk(2));
        for other in [padded, before] {
            assert_ne!(item_hash(&other), item_hash(&signed));
            let (_, c) = canonical_statement(&other, &key).unwrap();
            assert_eq!(c, signed);
        }
    }

    #[test]
    fn a_rotation_keeps_the_previous_keys_line_and_an_unsigned_change_does_not() {
        let old = counterparty_key("customer", &[3; 32]).unwrap();
        let new = counterparty_key("customer", &[4; 32]).unwrap();
        let by_new = sign(&binding(&new), "customer", &[4; 32]).unwrap();
        let by_old = sign(&binding(&new), "customer", &[3; 32]).unwrap();
        let both = format!(
            "{by_new}{}{}",
            junk(7),
            by_old.split_once("\n\n").unwrap().1
        );
        let rotated = canonical_key_binding(&both, Some(&old)).unwrap();
        assert!(rotated.signed_by_previous);
        assert_eq!(
            rotated.signed,
            format!("{by_new}{}", by_old.split_once("\n\n").unwrap().1)
        );
        assert!(signed_by(&rotated.signed, &old).unwrap());
        let changed = canonical_key_binding(&by_new, Some(&old)).unwrap();
        assert!(!changed.signed_by_previous);
        assert_eq!(changed.signed, by_new);
        // A line by the previous key over another text is refused.
        let elsewhere = Statement::Key(
            KeyBinding::new(
                Origin::parse("example.com/log").unwrap(),
                Hash32::digest(b"another ledger"),
                &new,
            )
            .unwrap(),
        );
        let wrong = sign(&elsewhere, "customer", &[3; 32]).unwrap();
        let tampered = format!("{by_new}{}", wrong.split_once("\n\n").unwrap().1);
        assert_eq!(
            canonical_key_binding(&tampered, Some(&old)).unwrap_err(),
            StatementError::InvalidSignature
        );
    }
}
