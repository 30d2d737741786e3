//! Counterparty statements: what a customer signs about its own ledger.
//!
//! Three statements, each a C2SP signed note (like the log's tree heads,
//! and in the spirit of `tlog-cosignature`): a text of `name value` lines
//! in a fixed order, a blank line, and a signature line by the
//! counterparty's Ed25519 key. docs/agreement.md has worked examples.
//!
//! ```text
//! bvs-agreement/v1 key            bvs-agreement/v1 balance       bvs-agreement/v1 dispute
//! origin <log origin>             origin <log origin>            origin <log origin>
//! ledger <ledger id, 64 hex>      ledger <ledger id>             ledger <ledger id>
//! key <verifier key>              period <YYYY-MM>               period <YYYY-MM>
//!                                 root <merkleRoot, 64 hex>      root <merkleRoot>
//!                                 deltas <deltaCount>            deltas <deltaCount>
//!                                 balance <final balance>        divergence <missing|extra|changed|reordered>
//!                                                                after <deltas agreed before it>
//!                                                                delta <itemHash|anchorId|referenceId> <id>
//!                                                                agreed <balance agreed before it>
//!
//! — <key name> <base64(key id || Ed25519 signature of the text above the blank line)>
//! ```
//!
//! - **key** binds "ledger L has counterparty key K". It is signed by K
//!   itself (proof of possession) and appended to the log as an item whose
//!   hash is [`item_hash`]; a later key for L is another, visible item.
//! - **balance** says the customer agrees with the committed checkpoint of
//!   `period` (its `merkleRoot` over `deltas` deltas, ending at `balance`).
//! - **dispute** says it does not, from the first divergent delta found by
//!   [`crate::pinpoint`]: its kind, the deltas and balance agreed before it
//!   and the id naming it.
//!
//! Keys are given in the signed-note verifier-key form
//! `<name>+<8 hex key id>+<base64(0x01 || 32-byte public key)>`, the form
//! the log's own key has: it carries its algorithm and a key id that the
//! signature line must repeat, so a signature by another key is told
//! apart from a bad signature.
//!
//! Reading is strict: every line is required, in this order, once, with
//! one space between name and value, canonical values (lowercase hex,
//! plain decimal amounts as the API prints them, counts without leading
//! zeros), nothing after. Each refusal has its own [`StatementError`].

use crate::amount::Amount;
use crate::hash::Hash32;
use crate::note::{key_name_valid, split_note, VerifierKey};
use crate::pinpoint::{Divergence, DivergenceKind, EntryId};
use crate::types::{Period, ReferenceId};
use crate::verify::{Check, Detail};
use serde::{Deserialize, Serialize};

/// First word of every statement: the format and its version.
pub const STATEMENT_FORMAT: &str = "bvs-agreement/v1";
/// Largest signed statement read, in bytes. Ours are under 600 bytes (a
/// dispute naming a 128-character referenceId); the rest is room for a
/// witness cosignature or two. // spec: silent; bounds work on hostile input
pub const STATEMENT_BYTES_MAX: usize = 4 * 1024;
/// Longest anchorId or referenceId a dispute names, in characters.
/// // spec: Limits, as types::REFERENCE_ID_CHARS_MAX
pub const STATEMENT_ID_CHARS_MAX: usize = crate::types::REFERENCE_ID_CHARS_MAX;

/// A log origin as a statement names it: a signed-note key name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(String);

