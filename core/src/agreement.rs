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
use crate::note::{key_name_valid, VerifierKey};
use crate::pinpoint::{Divergence, DivergenceKind, EntryId};
pub use crate::receipt::CheckpointFields;
use crate::types::Period;

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

/// The log item of a signed statement: SHA-256 of the whole signed note
/// (text, blank line, signature lines), so the log commits to the
/// signature as well as to what was signed. Statement texts begin with
/// `bvs-agreement/v1`, delta items (RFC 8785 JSON) with `{`: the two can
/// never be the same bytes.
pub fn item_hash(signed: &str) -> Hash32 {
    Hash32::digest(signed.as_bytes())
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

mod checks;
#[cfg(feature = "server")]
mod sign;
mod text;
use checks::{check, check_place, named, same, statement_says, Place};
pub use checks::{
    public_key_bytes, read_unverified, signature_bytes, verify, verify_cosigned_balance,
    verify_key_binding,
};
use text::{amount_value, framed, hash_value, read_lines};

#[cfg(all(feature = "server", feature = "liabilities"))]
pub use sign::sign_inclusion;
#[cfg(feature = "server")]
pub use sign::{counterparty_key, sign};

mod canonical;
pub use canonical::{canonical_key_binding, canonical_statement, signed_by, CanonicalBinding};
mod dispute;
pub use dispute::{CheckpointDelta, DisputeContext};

mod answer;
pub use answer::{answer_agreement_checks, answer_agreement_report, AnswerAgreement, AnswerKey};
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
