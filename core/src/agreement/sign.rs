//! Signing statements (feature `server`: the service's tests and the
//! sample fixtures sign as a counterparty would).

use super::{Statement, StatementError};
use crate::note::SeedSigner;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(super) fn test_signer(name: &str, seed: &[u8; 32]) -> impl signed_note::Signer {
    signer(name, seed).unwrap()
}

fn signer(name: &str, seed: &[u8; 32]) -> Result<SeedSigner, StatementError> {
    if !super::key_name_valid(name) {
        return Err(StatementError::MalformedKey(
            "key name must be non-empty, without spaces or '+'".into(),
        ));
    }
    Ok(SeedSigner::new(name, seed))
}

/// The counterparty's verifier key `<name>+<key id>+<base64(0x01 || key)>`.
/// The service never holds a customer's seed: this is for tests and
/// tools (the browser makes its own keys).
///
/// # Errors
/// [`StatementError::MalformedKey`] for a bad name.
pub fn counterparty_key(name: &str, seed: &[u8; 32]) -> Result<String, StatementError> {
    let s = signer(name, seed)?;
    Ok(signed_note::new_ed25519_verifier_key(
        name,
        &s.verifying_key(),
    ))
}

/// Signs a statement with the counterparty key `name` from `seed`,
/// returning the signed note (ends in a newline). Deterministic.
///
/// # Errors
/// [`StatementError::MalformedKey`] for a bad name,
/// [`StatementError::Signing`] if the note cannot be built.
pub fn sign(statement: &Statement, name: &str, seed: &[u8; 32]) -> Result<String, StatementError> {
    sign_text(&statement.to_text(), name, seed)
}

/// Signs an inclusion co-signature ([`super::Inclusion`]) as [`sign`]
/// signs a statement.
///
/// # Errors
/// As [`sign`].
#[cfg(feature = "liabilities")]
pub fn sign_inclusion(
    inclusion: &super::Inclusion,
    name: &str,
    seed: &[u8; 32],
) -> Result<String, StatementError> {
    sign_text(&inclusion.to_text(), name, seed)
}

fn sign_text(text: &str, name: &str, seed: &[u8; 32]) -> Result<String, StatementError> {
    let s = signer(name, seed)?;
    let mut note = signed_note::Note::new(text.as_bytes(), &[])
        .map_err(|e| StatementError::Signing(e.to_string()))?;
    note.add_sigs(&[&s])
        .map_err(|e| StatementError::Signing(e.to_string()))?;
    String::from_utf8(note.to_bytes()).map_err(|e| StatementError::Signing(e.to_string()))
}