impl Origin {
    /// # Errors
    /// [`StatementError::BadValue`] unless non-empty, without white space,
    /// control characters or `+`.
    pub fn parse(text: &str) -> Result<Self, StatementError> {
        if key_name_valid(text) && !text.chars().any(char::is_control) {
            Ok(Self(text.to_owned()))
        } else {
            Err(StatementError::BadValue {
                field: "origin",
                reason: "must be a log origin: no spaces, '+' or control characters",
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// "Ledger `ledger` of log `origin` has counterparty key `key`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBinding {
    pub origin: Origin,
    pub ledger: Hash32,
    /// The verifier key, as given (it parsed as one).
    key: String,
}

impl KeyBinding {
    /// # Errors
    /// [`StatementError::MalformedKey`] if `key` is not a verifier key.
    pub fn new(origin: Origin, ledger: Hash32, key: &str) -> Result<Self, StatementError> {
        VerifierKey::parse(key).map_err(|e| StatementError::MalformedKey(e.to_string()))?;
        Ok(Self {
            origin,
            ledger,
            key: key.to_owned(),
        })
    }

    pub fn key(&self) -> &str {
        &self.key
    }
}

/// What a committed checkpoint of a ledger says; the customer's balance
/// statement repeats it, a dispute names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRef {
    pub origin: Origin,
    pub ledger: Hash32,
    pub period: Period,
    pub root: Hash32,
    pub deltas: u64,
}

/// A [`CheckpointRef`] as a receipt's agreement side and the public verify
/// answer's spell it, as text and hashes a verifier checks rather than
/// trusts (`origin` and `period` are parsed by the check, so a malformed
/// one fails that check, not the reading of the document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointFields {
    /// The log's origin, as its signed tree heads name it.
    pub origin: String,
    pub ledger_id: Hash32,
    pub period: String,
    pub merkle_root: Hash32,
    pub delta_count: u64,
}

impl CheckpointFields {
    pub fn of(r: &CheckpointRef) -> CheckpointFields {
        CheckpointFields {
            origin: r.origin.as_str().to_owned(),
            ledger_id: r.ledger,
            period: r.period.to_string(),
            merkle_root: r.root,
            delta_count: r.deltas,
        }
    }
}

/// "I agree: checkpoint `checkpoint` ends at `balance`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceStatement {
    pub checkpoint: CheckpointRef,
    pub balance: Amount,
}

/// "I disagree with `checkpoint`, from this delta on."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    pub checkpoint: CheckpointRef,
    pub kind: DivergenceKind,
    /// Deltas both agree on before the divergent one.
    pub after: u64,
    pub delta: EntryId,
    /// Balance both agree on before the divergent delta.
    pub agreed: Amount,
}

