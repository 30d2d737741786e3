//! The customer's co-signature of its inclusion in a period's liabilities
//! statement (issue 31, docs/liabilities.md §11): "my ledger's balance at
//! the end of `period` is `balance`, and it is counted in the liabilities
//! statement `statement` of log `origin`". A signed note like the other
//! agreement statements, signed by the ledger's counterparty key:
//!
//! ```text
//! bvs-agreement/v1 liabilities
//! origin <log origin>
//! ledger <ledger id, 64 hex>
//! period <YYYY-MM>
//! statement <the statement's statementHash, 64 hex>
//! balance <the ledger's balance at the period's end>
//!
//! — <key name> <base64(key id || Ed25519 signature of the text above)>
//! ```
//!
//! It is a kind of its own, not a [`super::Statement`]: a receipt's and a
//! public answer's statements are about a checkpoint, this one about a
//! liabilities statement. What it names is checked field by field against
//! what the customer's proof says ([`Inclusion::of_proof`]), so a
//! co-signature for another ledger, period, statement or balance is
//! refused with its own reason.

use super::canonical::{line_of, note};
use super::{
    amount_value, hash_value, read_lines, signed_by, Origin, StatementError, STATEMENT_BYTES_MAX,
    STATEMENT_FORMAT,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::liabilities::ProofDocument;
use crate::note::{split_note, VerifierKey};
use crate::types::Period;

/// The kind word of the first line: `bvs-agreement/v1 liabilities`.
pub const INCLUSION_KIND: &str = "liabilities";
const INCLUSION_LINES: [&str; 5] = ["origin", "ledger", "period", "statement", "balance"];

/// "Ledger `ledger` of log `origin` ends `period` at `balance`, counted in
/// liabilities statement `statement`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inclusion {
    pub origin: Origin,
    pub ledger: Hash32,
    pub period: Period,
    /// The liabilities statement's `statementHash` (its log item).
    pub statement: Hash32,
    pub balance: Amount,
}

impl Inclusion {
    fn place(&self) -> super::Place<'_> {
        (&self.origin, &self.ledger, self.period)
    }

    /// What a customer's proof document says, in log `origin`: the
    /// inclusion the customer signs, and the one a signed inclusion is
    /// checked against.
    pub fn of_proof(origin: Origin, doc: &ProofDocument) -> Inclusion {
        Inclusion {
            origin,
            ledger: doc.ledger_id,
            period: doc.statement.period,
            statement: doc.statement_hash,
            balance: doc.balance,
        }
    }

    /// The text that gets signed (ends in a newline).
    pub fn to_text(&self) -> String {
        format!(
            "{STATEMENT_FORMAT} {INCLUSION_KIND}\norigin {}\nledger {}\nperiod {}\nstatement {}\nbalance {}\n",
            self.origin.as_str(),
            self.ledger.to_hex(),
            self.period,
            self.statement.to_hex(),
            self.balance
        )
    }

    /// Reads an inclusion text (the part above the blank line) strictly,
    /// as [`super::Statement::parse`] reads the other kinds.
    ///
    /// # Errors
    /// A [`StatementError`] naming the first thing wrong.
    pub fn parse(text: &str) -> Result<Inclusion, StatementError> {
        let (kind, lines) = super::framed(text)?;
        if kind != INCLUSION_KIND {
            return Err(StatementError::UnknownFormat);
        }
        let values = read_lines(&lines, &INCLUSION_LINES)?;
        let v = |i: usize| values.get(i).copied().unwrap_or("");
        Ok(Inclusion {
            origin: Origin::parse(v(0))?,
            ledger: hash_value("ledger", v(1))?,
            period: Period::parse(v(2)).map_err(|_| StatementError::BadValue {
                field: "period",
                reason: "must be YYYY-MM with a month from 01 to 12",
            })?,
            statement: hash_value("statement", v(3))?,
            balance: amount_value("balance", v(4))?,
        })
    }

    /// Checks that a signed inclusion `named` says what this one (the
    /// proof's, or the service's published statement and snapshot) says,
    /// field by field.
    ///
    /// # Errors
    /// `OriginMismatch`, `LedgerMismatch`, `PeriodMismatch`,
    /// `StatementHashMismatch` or `BalanceMismatch`.
    pub fn check(&self, named: &Inclusion) -> Result<(), StatementError> {
        super::check_place(self.place(), named.place())?;
        let statement = (self.statement, named.statement);
        let balance = (self.balance, named.balance);
        super::same(
            statement,
            statement.0.ct_eq(&statement.1),
            |expected, got| StatementError::StatementHashMismatch { expected, got },
        )?;
        super::same(balance, balance.0 == balance.1, |expected, got| {
            StatementError::BalanceMismatch { expected, got }
        })
    }
}

/// Whether a signed note's first line makes it an inclusion (it may still
/// be malformed).
pub fn is_inclusion(signed: &str) -> bool {
    signed
        .split('\n')
        .next()
        .is_some_and(|l| l == format!("{STATEMENT_FORMAT} {INCLUSION_KIND}"))
}

