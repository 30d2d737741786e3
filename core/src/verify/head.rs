//! Signed tree heads: one head, and two heads with the consistency proof
//! between them.

use super::{parse_hashes, unwrap_envelope, VerificationReport};
use crate::hash::Hash32;
use crate::json;
use crate::merkle::{self, HashScheme, ProofError, UnknownScheme};
use crate::note::{self, NoteError, TreeHead};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadsError {
    #[error("old tree head: {0}")]
    OldHead(NoteError),
    #[error("new tree head: {0}")]
    NewHead(NoteError),
    #[error("consistency proof: {0}")]
    Proof(ProofError),
}

/// Checks two signed tree heads of the same log and the consistency proof
/// between them: the newer tree extends the older one, so no verified item
/// was rewritten or removed. Returns both heads.
///
/// # Errors
/// [`HeadsError`] naming the head or the proof check that failed.
pub fn verify_consistency_between_heads(
    old_note: &str,
    new_note: &str,
    proof: &[Hash32],
    verifier_key: &str,
) -> Result<(TreeHead, TreeHead), HeadsError> {
    let old = note::verify_tree_head(old_note, verifier_key).map_err(HeadsError::OldHead)?;
    let new = note::verify_tree_head(new_note, verifier_key).map_err(HeadsError::NewHead)?;
    merkle::verify_consistency(proof, old.size, &old.root, new.size, &new.root)
        .map_err(HeadsError::Proof)?;
    Ok((old, new))
}

/// One signed tree head against a verifier key, as a report.
pub fn tree_head_report(note_text: &str, verifier_key: &str) -> VerificationReport {
    let mut report = VerificationReport::new();
    report.result(
        "treeHead",
        note::verify_tree_head(note_text, verifier_key)
            .map(|h| format!("signed by {}: size {}, root {}", h.origin, h.size, h.root))
            .map_err(|e| e.to_string()),
    );
    report
}

/// Two signed heads and the consistency proof between them, as a report.
pub fn consistency_report(
    old_note: &str,
    new_note: &str,
    proof: &[String],
    verifier_key: &str,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let proof = match parse_hashes("consistencyProof", proof) {
        Ok(p) => p,
        Err(e) => {
            report.push("consistency", false, e);
            return report;
        }
    };
    match verify_consistency_between_heads(old_note, new_note, &proof, verifier_key) {
        Ok((old, new)) => {
            report.push(
                "oldTreeHead",
                true,
                format!("size {}, root {}", old.size, old.root),
            );
            report.push(
                "newTreeHead",
                true,
                format!("size {}, root {}", new.size, new.root),
            );
            report.push(
                "consistency",
                true,
                format!("the tree of size {} extends the tree of size {}: nothing was rewritten or removed", new.size, old.size),
            );
        }
        Err(HeadsError::OldHead(e)) => report.push("oldTreeHead", false, e.to_string()),
        Err(HeadsError::NewHead(e)) => report.push("newTreeHead", false, e.to_string()),
        Err(HeadsError::Proof(e)) => report.push("consistency", false, e.to_string()),
    }
    report
}

/// Reads a consistency proof as saved: the consistency route's answer
/// (enveloped or not; a `hashScheme` it names must be known), a JSON array
/// of hex hashes, or hex hashes separated by white space.
///
/// # Errors
/// Names what could not be read.
pub fn parse_proof_document(text: &str) -> Result<Vec<String>, ProofDocumentError> {
    let trimmed = text.trim();
    if !trimmed.starts_with('[') && !trimmed.starts_with('{') {
        return Ok(trimmed.split_whitespace().map(str::to_string).collect());
    }
    let value = json::parse(trimmed).map_err(ProofDocumentError::NotJson)?;
    let strings = |items: &[json::Value], what: &'static str| {
        json::strings(items).map_err(|reason| ProofDocumentError::Strings { what, reason })
    };
    let answer = |e: json::ReadError| ProofDocumentError::NotAnAnswer(*e);
    match unwrap_envelope(&value) {
        json::Value::Array(items) => strings(items, "a JSON array of hashes"),
        inner => {
            let f = json::Fields::of(inner, String::new()).map_err(answer)?;
            if let Some(name) = f.optional_string("hashScheme").map_err(answer)? {
                HashScheme::parse(name).map_err(ProofDocumentError::Scheme)?;
            }
            let items = f.array("consistencyProof", true).map_err(answer)?;
            strings(items, "consistencyProof")
        }
    }
}

/// Why a saved consistency proof could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofDocumentError {
    #[error("not JSON: {0}")]
    NotJson(json::JsonError),
    #[error("{what} must hold strings, {reason}")]
    Strings {
        what: &'static str,
        reason: json::StringsError,
    },
    #[error("not a consistency proof answer: {0}")]
    NotAnAnswer(crate::error::FieldError),
    #[error("{0}")]
    Scheme(UnknownScheme),
}