impl Dispute {
    /// The dispute of `checkpoint` from a pinpointed divergence. The
    /// delta is named by the service's itemHash when the service has it
    /// (missing, changed, reordered), else by the caller's own id (extra).
    pub fn from_divergence(checkpoint: CheckpointRef, divergence: &Divergence) -> Option<Dispute> {
        let delta = match (&divergence.service, &divergence.caller_id) {
            (Some(s), _) => EntryId::ItemHash(s.item_hash),
            (None, Some(id)) => id.clone(),
            (None, None) => return None,
        };
        Some(Dispute {
            checkpoint,
            kind: divergence.kind,
            after: divergence.agreed_deltas,
            delta,
            agreed: divergence.agreed_balance,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    Key(KeyBinding),
    Balance(BalanceStatement),
    Dispute(Dispute),
}

/// Why a statement was refused. Each reason is its own variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatementError {
    #[error("statement is larger than {max} bytes")]
    TooLarge { max: usize },
    #[error("counterparty key is malformed: {0}")]
    MalformedKey(String),
    #[error("not a signed note: text, a blank line, then signature lines")]
    NotASignedNote,
    #[error("first line is not \"{STATEMENT_FORMAT} key|balance|dispute\"")]
    UnknownFormat,
    #[error(
        "line {line} has extra white space (leading, trailing, doubled, tab or carriage return)"
    )]
    ExtraWhitespace { line: usize },
    #[error("statement ends after line {line}; expected \"{expected}\" next")]
    Truncated { line: usize, expected: &'static str },
    #[error("line {line} is \"{got}\" where \"{expected}\" belongs: lines are in a fixed order")]
    WrongOrder {
        line: usize,
        expected: &'static str,
        got: String,
    },
    #[error("line {line} is unknown to this statement (\"{got}\")")]
    UnknownLine { line: usize, got: String },
    #[error("{field}: {reason}")]
    BadValue {
        field: &'static str,
        reason: &'static str,
    },
    #[error("{field}: not in canonical form (write it as {canonical})")]
    NonCanonical {
        field: &'static str,
        canonical: String,
    },
    #[error("no signature by the counterparty key {key_name}+{key_id:08x}")]
    NoSignatureByKey { key_name: String, key_id: u32 },
    #[error("the signature by the counterparty key does not match the statement text")]
    InvalidSignature,
    #[error("the key binding names another key than the one that signed it")]
    KeyNotSelfSigned,
    #[error("statement is a {got} statement, not a {expected} one")]
    WrongKind {
        expected: &'static str,
        got: &'static str,
    },
    #[error("statement is for log {got}, not {expected}")]
    OriginMismatch { expected: String, got: String },
    #[error("statement is for ledger {got}, not {expected}")]
    LedgerMismatch { expected: Hash32, got: Hash32 },
    #[error("statement is for period {got}, not {expected}")]
    PeriodMismatch { expected: Period, got: Period },
    #[error("statement is for merkleRoot {got}, not {expected}")]
    RootMismatch { expected: Hash32, got: Hash32 },
    #[error("statement counts {got} deltas, the checkpoint {expected}")]
    DeltasMismatch { expected: u64, got: u64 },
    #[error("statement agrees to balance {got}, the checkpoint says {expected}")]
    BalanceMismatch { expected: Amount, got: Amount },
    #[error("the key binding names key {got}, the document's counterpartyKey is {expected}")]
    KeyMismatch { expected: String, got: String },
    #[error("the signed note hashes to log item {got}, the document says {expected}")]
    ItemHashMismatch { expected: Hash32, got: Hash32 },
    #[error("not proven to be in the log: {0}")]
    NotInLog(String),
    #[error(
        "a new key for a ledger that has one must be signed by the current key, or come through a new invitation from the vendor"
    )]
    NotSignedByCurrentKey,
    #[error(
        "statement names liabilities statement {got}, the period's published one is {expected}"
    )]
    StatementHashMismatch { expected: Hash32, got: Hash32 },
    #[error("after {after} is outside the checkpoint's {deltas} deltas")]
    AfterOutOfRange { after: u64, deltas: u64 },
    #[error("agreed {got} is not the checkpoint's balance at that point ({expected})")]
    AgreedMismatch { expected: Amount, got: Amount },
    #[error(
        "the delta named is not the checkpoint's delta {position}, the one after those agreed"
    )]
    DeltaMismatch { position: u64 },
    #[cfg(feature = "server")]
    #[error("could not sign: {0}")]
    Signing(String),
}

/// Line names in order, per kind (after the first line).
const KEY_LINES: [&str; 3] = ["origin", "ledger", "key"];
const BALANCE_LINES: [&str; 6] = ["origin", "ledger", "period", "root", "deltas", "balance"];
const DISPUTE_LINES: [&str; 9] = [
    "origin",
    "ledger",
    "period",
    "root",
    "deltas",
    "divergence",
    "after",
    "delta",
    "agreed",
];

