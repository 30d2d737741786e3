//! A statement's text: written (`Statement::to_text`) and read strictly
//! (`Statement::parse`): every line required, in its order, once, each
//! value in its canonical form.

use super::{
    BalanceStatement, CheckpointRef, Dispute, KeyBinding, Origin, Statement, StatementError,
    STATEMENT_BYTES_MAX, STATEMENT_FORMAT,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::pinpoint::{DivergenceKind, EntryId};
use crate::types::{Period, ReferenceId};

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
pub(super) fn read_lines<'a>(
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

pub(super) fn hash_value(field: &'static str, text: &str) -> Result<Hash32, StatementError> {
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

pub(super) fn amount_value(field: &'static str, text: &str) -> Result<Amount, StatementError> {
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

/// A statement text's kind and value lines, its frame read strictly: at
/// most [`STATEMENT_BYTES_MAX`] bytes, ending in a newline, single-spaced,
/// its first line `bvs-agreement/v1 <kind>`.
pub(super) fn framed(text: &str) -> Result<(&str, Vec<&str>), StatementError> {
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
