//! The log's side of C2SP tlog-witness, without I/O: the `add-checkpoint`
//! request body, the witness's answer read into what to do next, and a
//! checkpoint with the cosignatures collected so far.
//!
//! ```text
//! POST <submission prefix>/add-checkpoint
//!
//! old <size the witness last cosigned>
//! <base64 consistency proof hash>     zero to 63 lines
//!
//! <the signed checkpoint>
//! ```
//!
//! The caller (the service's cosigning job) does the HTTP, keeps what each
//! witness last cosigned, and builds consistency proofs with
//! [`crate::log`]; nothing here names a witness implementation.

use crate::cosignature::{self, CosignatureError, WitnessKey};
use crate::hash::Hash32;
use crate::merkle::TreeSize;
use crate::note;

/// Most consistency proof lines in a request. // C2SP tlog-witness: MUST NOT send more than 63
pub const ADD_CHECKPOINT_PROOF_LINES_MAX: usize = 63;
/// Largest answer body read from a witness. // spec: silent; a few signature lines
pub const ANSWER_BYTES_MAX: usize = 16 * 1024;
/// The media type of a 409 answer's body. // C2SP tlog-witness
pub const SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WitnessError {
    #[error("a consistency proof of {0} hashes is longer than the 63 a witness accepts")]
    ProofTooLong(usize),
    #[error("a request from old size 0 carries no consistency proof")]
    ProofFromZero,
    #[error("old size {old} is larger than the checkpoint's size {new}")]
    OldAfterNew { old: u64, new: u64 },
    #[error("the signed checkpoint is not a checkpoint in a signed note: {0}")]
    Checkpoint(note::NoteError),
    #[error("the witness's answer is malformed: {0}")]
    MalformedAnswer(String),
    #[error(transparent)]
    Cosignature(#[from] CosignatureError),
    #[error("the checkpoint with its cosignatures is larger than a note may be ({max} bytes)")]
    TooLarge { max: usize },
}

/// The `add-checkpoint` request body: `old <size>`, the consistency proof
/// from that size to the checkpoint's (empty when `old` is 0), a blank
/// line, the signed checkpoint.
///
/// # Errors
/// A proof longer than 63 hashes, a proof with `old` 0, `old` beyond the
/// checkpoint's size, or a note that is not a checkpoint.
pub fn add_checkpoint_body(
    old: TreeSize,
    proof: &[Hash32],
    signed_checkpoint: &str,
) -> Result<String, WitnessError> {
    if proof.len() > ADD_CHECKPOINT_PROOF_LINES_MAX {
        return Err(WitnessError::ProofTooLong(proof.len()));
    }
    let size = checkpoint_size(signed_checkpoint)?;
    if old > size {
        return Err(WitnessError::OldAfterNew {
            old: old.0,
            new: size.0,
        });
    }
    if old.0 == 0 && !proof.is_empty() {
        return Err(WitnessError::ProofFromZero);
    }
    let mut out = String::with_capacity(16 + 45 * proof.len() + signed_checkpoint.len());
    out.push_str(&format!("old {old}\n"));
    for h in proof {
        out.push_str(&note::base64_encode(h.as_bytes()));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(signed_checkpoint);
    Ok(out)
}

/// The tree size a signed checkpoint states (its signature not checked).
fn checkpoint_size(signed_checkpoint: &str) -> Result<TreeSize, WitnessError> {
    let malformed =
        || WitnessError::Checkpoint(note::NoteError::Malformed("malformed note".into()));
    let (body, _) = note::split_note(signed_checkpoint).ok_or_else(malformed)?;
    let (_, size, _) = note::read_checkpoint(&body).map_err(WitnessError::Checkpoint)?;
    Ok(size)
}

/// What a witness's answer to `add-checkpoint` means for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddCheckpointAnswer {
    /// 200: the witness cosigned. `line` is its (verified) signature line,
    /// ending in a newline, made at `timestamp`.
    Cosigned { line: String, timestamp: u64 },
    /// 409: the witness last cosigned a tree of `size`, not the `old` sent:
    /// resend from there (with a consistency proof from a recorded head of
    /// that size). A size beyond the checkpoint's means the witness has
    /// seen more of this log than the log now shows (a rollback or fork).
    Conflict { size: TreeSize },
    /// 422: the checkpoint does not extend what the witness cosigned (the
    /// proof does not verify, or one size with two roots): a fork, refused.
    Inconsistent,
    /// 404: the witness does not know this log's origin (not configured).
    UnknownLog,
    /// 403: no signature of a key the witness trusts for this origin, or
    /// one that does not verify (the witness has another key for the log).
    Forbidden,
    /// 400: the witness could not read the request.
    BadRequest,
    /// 429, 5xx or anything else: try again later, after `retry_after`
    /// seconds when the witness said so.
    Unavailable {
        status: u16,
        retry_after: Option<u64>,
    },
}

/// Reads a witness's answer to `add-checkpoint` of `signed_checkpoint`.
/// A 200's lines are verified against `witness`'s key over the
/// checkpoint (lines of other keys are ignored, as C2SP asks); at least
/// one must verify. `retry_after` is the answer's `Retry-After` header in
/// seconds, if any.
///
/// # Errors
/// A 200 without a valid cosignature by `witness` (or with a line of its
/// key that does not verify), a 409 whose body or type is not a size, a
/// body beyond [`ANSWER_BYTES_MAX`]: the witness misbehaved, and the
/// answer must not be kept.
pub fn read_add_checkpoint_answer(
    status: u16,
    content_type: Option<&str>,
    retry_after: Option<&str>,
    body: &str,
    signed_checkpoint: &str,
    witness: &WitnessKey,
) -> Result<AddCheckpointAnswer, WitnessError> {
    if body.len() > ANSWER_BYTES_MAX {
        return Err(WitnessError::MalformedAnswer(format!(
            "a body of more than {ANSWER_BYTES_MAX} bytes"
        )));
    }
    Ok(match status {
        200 => read_cosignature(body, signed_checkpoint, witness)?,
        409 => {
            let media = content_type
                .and_then(|t| t.split(';').next())
                .map(str::trim);
            if media != Some(SIZE_CONTENT_TYPE) {
                return Err(WitnessError::MalformedAnswer(format!(
                    "a 409 answer of type {} instead of {SIZE_CONTENT_TYPE}",
                    content_type.unwrap_or("(none)")
                )));
            }
            let size = body
                .strip_suffix('\n')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .filter(|d| *d == "0" || !d.starts_with('0'))
                .and_then(|d| d.parse::<u64>().ok())
                .ok_or_else(|| {
                    WitnessError::MalformedAnswer("a 409 body that is not `<size>\\n`".into())
                })?;
            AddCheckpointAnswer::Conflict {
                size: TreeSize(size),
            }
        }
        422 => AddCheckpointAnswer::Inconsistent,
        404 => AddCheckpointAnswer::UnknownLog,
        403 => AddCheckpointAnswer::Forbidden,
        400 => AddCheckpointAnswer::BadRequest,
        _ => AddCheckpointAnswer::Unavailable {
            status,
            retry_after: retry_after.and_then(|r| r.trim().parse().ok()),
        },
    })
}

fn read_cosignature(
    body: &str,
    signed_checkpoint: &str,
    witness: &WitnessKey,
) -> Result<AddCheckpointAnswer, WitnessError> {
    let malformed = |why: &str| WitnessError::MalformedAnswer(why.to_owned());
    if body.is_empty() || !body.ends_with('\n') {
        return Err(malformed("a 200 body that is not signature lines"));
    }
    // Each line read on its own after the checkpoint: the answer's lines
    // must be signature lines, and only the witness's own are kept.
    let mut best: Option<(String, u64)> = None;
    for line in body.split_inclusive('\n') {
        if !line.starts_with("\u{2014} ") {
            return Err(malformed("a 200 body line that is not a signature line"));
        }
        let with_line = format!("{signed_checkpoint}{line}");
        let found = cosignature::cosignatures(&with_line, std::slice::from_ref(witness))?;
        if let Some(t) = found[0] {
            if best.as_ref().is_none_or(|(_, b)| t > *b) {
                best = Some((line.to_owned(), t));
            }
        }
    }
    let (line, timestamp) = best.ok_or_else(|| {
        malformed(&format!(
            "a 200 answer without a cosignature by {}",
            witness.name()
        ))
    })?;
    Ok(AddCheckpointAnswer::Cosigned { line, timestamp })
}

/// The signed checkpoint with cosignature lines added after its own
/// signatures, as the service publishes it. A line replaces an earlier
/// one of the same key name and id (a newer cosignature by the same
/// witness); lines are not verified here (keep only lines
/// [`read_add_checkpoint_answer`] returned).
///
/// # Errors
/// A malformed checkpoint or line, or a result beyond a note's size.
pub fn with_cosignatures(signed_checkpoint: &str, lines: &[&str]) -> Result<String, WitnessError> {
    let malformed =
        || WitnessError::Checkpoint(note::NoteError::Malformed("malformed note".into()));
    let (body, _) = note::split_note(signed_checkpoint).ok_or_else(malformed)?;
    let mut sig_lines: Vec<String> = signed_checkpoint[body.len() + 1..]
        .split_inclusive('\n')
        .map(str::to_owned)
        .collect();
    for line in lines {
        let line = if line.ends_with('\n') {
            (*line).to_owned()
        } else {
            format!("{line}\n")
        };
        let key_of = |l: &str| -> Option<(String, Vec<u8>)> {
            let (name, b64) = l.strip_prefix("\u{2014} ")?.trim_end().split_once(' ')?;
            let bytes = note::base64_decode(b64)?;
            Some((name.to_owned(), bytes.get(..4)?.to_vec()))
        };
        let key = key_of(&line).ok_or_else(|| {
            WitnessError::MalformedAnswer("a cosignature that is not a signature line".into())
        })?;
        match sig_lines
            .iter()
            .position(|l| key_of(l).as_ref() == Some(&key))
        {
            Some(i) => sig_lines[i] = line,
            None => sig_lines.push(line),
        }
    }
    let out = format!("{body}\n{}", sig_lines.concat());
    if out.len() > note::NOTE_BYTES_MAX {
        return Err(WitnessError::TooLarge {
            max: note::NOTE_BYTES_MAX,
        });
    }
    // What comes out must still read as a signed note.
    note::split_note(&out).ok_or_else(malformed)?;
    Ok(out)
}

#[cfg(test)]
#[cfg(feature = "server")]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::cosignature::cosign;
    use crate::test_notes::{head, vkey};

    fn w(n: u8) -> WitnessKey {
        WitnessKey::parse(&vkey(n)).unwrap()
    }

    #[test]
    fn the_request_body_is_old_size_proof_blank_line_checkpoint() {
        let proof = [Hash32([1; 32]), Hash32([2; 32])];
        let body = add_checkpoint_body(TreeSize(5), &proof, &head(9)).unwrap();
        assert_eq!(
            body,
            format!(
                "old 5\n{}\n{}\n\n{}",
                note::base64_encode(&[1; 32]),
                note::base64_encode(&[2; 32]),
                head(9)
            )
        );
        assert_eq!(
            add_checkpoint_body(TreeSize(0), &[], &head(9)).unwrap(),
            format!("old 0\n\n{}", head(9))
        );
        assert_eq!(
            add_checkpoint_body(TreeSize(10), &[], &head(9)),
            Err(WitnessError::OldAfterNew { old: 10, new: 9 })
        );
        assert!(add_checkpoint_body(TreeSize(0), &proof, &head(9)).is_err());
        assert_eq!(
            add_checkpoint_body(TreeSize(1), &[Hash32::EMPTY; 64], &head(9)),
            Err(WitnessError::ProofTooLong(64))
        );
    }

    #[test]
    fn answers_are_read_into_what_to_do_next() {
        let note = head(9);
        let line = cosign(&note, "w1.example", &[1; 32], 77).unwrap();
        let other = cosign(&note, "w2.example", &[2; 32], 78).unwrap();
        let read = |status, ct, body: &str| {
            read_add_checkpoint_answer(status, ct, Some("7"), body, &note, &w(1))
        };
        assert_eq!(
            read(200, Some("text/plain"), &format!("{other}{line}")).unwrap(),
            AddCheckpointAnswer::Cosigned {
                line: line.clone(),
                timestamp: 77
            }
        );
        // Only another witness's line, or a forged one: not kept.
        assert!(read(200, None, &other).is_err());
        let forged = other.replace("w2.example", "w1.example");
        assert!(read(200, None, &forged).is_err());
        assert!(read(200, None, "").is_err());
        assert_eq!(
            read(409, Some("text/x.tlog.size"), "12\n").unwrap(),
            AddCheckpointAnswer::Conflict { size: TreeSize(12) }
        );
        assert!(read(409, Some("text/plain"), "12\n").is_err());
        assert!(read(409, Some(SIZE_CONTENT_TYPE), "012\n").is_err());
        assert_eq!(
            read(422, None, "").unwrap(),
            AddCheckpointAnswer::Inconsistent
        );
        assert_eq!(
            read(404, None, "").unwrap(),
            AddCheckpointAnswer::UnknownLog
        );
        assert_eq!(read(403, None, "").unwrap(), AddCheckpointAnswer::Forbidden);
        assert_eq!(
            read(400, None, "").unwrap(),
            AddCheckpointAnswer::BadRequest
        );
        assert_eq!(
            read(503, None, "").unwrap(),
            AddCheckpointAnswer::Unavailable {
                status: 503,
                retry_after: Some(7)
            }
        );
    }

    #[test]
    fn cosignatures_are_added_and_a_newer_one_replaces_the_older() {
        let note = head(9);
        let a1 = cosign(&note, "w1.example", &[1; 32], 1).unwrap();
        let a2 = cosign(&note, "w1.example", &[1; 32], 2).unwrap();
        let b = cosign(&note, "w2.example", &[2; 32], 1).unwrap();
        let once = with_cosignatures(&note, &[&a1, &b]).unwrap();
        assert_eq!(once, format!("{note}{a1}{b}"));
        let twice = with_cosignatures(&once, &[a2.trim_end()]).unwrap();
        assert_eq!(twice, format!("{note}{a2}{b}"));
        let found = cosignature::cosignatures(&twice, &[w(1), w(2)]).unwrap();
        assert_eq!(found, vec![Some(2), Some(1)]);
        assert!(with_cosignatures(&note, &["not a line"]).is_err());
    }
}