impl Statement {
    pub fn kind(&self) -> &'static str {
        match self {
            Statement::Key(_) => "key",
            Statement::Balance(_) => "balance",
            Statement::Dispute(_) => "dispute",
        }
    }

    /// The statement text that gets signed (ends in a newline).
    pub fn to_text(&self) -> String {
        let mut lines: Vec<(&str, String)> = Vec::with_capacity(9);
        let checkpoint = |lines: &mut Vec<(&str, String)>, c: &CheckpointRef| {
            lines.push(("origin", c.origin.0.clone()));
            lines.push(("ledger", c.ledger.to_hex()));
            lines.push(("period", c.period.to_string()));
            lines.push(("root", c.root.to_hex()));
            lines.push(("deltas", c.deltas.to_string()));
        };
        match self {
            Statement::Key(k) => {
                lines.push(("origin", k.origin.0.clone()));
                lines.push(("ledger", k.ledger.to_hex()));
                lines.push(("key", k.key.clone()));
            }
            Statement::Balance(b) => {
                checkpoint(&mut lines, &b.checkpoint);
                lines.push(("balance", b.balance.to_string()));
            }
            Statement::Dispute(d) => {
                checkpoint(&mut lines, &d.checkpoint);
                lines.push(("divergence", d.kind.as_str().to_owned()));
                lines.push(("after", d.after.to_string()));
                let id = match &d.delta {
                    EntryId::ItemHash(h) => h.to_hex(),
                    EntryId::AnchorId(s) | EntryId::ReferenceId(s) => s.clone(),
                };
                lines.push(("delta", format!("{} {id}", d.delta.field())));
                lines.push(("agreed", d.agreed.to_string()));
            }
        }
        let mut text = format!("{STATEMENT_FORMAT} {}\n", self.kind());
        for (name, value) in lines {
            text.push_str(name);
            text.push(' ');
            text.push_str(&value);
            text.push('\n');
        }
        text
    }

    /// Reads a statement text (the part above the blank line) strictly.
    ///
    /// # Errors
    /// A [`StatementError`] naming the first thing wrong.
    pub fn parse(text: &str) -> Result<Statement, StatementError> {
        let (kind, lines) = framed(text)?;
        let names: &[&'static str] = match kind {
            "key" => &KEY_LINES,
            "balance" => &BALANCE_LINES,
            "dispute" => &DISPUTE_LINES,
            _ => return Err(StatementError::UnknownFormat),
        };
        let values = read_lines(&lines, names)?;
        let v = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .and_then(|i| values.get(i).copied())
                .unwrap_or("")
        };
        let origin = Origin::parse(v("origin"))?;
        let ledger = hash_value("ledger", v("ledger"))?;
        if kind == "key" {
            return Ok(Statement::Key(KeyBinding::new(origin, ledger, v("key"))?));
        }
        let checkpoint = CheckpointRef {
            origin,
            ledger,
            period: Period::parse(v("period")).map_err(|_| StatementError::BadValue {
                field: "period",
                reason: "must be YYYY-MM with a month from 01 to 12",
            })?,
            root: hash_value("root", v("root"))?,
            deltas: count_value("deltas", v("deltas"))?,
        };
        if kind == "balance" {
            return Ok(Statement::Balance(BalanceStatement {
                checkpoint,
                balance: amount_value("balance", v("balance"))?,
            }));
        }
        let kind = DivergenceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == v("divergence"))
            .ok_or(StatementError::BadValue {
                field: "divergence",
                reason: "must be missing, extra, changed or reordered",
            })?;
        Ok(Statement::Dispute(Dispute {
            checkpoint,
            kind,
            after: count_value("after", v("after"))?,
            delta: delta_value(v("delta"))?,
            agreed: amount_value("agreed", v("agreed"))?,
        }))
    }
}

/// No line of a statement starts or ends with a space, holds two in a
/// row, a tab or a carriage return.
fn single_spaced(lines: &[&str]) -> Result<(), StatementError> {
    for (n, line) in lines.iter().enumerate() {
        let spaced = line.starts_with(' ')
            || line.ends_with(' ')
            || line.contains("  ")
            || line.contains(['\t', '\r']);
        if spaced {
            return Err(StatementError::ExtraWhitespace { line: n + 1 });
        }
    }
    Ok(())
}

/// The values of `lines`, which must be exactly `names` in order.
fn read_lines<'a>(
    lines: &[&'a str],
    names: &[&'static str],
) -> Result<Vec<&'a str>, StatementError> {
    let mut values = Vec::with_capacity(names.len());
    for (i, expected) in names.iter().enumerate() {
        let line_no = i + 2;
        let Some(line) = lines.get(i) else {
            return Err(StatementError::Truncated {
                line: line_no - 1,
                expected,
            });
        };
        let (name, value) = line.split_once(' ').unwrap_or((line, ""));
        if name != *expected {
            return Err(if names.contains(&name) {
                StatementError::WrongOrder {
                    line: line_no,
                    expected,
                    got: name.to_owned(),
                }
            } else {
                StatementError::UnknownLine {
                    line: line_no,
                    got: name.to_owned(),
                }
            });
        }
        if value.is_empty() {
            return Err(StatementError::BadValue {
                field: expected,
                reason: "is empty",
            });
        }
        values.push(value);
    }
    if let Some(extra) = lines.get(names.len()) {
        let got = extra.split(' ').next().unwrap_or("").to_owned();
        return Err(StatementError::UnknownLine {
            line: names.len() + 2,
            got,
        });
    }
    Ok(values)
}

