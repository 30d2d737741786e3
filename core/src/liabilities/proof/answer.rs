//! A statement's public answer (docs/liabilities.md §9, answer kind
//! `liabilities`): the statement, its hash and where it is in the log, and
//! its check.

use super::Statement;
use super::{last_day, log_checks, read_log, LogEvidence};
use crate::hash::Hash32;
use crate::json;
use crate::verify::{self, VerificationReport};

/// A statement as public verify answers for its `statementHash`
/// (docs/liabilities.md §9, answer kind `liabilities`): the statement, its
/// hash and where it is in the log. No leaf, path, salt or ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementAnswer {
    pub statement: Statement,
    pub statement_hash: Hash32,
    pub log: LogEvidence,
}

impl StatementAnswer {
    /// Reads a public answer of kind `liabilities` (or an API answer whose
    /// `data` is one).
    ///
    /// # Errors
    /// The first field missing or malformed, by its path.
    pub fn from_json(value: &json::Value) -> Result<StatementAnswer, crate::error::FieldError> {
        Self::read(value).map_err(|e| *e)
    }

    fn read(value: &json::Value) -> Result<StatementAnswer, json::ReadError> {
        let f = json::Fields::of(value, String::new())?;
        if f.string("kind")? != "liabilities" {
            return Err(Box::new(crate::error::FieldError::new(
                "kind",
                "must be liabilities",
            )));
        }
        Ok(StatementAnswer {
            statement: Statement::read(f.required("statement")?, "statement")?,
            statement_hash: f.hash("statementHash")?,
            log: read_log(&f.object("log")?)?,
        })
    }
}

/// Whether a public answer's text is of kind `liabilities` (for a reader
/// that checks any answer: `bvs-verify public`).
pub fn is_statement_answer(text: &str) -> bool {
    let Ok(value) = json::parse(text) else {
        return false;
    };
    let json::Value::Object(top) = &value else {
        return false;
    };
    let object = match top.get("data") {
        Some(json::Value::Object(data)) => data,
        _ => top,
    };
    matches!(object.get("kind"), Some(json::Value::String(k)) if k == "liabilities")
}

/// Checks a public answer for a statement: its `statementHash` is the
/// statement's item hash, and that item is in the signed log (key pinned
/// or not, the head's signature, the hash scheme, the inclusion proof).
/// Ends with a `summary` line when all passed.
pub fn verify_statement_answer_json(
    text: &str,
    trusted_public_key: Option<&str>,
) -> VerificationReport {
    let answer = match verify::read_document(
        text,
        true,
        "a liabilities statement answer",
        StatementAnswer::from_json,
    ) {
        Ok(a) => a,
        Err(e) => return VerificationReport::failure("parse", e.to_string()),
    };
    let mut report = VerificationReport::new();
    let s = &answer.statement;
    let item = s.item_hash();
    report.result(
        "statementHash",
        verify::same("statementHash", &answer.statement_hash, &item)
            .map(|d| format!("{d}: SHA-256 of the statement as logged")),
    );
    log_checks(&mut report, Some(&answer.log), &item, trusted_public_key);
    if report.ok {
        let (l, r) = (&s.liabilities, &s.receivables);
        report.push(
            "summary",
            true,
            format!(
                "{} states a total of {} owed to {} customers and {} owed to it by {} on {}, in the log",
                s.tenant_id(),
                l.total,
                l.leaf_count,
                r.total,
                r.leaf_count,
                last_day(s)
            ),
        );
    }
    report
}