/// Checks a signed inclusion against the counterparty's verifier key and
/// returns what it says and its canonical form (its text and that key's
/// own signature line only, as `canonical_statement` makes for the other
/// kinds: the log item is SHA-256 of it).
///
/// # Errors
/// Size, key form, note form, the inclusion's form, no signature by the
/// key, a bad one.
pub fn verify_inclusion(
    signed: &str,
    verifier_key: &str,
) -> Result<(Inclusion, String), StatementError> {
    if signed.len() > STATEMENT_BYTES_MAX {
        return Err(StatementError::TooLarge {
            max: STATEMENT_BYTES_MAX,
        });
    }
    let key = VerifierKey::parse(verifier_key)
        .map_err(|e| StatementError::MalformedKey(e.to_string()))?;
    let (text, _) = split_note(signed).ok_or(StatementError::NotASignedNote)?;
    let inclusion = Inclusion::parse(&text)?;
    let no_signature = || StatementError::NoSignatureByKey {
        key_name: key.name.to_owned(),
        key_id: key.id,
    };
    if !signed_by(signed, verifier_key)? {
        return Err(no_signature());
    }
    let line = line_of(signed, &key)?.ok_or_else(no_signature)?;
    Ok((inclusion, note(&text, &[line])))
}

#[cfg(all(test, feature = "server"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::agreement::{counterparty_key, item_hash};
    use crate::liabilities::sample;

    const ORIGIN: &str = "bvs.example/log/sandbox";
    const SEED: [u8; 32] = [0x42; 32];

    fn doc() -> ProofDocument {
        let period = Period::parse("2026-11").unwrap();
        let balances = [
            ("cust_a", Amount::parse("42.1").unwrap()),
            ("cust_b", Amount::parse("1234525.79").unwrap()),
            ("cust_c", Amount::parse("-5").unwrap()),
        ];
        let s = sample::build(
            ORIGIN,
            &[7; 32],
            "ten_example",
            period,
            &balances,
            [0x11; 32],
            2,
            3,
        )
        .unwrap();
        s.customers
            .into_iter()
            .find(|c| c.customer_id == "cust_a")
            .unwrap()
            .document
    }

    fn signed(i: &Inclusion) -> String {
        crate::agreement::sign_inclusion(i, "customer", &SEED).unwrap()
    }

    fn origin() -> Origin {
        Origin::parse(ORIGIN).unwrap()
    }

    #[test]
    fn a_signed_inclusion_of_the_proof_verifies_and_reads_back() {
        let expected = Inclusion::of_proof(origin(), &doc());
        let note = signed(&expected);
        let key = counterparty_key("customer", &SEED).unwrap();
        let (got, canonical) = verify_inclusion(&note, &key).unwrap();
        assert_eq!(got, expected);
        assert!(is_inclusion(&note));
        assert_eq!(expected.check(&got), Ok(()));
        // Padded with another key's line, the same canonical statement.
        let padded = format!("{note}— w0 AAAAAAAA\n");
        assert_eq!(verify_inclusion(&padded, &key).unwrap().1, canonical);
        assert_eq!(item_hash(&canonical), item_hash(&note));
        assert!(expected.to_text().contains("\nbalance 42.1\n"));
    }

    #[test]
    fn an_inclusion_for_another_balance_period_statement_ledger_or_log_is_refused() {
        let expected = Inclusion::of_proof(origin(), &doc());
        let mut other = expected.clone();
        other.balance = Amount::parse("42.11").unwrap();
        assert_eq!(
            expected.check(&other).unwrap_err().reason(),
            "balance_mismatch"
        );
        let mut other = expected.clone();
        other.period = Period::parse("2026-10").unwrap();
        assert_eq!(
            expected.check(&other).unwrap_err().reason(),
            "period_mismatch"
        );
        let mut other = expected.clone();
        other.statement = Hash32([9; 32]);
        assert_eq!(
            expected.check(&other).unwrap_err().reason(),
            "statement_mismatch"
        );
        let mut other = expected.clone();
        other.ledger = Hash32([8; 32]);
        assert_eq!(
            expected.check(&other).unwrap_err().reason(),
            "ledger_mismatch"
        );
        let mut other = expected.clone();
        other.origin = Origin::parse("other.example/log").unwrap();
        assert_eq!(
            expected.check(&other).unwrap_err().reason(),
            "origin_mismatch"
        );
    }

    #[test]
    fn a_forged_unsigned_or_malformed_inclusion_is_refused() {
        let i = Inclusion::of_proof(origin(), &doc());
        let note = signed(&i);
        let key = counterparty_key("customer", &SEED).unwrap();
        let forged = note.replace("balance 42.1\n", "balance 42.2\n");
        assert_eq!(
            verify_inclusion(&forged, &key).unwrap_err().reason(),
            "invalid_signature"
        );
        let other_key = counterparty_key("customer", &[1; 32]).unwrap();
        assert_eq!(
            verify_inclusion(&note, &other_key).unwrap_err().reason(),
            "no_signature_by_key"
        );
        let cases = [
            ("balance 42.1\n", "balance 42.10\n", "non_canonical"),
            ("balance 42.1\n", "", "truncated"),
            ("\nperiod ", "\nperiod  ", "extra_whitespace"),
            ("statement ", "root ", "unknown_line"),
            (" liabilities\n", " liability\n", "unknown_format"),
        ];
        for (from, to, reason) in cases {
            let text = i.to_text().replacen(from, to, 1);
            assert_eq!(
                Inclusion::parse(&text).unwrap_err().reason(),
                reason,
                "{to}"
            );
        }
        // A balance statement is not an inclusion, and the reverse.
        assert!(!is_inclusion("bvs-agreement/v1 balance\n"));
        assert_eq!(
            super::super::Statement::parse(&i.to_text())
                .unwrap_err()
                .reason(),
            "unknown_format"
        );
    }
}