fn hash_value(field: &'static str, text: &str) -> Result<Hash32, StatementError> {
    let hash = Hash32::parse(text).map_err(|_| StatementError::BadValue {
        field,
        reason: "must be 64 lowercase hex digits",
    })?;
    canonical(field, text, hash.to_hex())?;
    Ok(hash)
}

fn count_value(field: &'static str, text: &str) -> Result<u64, StatementError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(StatementError::BadValue {
            field,
            reason: "must be a whole number",
        });
    }
    let n: u64 = text.parse().map_err(|_| StatementError::BadValue {
        field,
        reason: "must be a whole number below 2^64",
    })?;
    canonical(field, text, n.to_string())?;
    Ok(n)
}

fn amount_value(field: &'static str, text: &str) -> Result<Amount, StatementError> {
    let amount = Amount::parse(text).map_err(|_| StatementError::BadValue {
        field,
        reason: "must be a decimal amount with at most 18 decimal places",
    })?;
    canonical(field, text, amount.to_string())?;
    Ok(amount)
}

fn canonical(field: &'static str, text: &str, canonical: String) -> Result<(), StatementError> {
    if text == canonical {
        Ok(())
    } else {
        Err(StatementError::NonCanonical { field, canonical })
    }
}

fn delta_value(text: &str) -> Result<EntryId, StatementError> {
    let bad = |reason| StatementError::BadValue {
        field: "delta",
        reason,
    };
    let (by, id) = text.split_once(' ').ok_or(bad(
        "must be itemHash, anchorId or referenceId, a space and the id",
    ))?;
    match by {
        "itemHash" => Ok(EntryId::ItemHash(hash_value("delta", id)?)),
        "anchorId" | "referenceId" => {
            let id = ReferenceId::parse(id)
                .map_err(|_| bad("the id must be 1 to 128 characters without control characters"))?
                .into_string();
            Ok(if by == "anchorId" {
                EntryId::AnchorId(id)
            } else {
                EntryId::ReferenceId(id)
            })
        }
        _ => Err(bad(
            "must be itemHash, anchorId or referenceId, a space and the id",
        )),
    }
}

/// The log item of a signed statement: SHA-256 of the whole signed note
/// (text, blank line, signature lines), so the log commits to the
/// signature as well as to what was signed. Statement texts begin with
/// `bvs-agreement/v1`, delta items (RFC 8785 JSON) with `{`: the two can
/// never be the same bytes.
pub fn item_hash(signed: &str) -> Hash32 {
    Hash32::digest(signed.as_bytes())
}

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

