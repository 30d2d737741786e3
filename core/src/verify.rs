//! Verification shared by server tests, the browser (verifier-wasm) and a
//! CLI. Nothing here panics; every failed check says precisely why.

use crate::hash::Hash32;
use crate::json;
use crate::merkle::{self, HashScheme};
use crate::note::TreeHead;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

mod as_of;
mod head;
mod inclusion;
mod public_answer;
mod receipt;
#[cfg(all(feature = "server", any(test, feature = "sample")))]
pub mod sample;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
mod witnesses;

pub use as_of::{
    read_as_of_document, verify_as_of, verify_as_of_document, AsOf, AsOfBasis, AsOfDelta, AsOfFrom,
    AsOfProof, AS_OF_DECLARED_DELTAS_MAX, AS_OF_PROOF_DELTAS_MAX,
};
pub use head::{
    consistency_report, parse_proof_document, tree_head_report, verify_consistency_between_heads,
    HeadsError, ProofDocumentError,
};
pub use inclusion::{
    inclusion_answer_report, inclusion_report, replay_balance, submission_report,
    tlog_proof_report, verify_submission,
};
pub use public_answer::{
    read_public_answer_document, verify_public_answer, CheckpointLeaf, LogRef, PublicAnswer,
    PublicProof, PublicRecord, PublicSummary, RecordsPagination, PUBLIC_PAGES_MAX,
};
pub use receipt::{
    read_receipt_document, verify_receipt, verify_receipt_document, verify_receipt_json,
    RECEIPT_DELTAS_MAX,
};
pub use witnesses::{
    cosignature_report, document_witness_report, push_witness_checks, witness_report,
};

/// Largest receipt JSON we parse, in bytes. // spec: silent; ~100k deltas with proofs
pub const RECEIPT_JSON_BYTES_MAX: usize = 256 * 1024 * 1024;

/// What one check found, in the words of its report line: `Ok` with what
/// was checked, `Err` with why it failed. Not an error of the verifier:
/// both sides are the `detail` a [`Check`] shows.
pub(crate) type Detail = Result<String, String>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationReport {
    /// True only when every check passed.
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl VerificationReport {
    pub(crate) fn new() -> Self {
        Self {
            ok: true,
            checks: Vec::new(),
        }
    }

    /// A report of one failed check (input that could not be read).
    pub fn failure(name: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut report = Self::new();
        report.push(name, false, detail);
        report
    }

    pub(crate) fn push(&mut self, name: impl Into<String>, ok: bool, detail: impl Into<String>) {
        self.ok &= ok;
        self.checks.push(Check {
            name: name.into(),
            ok,
            detail: detail.into(),
        });
    }

    pub(crate) fn result(&mut self, name: impl Into<String>, r: Detail) {
        match r {
            Ok(d) => self.push(name, true, d),
            Err(d) => self.push(name, false, d),
        }
    }

    /// The report as JSON text, `{"ok":…,"checks":[{"name","ok","detail"}]}`
    /// (what the browser verifier returns; no serde on that path).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(64 + 96 * self.checks.len());
        out.push_str(if self.ok {
            "{\"ok\":true,\"checks\":["
        } else {
            "{\"ok\":false,\"checks\":["
        });
        for (i, c) in self.checks.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            json::write_string(&mut out, &c.name);
            out.push_str(if c.ok {
                ",\"ok\":true,\"detail\":"
            } else {
                ",\"ok\":false,\"detail\":"
            });
            json::write_string(&mut out, &c.detail);
            out.push('}');
        }
        out.push_str("]}");
        out
    }

    /// The first failed check, if any.
    pub fn first_failure(&self) -> Option<&Check> {
        self.checks.iter().find(|c| !c.ok)
    }
}

/// Reads a document's `hashScheme` as a check named `name`: the rule its
/// log proofs were made with, or `None` (failed, named) when this verifier
/// does not know it, so no inclusion proof is checked under a guessed rule.
pub(crate) fn scheme_check(
    report: &mut VerificationReport,
    name: String,
    text: &str,
) -> Option<HashScheme> {
    // A missing name reads as "" and is refused like any unknown one.
    match HashScheme::parse(text) {
        Ok(s) => {
            report.push(name, true, s.rule());
            Some(s)
        }
        Err(e) => {
            report.push(name, false, e.to_string());
            None
        }
    }
}

const UNKNOWN_SCHEME: &str = "cannot check: unknown hashScheme";

pub(crate) fn same(name: &str, got: &Hash32, want: &Hash32) -> Detail {
    if got.ct_eq(want) {
        Ok(format!("{name} is {want}"))
    } else {
        Err(format!("{name} is {got}, expected {want}"))
    }
}

