//! Checking a signed statement: its signature by the counterparty's key,
//! and what it says against the checkpoint it names, field by field.

use super::{
    BalanceStatement, CheckpointRef, KeyBinding, Origin, Statement, StatementError,
    STATEMENT_BYTES_MAX,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::note::{split_note, VerifierKey};
use crate::types::Period;
use crate::verify::{Check, Detail};

/// Checks a signed statement against the counterparty's verifier key and
/// returns what it says. Signatures by other keys (witnesses) are ignored;
/// a key binding must be signed by the key it binds.
///
/// # Errors
/// One [`StatementError`] per reason: size, key form, note form, statement
/// form (as [`Statement::parse`]), no signature by the key, a bad one.
pub fn verify(signed: &str, verifier_key: &str) -> Result<Statement, StatementError> {
    if signed.len() > STATEMENT_BYTES_MAX {
        return Err(StatementError::TooLarge {
            max: STATEMENT_BYTES_MAX,
        });
    }
    let key = VerifierKey::parse(verifier_key)
        .map_err(|e| StatementError::MalformedKey(e.to_string()))?;
    let (text, signatures) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    // The statement's own form first: a truncated or re-spaced statement
    // is told as such, not only as a signature that fails.
    let statement = Statement::parse(&text)?;
    let signature = signatures
        .iter()
        .find(|(name, id, _)| *name == key.name && *id == key.id)
        .ok_or_else(|| StatementError::NoSignatureByKey {
            key_name: key.name.to_owned(),
            key_id: key.id,
        })?;
    let signature = <[u8; 64]>::try_from(signature.2.as_slice())
        .map_err(|_| StatementError::InvalidSignature)?;
    // Strict: no small-order key or malleable encoding signs a statement
    // (canonical statements, `canonical`).
    key.key
        .verify_strict(
            text.as_bytes(),
            &ed25519_dalek::Signature::from_bytes(&signature),
        )
        .map_err(|_| StatementError::InvalidSignature)?;
    if let Statement::Key(binding) = &statement {
        if binding.key != verifier_key {
            return Err(StatementError::KeyNotSelfSigned);
        }
    }
    Ok(statement)
}

/// What a signed statement says, read strictly but **not verified**: the
/// service reads it to find the ledger (and so the key) it must be checked
/// against, then checks it with [`verify`].
///
/// # Errors
/// As [`verify`] before the signature: size, note form, statement form.
pub fn read_unverified(signed: &str) -> Result<Statement, StatementError> {
    if signed.len() > STATEMENT_BYTES_MAX {
        return Err(StatementError::TooLarge {
            max: STATEMENT_BYTES_MAX,
        });
    }
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    Statement::parse(&text)
}

/// Checks a signed key binding: it must be signed by the key it names.
///
/// # Errors
/// As [`verify`], and [`StatementError::WrongKind`] for another statement.
pub fn verify_key_binding(signed: &str) -> Result<KeyBinding, StatementError> {
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    let key = match Statement::parse(&text)? {
        Statement::Key(binding) => binding.key,
        other => {
            return Err(StatementError::WrongKind {
                expected: "key",
                got: other.kind(),
            })
        }
    };
    match verify(signed, &key)? {
        Statement::Key(binding) => Ok(binding),
        other => Err(StatementError::WrongKind {
            expected: "key",
            got: other.kind(),
        }),
    }
}

/// What a verified balance or dispute statement says, as a check's
/// detail, once it names the checkpoint `reference` (and, for a balance,
/// its `balance`); a key statement is the wrong kind here. Shared by the
/// public answer's checks and a receipt's (`receipt_checks`).
///
/// # Errors
/// `reference.check`'s errors, `BalanceMismatch`, `WrongKind`.
pub(super) fn statement_says(
    statement: &Statement,
    reference: &CheckpointRef,
    balance: &Amount,
    counterparty: &str,
    at: &str,
) -> Result<String, StatementError> {
    Ok(match statement {
        Statement::Balance(b) => {
            reference.check(&b.checkpoint)?;
            if b.balance != *balance {
                return Err(StatementError::BalanceMismatch {
                    expected: *balance,
                    got: b.balance,
                });
            }
            format!(
                "agreed by the customer's key {counterparty} at {at}: period {} ends at balance {} after {} deltas",
                b.checkpoint.period, b.balance, b.checkpoint.deltas
            )
        }
        Statement::Dispute(d) => {
            reference.check(&d.checkpoint)?;
            format!(
                "disputed by the customer's key {counterparty} at {at}: {} delta after {} agreed deltas (balance {})",
                d.kind.as_str(),
                d.after,
                d.agreed
            )
        }
        Statement::Key(_) => {
            return Err(StatementError::WrongKind {
                expected: "balance or dispute",
                got: "key",
            })
        }
    })
}

impl CheckpointRef {
    /// Checks that a statement names this checkpoint (the one a receipt or
    /// the log shows), field by field.
    ///
    /// # Errors
    /// `OriginMismatch`, `LedgerMismatch`, `PeriodMismatch`,
    /// `RootMismatch` or `DeltasMismatch`.
    pub fn check(&self, named: &CheckpointRef) -> Result<(), StatementError> {
        check_place(self.place(), named.place())?;
        let (root, deltas) = ((self.root, named.root), (self.deltas, named.deltas));
        same(root, root.0.ct_eq(&root.1), |expected, got| {
            StatementError::RootMismatch { expected, got }
        })?;
        same(deltas, deltas.0 == deltas.1, |expected, got| {
            StatementError::DeltasMismatch { expected, got }
        })
    }
}

/// Checks a signed balance statement against the key and the checkpoint
/// it should agree with (as the receipt or the log shows it).
///
/// # Errors
/// As [`verify`], `WrongKind` for a dispute or key binding, a mismatch
/// per field, [`StatementError::BalanceMismatch`] for another balance.
pub fn verify_cosigned_balance(
    signed: &str,
    verifier_key: &str,
    checkpoint: &CheckpointRef,
    balance: Amount,
) -> Result<BalanceStatement, StatementError> {
    let statement = match verify(signed, verifier_key)? {
        Statement::Balance(b) => b,
        other => {
            return Err(StatementError::WrongKind {
                expected: "balance",
                got: other.kind(),
            })
        }
    };
    checkpoint.check(&statement.checkpoint)?;
    if statement.balance != balance {
        return Err(StatementError::BalanceMismatch {
            expected: balance,
            got: statement.balance,
        });
    }
    Ok(statement)
}

/// A named check from its outcome: the detail either way.
pub(super) fn check(name: String, r: Detail) -> Check {
    let ok = r.is_ok();
    let detail = r.unwrap_or_else(|e| e);
    Check { name, ok, detail }
}

/// A statement error as a check's detail, starting with its reason's name.
pub(super) fn named(e: StatementError) -> String {
    format!("{}: {e}", e.reason())
}

/// Decodes the signature bytes of a signed statement by the given key, for
/// tools that check it with a standard Ed25519 implementation.
pub fn signature_bytes(signed: &str, verifier_key: &str) -> Option<[u8; 64]> {
    let key = VerifierKey::parse(verifier_key).ok()?;
    let (_, signatures) = split_note(signed)?;
    let (_, _, sig) = signatures
        .into_iter()
        .find(|(name, id, _)| *name == key.name && *id == key.id)?;
    <[u8; 64]>::try_from(sig.as_slice()).ok()
}

/// The raw 32-byte Ed25519 public key inside a verifier key (for tools
/// that want it without the signed-note framing).
pub fn public_key_bytes(verifier_key: &str) -> Option<[u8; 32]> {
    VerifierKey::parse(verifier_key)
        .ok()
        .map(|k| k.key.to_bytes())
}

/// Where a statement is about: its log (origin), ledger and period.
pub(super) type Place<'a> = (&'a Origin, &'a Hash32, Period);

impl CheckpointRef {
    pub(super) fn place(&self) -> Place<'_> {
        (&self.origin, &self.ledger, self.period)
    }
}

/// The place a statement names against the one expected: the first checks
/// of every kind that names a period of a ledger (a checkpoint's
/// statement, an inclusion co-signature).
pub(super) fn check_place(expected: Place<'_>, got: Place<'_>) -> Result<(), StatementError> {
    if expected.0 != got.0 {
        return Err(StatementError::OriginMismatch {
            expected: expected.0 .0.clone(),
            got: got.0 .0.clone(),
        });
    }
    if !expected.1.ct_eq(got.1) {
        return Err(StatementError::LedgerMismatch {
            expected: *expected.1,
            got: *got.1,
        });
    }
    if expected.2 != got.2 {
        return Err(StatementError::PeriodMismatch {
            expected: expected.2,
            got: got.2,
        });
    }
    Ok(())
}

/// One more field a statement names, as `(expected, got)`: `Ok` when
/// `equal`, else the mismatch `error` makes of the two.
pub(super) fn same<T>(
    (expected, got): (T, T),
    equal: bool,
    error: fn(T, T) -> StatementError,
) -> Result<(), StatementError> {
    if equal {
        Ok(())
    } else {
        Err(error(expected, got))
    }
}