impl StatementError {
    /// The reason's stable name (snake_case), as the API and tools report it.
    pub fn reason(&self) -> &'static str {
        match self {
            StatementError::TooLarge { .. } => "too_large",
            StatementError::MalformedKey(_) => "malformed_key",
            StatementError::NotASignedNote => "not_a_signed_note",
            StatementError::UnknownFormat => "unknown_format",
            StatementError::ExtraWhitespace { .. } => "extra_whitespace",
            StatementError::Truncated { .. } => "truncated",
            StatementError::WrongOrder { .. } => "wrong_order",
            StatementError::UnknownLine { .. } => "unknown_line",
            StatementError::BadValue { .. } => "bad_value",
            StatementError::NonCanonical { .. } => "non_canonical",
            StatementError::NoSignatureByKey { .. } => "no_signature_by_key",
            StatementError::InvalidSignature => "invalid_signature",
            StatementError::KeyNotSelfSigned => "key_not_self_signed",
            StatementError::WrongKind { .. } => "wrong_kind",
            StatementError::OriginMismatch { .. } => "origin_mismatch",
            StatementError::LedgerMismatch { .. } => "ledger_mismatch",
            StatementError::PeriodMismatch { .. } => "period_mismatch",
            StatementError::RootMismatch { .. } => "root_mismatch",
            StatementError::DeltasMismatch { .. } => "deltas_mismatch",
            StatementError::BalanceMismatch { .. } => "balance_mismatch",
            StatementError::KeyMismatch { .. } => "key_mismatch",
            StatementError::ItemHashMismatch { .. } => "item_hash_mismatch",
            StatementError::NotInLog(_) => "not_in_log",
            StatementError::NotSignedByCurrentKey => "not_signed_by_current_key",
            StatementError::StatementHashMismatch { .. } => "statement_mismatch",
            StatementError::AfterOutOfRange { .. } => "after_out_of_range",
            StatementError::AgreedMismatch { .. } => "agreed_mismatch",
            StatementError::DeltaMismatch { .. } => "delta_mismatch",
            #[cfg(feature = "server")]
            StatementError::Signing(_) => "signing",
        }
    }
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
pub(crate) fn statement_says(
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
fn check(name: String, r: Detail) -> Check {
    let ok = r.is_ok();
    let detail = r.unwrap_or_else(|e| e);
    Check { name, ok, detail }
}

/// A statement error as a check's detail, starting with its reason's name.
fn named(e: StatementError) -> String {
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

#[cfg(feature = "server")]
mod sign {
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
    pub fn sign(
        statement: &Statement,
        name: &str,
        seed: &[u8; 32],
    ) -> Result<String, StatementError> {
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
}

#[cfg(all(feature = "server", feature = "liabilities"))]
pub use sign::sign_inclusion;
#[cfg(feature = "server")]
pub use sign::{counterparty_key, sign};

/// Where a statement is about: its log (origin), ledger and period.
type Place<'a> = (&'a Origin, &'a Hash32, Period);

impl CheckpointRef {
    fn place(&self) -> Place<'_> {
        (&self.origin, &self.ledger, self.period)
    }
}

/// A statement text's kind and value lines, its frame read strictly: at
/// most [`STATEMENT_BYTES_MAX`] bytes, ending in a newline, single-spaced,
/// its first line `bvs-agreement/v1 <kind>`.
fn framed(text: &str) -> Result<(&str, Vec<&str>), StatementError> {
    if text.len() > STATEMENT_BYTES_MAX {
        return Err(StatementError::TooLarge {
            max: STATEMENT_BYTES_MAX,
        });
    }
    let body = text
        .strip_suffix('\n')
        .ok_or(StatementError::NotASignedNote)?;
    let mut lines: Vec<&str> = body.split('\n').collect();
    single_spaced(&lines)?;
    let kind = lines
        .first()
        .and_then(|l| l.strip_prefix(STATEMENT_FORMAT))
        .and_then(|l| l.strip_prefix(' '))
        .ok_or(StatementError::UnknownFormat)?;
    lines.remove(0);
    Ok((kind, lines))
}

/// The place a statement names against the one expected: the first checks
/// of every kind that names a period of a ledger (a checkpoint's
/// statement, an inclusion co-signature).
fn check_place(expected: Place<'_>, got: Place<'_>) -> Result<(), StatementError> {
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
fn same<T>(
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

mod canonical;
pub use canonical::{canonical_key_binding, canonical_statement, signed_by, CanonicalBinding};
mod dispute;
pub use dispute::{CheckpointDelta, DisputeContext};

mod answer;
pub use answer::{answer_agreement_checks, AnswerAgreement, AnswerKey};
mod receipt;
pub use receipt::{receipt_checks, receipt_report};
mod statement;
pub use statement::statement_report;
// A customer's co-signature of its inclusion in a liabilities statement:
// checked against the liabilities proof, so only with that feature.
#[cfg(feature = "liabilities")]
mod inclusion;
#[cfg(feature = "liabilities")]
pub use inclusion::{is_inclusion, verify_inclusion, Inclusion, INCLUSION_KIND};
#[cfg(all(feature = "server", any(test, feature = "sample")))]
pub mod sample;

// The vectors are signed here, so they need the signing half.
#[cfg(all(test, feature = "server"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