/// The words of a document's `publicKey` check: when it names the pinned
/// key, when it names another (around the two keys, quoted), and when no
/// key is pinned.
pub(crate) struct KeyWords {
    pub same: &'static str,
    pub other: [&'static str; 3],
    pub unpinned: &'static str,
}

/// Which key a document is checked with: the trusted one when pinned (the
/// check `name` says whether the document names it), else the one it
/// names.
pub(crate) fn key_check<'a>(
    report: &mut VerificationReport,
    name: String,
    named: &'a str,
    trusted: Option<&'a str>,
    words: &KeyWords,
) -> &'a str {
    let Some(trusted) = trusted else {
        report.push(name, true, words.unpinned);
        return named;
    };
    let same_key: bool = trusted.as_bytes().ct_eq(named.as_bytes()).into();
    report.result(
        name,
        if same_key {
            Ok(words.same.into())
        } else {
            let [a, b, c] = words.other;
            Err(format!(
                "{a}{}{b}{}{c}",
                json::quoted(named),
                json::quoted(trusted)
            ))
        },
    );
    trusted
}

/// Why a document saved from the API could not be read; `what` names the
/// document (`a receipt`, `a public verification answer`, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("{what} is larger than {RECEIPT_JSON_BYTES_MAX} bytes")]
    TooLarge { what: &'static str },
    #[error("not {what}: not JSON: {reason}")]
    NotJson {
        what: &'static str,
        reason: json::JsonError,
    },
    #[error("not {what}: {reason}")]
    Field {
        what: &'static str,
        reason: crate::error::FieldError,
    },
}

/// Parses a document saved from the API with [`crate::json`] and reads it
/// with `read`; with `envelope`, the `data` of a `{success, statusCode,
/// data}` answer is read, so a file saved straight from the API and one
/// holding only its `data` both verify.
pub(crate) fn read_document<T>(
    text: &str,
    envelope: bool,
    what: &'static str,
    read: impl Fn(&json::Value) -> Result<T, crate::error::FieldError>,
) -> Result<T, DocumentError> {
    if text.len() > RECEIPT_JSON_BYTES_MAX {
        return Err(DocumentError::TooLarge { what });
    }
    let value = json::parse(text).map_err(|reason| DocumentError::NotJson { what, reason })?;
    let value = if envelope {
        unwrap_envelope(&value)
    } else {
        &value
    };
    read(value).map_err(|reason| DocumentError::Field { what, reason })
}

/// The `data` of a `{success, statusCode, data}` envelope, or the whole
/// value when it is not one.
pub(crate) fn unwrap_envelope(value: &json::Value) -> &json::Value {
    match value.as_object() {
        Some(o) if matches!(o.get("success"), Some(json::Value::Bool(_))) => match o.get("data") {
            Some(data) if !matches!(data, json::Value::Null) => data,
            _ => value,
        },
        _ => value,
    }
}

pub(crate) fn inclusion_detail(
    proof: &[Hash32],
    index: merkle::LeafIndex,
    head: Option<&TreeHead>,
    scheme: Option<HashScheme>,
    item: &Hash32,
) -> Detail {
    inclusion_of(proof, index, head, scheme, item, false)
}

/// As [`inclusion_detail`] for `hash`, an item hash, or with `is_leaf` the
/// log's leaf hash itself (a withheld public answer's `logLeafHash`).
pub(crate) fn inclusion_of(
    proof: &[Hash32],
    index: merkle::LeafIndex,
    head: Option<&TreeHead>,
    scheme: Option<HashScheme>,
    hash: &Hash32,
    is_leaf: bool,
) -> Detail {
    let Some(h) = head else {
        return Err("cannot check: the tree head did not verify".into());
    };
    let Some(scheme) = scheme else {
        return Err(UNKNOWN_SCHEME.into());
    };
    let leaf = if is_leaf {
        *hash
    } else {
        scheme.leaf_hash(hash)
    };
    merkle::verify_inclusion_of_log_leaf(proof, index, h.size, &h.root, &leaf)
        .map(|()| {
            format!(
                "{hash} is leaf {index} of the signed tree of size {}",
                h.size
            )
        })
        .map_err(|e| format!("{hash} at leaf {index}: {e}"))
}

// ------------------------------------------------------------------ single checks as reports

/// The hashes of a list, or the words of a check that failed on it:
/// `{field}[{index}] {reason}`.
fn parse_hashes(field: &str, texts: &[String]) -> Result<Vec<Hash32>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Hash32::parse(t).map_err(|e| format!("{field}[{i}] {e}")))
        .collect()
}
