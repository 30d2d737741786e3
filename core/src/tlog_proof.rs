//! C2SP tlog-proof: a portable text file proving that one entry is in a
//! log, with the (cosigned) checkpoint it is proven into.
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64 leaf data>
//! index <leaf index>
//! <base64 hash>            one per line: the RFC 9162 inclusion proof
//!
//! <the checkpoint, verbatim: a signed note with its cosignatures>
//! ```
//!
//! In this service's files `extra` is the log entry itself, the 42-byte
//! leaf data `"bvs-log-v1" || itemHash` (docs/hashes.md), so the leaf hash
//! is SHA-256(0x00 || extra) and the file is self-contained. The itemHash
//! is what the receipt it was exported from already lists: share the
//! file as you would that receipt. `extra` is not trusted for anything but
//! naming the leaf: the inclusion proof into the signed root is the check.

use crate::hash::Hash32;
use crate::merkle::{HashScheme, LeafIndex};
use crate::note;

/// The first line of every tlog-proof. // C2SP tlog-proof
pub const TLOG_PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";
/// Most inclusion proof lines: a tree of up to 2^64 leaves. // RFC 9162
pub const TLOG_PROOF_HASHES_MAX: usize = 64;
/// Largest tlog-proof file read: the proof and a signed note. // spec: silent
pub const TLOG_PROOF_BYTES_MAX: usize = note::NOTE_BYTES_MAX + 4 * 1024;

/// A tlog-proof's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlogProof {
    /// The opaque extra data (here: the entry's leaf data), if any.
    pub extra: Option<Vec<u8>>,
    pub index: LeafIndex,
    pub proof: Vec<Hash32>,
    /// The signed checkpoint, verbatim (ends in a newline).
    pub checkpoint: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlogProofError {
    #[error("not a tlog-proof: the first line is not {TLOG_PROOF_HEADER}")]
    Header,
    #[error("tlog-proof is larger than {TLOG_PROOF_BYTES_MAX} bytes")]
    TooLarge,
    #[error("tlog-proof line {0}: {1}")]
    Line(usize, &'static str),
    #[error("tlog-proof has more than {TLOG_PROOF_HASHES_MAX} proof hashes")]
    TooManyHashes,
    #[error("tlog-proof has no blank line before its checkpoint")]
    NoCheckpoint,
    #[error("tlog-proof has no extra line with the entry, and no itemHash was given")]
    NoEntry,
    #[error(
        "tlog-proof's extra is not a log entry of a known hash scheme (\"bvs-log-v1\" || itemHash)"
    )]
    UnknownEntry,
}

impl TlogProof {
    /// A proof of `item` at `index` of the checkpoint `checkpoint`, its
    /// leaf data under `scheme` as the extra data.
    pub fn for_item(
        scheme: HashScheme,
        item: &Hash32,
        index: LeafIndex,
        proof: Vec<Hash32>,
        checkpoint: &str,
    ) -> TlogProof {
        TlogProof {
            extra: Some(scheme.leaf_data(item).to_vec()),
            index,
            proof,
            checkpoint: checkpoint.to_owned(),
        }
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(128 + 46 * self.proof.len() + self.checkpoint.len());
        out.push_str(TLOG_PROOF_HEADER);
        out.push('\n');
        if let Some(extra) = &self.extra {
            out.push_str("extra ");
            out.push_str(&note::base64_encode(extra));
            out.push('\n');
        }
        out.push_str(&format!("index {}\n", self.index));
        for h in &self.proof {
            out.push_str(&note::base64_encode(h.as_bytes()));
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&self.checkpoint);
        out
    }

    /// Reads a tlog-proof.
    ///
    /// # Errors
    /// The first line that breaks the format.
    pub fn parse(text: &str) -> Result<TlogProof, TlogProofError> {
        if text.len() > TLOG_PROOF_BYTES_MAX {
            return Err(TlogProofError::TooLarge);
        }
        let mut rest = text;
        let mut next = |n| -> Result<&str, TlogProofError> {
            let (line, after) = rest
                .split_once('\n')
                .ok_or(TlogProofError::Line(n, "missing or not ended by a newline"))?;
            rest = after;
            Ok(line)
        };
        if next(1)? != TLOG_PROOF_HEADER {
            return Err(TlogProofError::Header);
        }
        let mut n = 2;
        let mut line = next(n)?;
        let extra = match line.strip_prefix("extra ") {
            Some(b64) => {
                let bytes = note::base64_decode(b64)
                    .ok_or(TlogProofError::Line(n, "extra is not standard base64"))?;
                n += 1;
                line = next(n)?;
                Some(bytes)
            }
            None => None,
        };
        let index = line
            .strip_prefix("index ")
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .filter(|d| *d == "0" || !d.starts_with('0'))
            .and_then(|d| d.parse::<u64>().ok())
            .ok_or(TlogProofError::Line(
                n,
                "expected `index <decimal without leading zeros>`",
            ))?;
        let mut proof = Vec::new();
        loop {
            n += 1;
            let line = next(n).map_err(|_| TlogProofError::NoCheckpoint)?;
            if line.is_empty() {
                break;
            }
            if proof.len() == TLOG_PROOF_HASHES_MAX {
                return Err(TlogProofError::TooManyHashes);
            }
            let hash = note::base64_decode(line)
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or(TlogProofError::Line(n, "not a base64 SHA-256 hash"))?;
            proof.push(Hash32(hash));
        }
        if rest.is_empty() {
            return Err(TlogProofError::NoCheckpoint);
        }
        Ok(TlogProof {
            extra,
            index: LeafIndex(index),
            proof,
            checkpoint: rest.to_owned(),
        })
    }

    /// The entry this proof is about: the hash scheme and itemHash its
    /// `extra` names.
    ///
    /// # Errors
    /// No extra data, or extra data that is not `"bvs-log-v1" || itemHash`.
    pub fn item(&self) -> Result<(HashScheme, Hash32), TlogProofError> {
        let extra = self.extra.as_deref().ok_or(TlogProofError::NoEntry)?;
        let scheme = HashScheme::CURRENT;
        let tag_len = scheme.name().len();
        let item = extra
            .get(tag_len..)
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .map(Hash32)
            .ok_or(TlogProofError::UnknownEntry)?;
        if extra[..tag_len] != scheme.leaf_data(&item)[..tag_len] {
            return Err(TlogProofError::UnknownEntry);
        }
        Ok((scheme, item))
    }
}

/// One tlog-proof per delta of `receipt`, each with the anchorId it
/// proves: the delta's itemHash as the entry, its leaf index and
/// inclusion proof, and the receipt's signed (and cosigned) tree head.
///
/// # Errors
/// The receipt's `hashScheme` is unknown, or a delta has no proof item.
pub fn from_receipt(
    receipt: &crate::receipt::Receipt,
) -> Result<Vec<(String, TlogProof)>, FromReceiptError> {
    let scheme = HashScheme::parse(&receipt.proof.hash_scheme).map_err(FromReceiptError::Scheme)?;
    receipt
        .deltas
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let item = receipt
                .proof
                .items
                .get(i)
                .filter(|p| p.item_hash.ct_eq(&d.item_hash))
                .ok_or(FromReceiptError::NoProofItem { index: i })?;
            Ok((
                d.anchor_id.clone(),
                TlogProof::for_item(
                    scheme,
                    &d.item_hash,
                    item.leaf_index,
                    item.inclusion_proof.clone(),
                    &receipt.proof.tree_head,
                ),
            ))
        })
        .collect()
}

/// Why a receipt's deltas cannot be written as tlog-proofs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FromReceiptError {
    #[error("{0}")]
    Scheme(crate::merkle::UnknownScheme),
    #[error("deltas[{index}] has no proof item of the same itemHash")]
    NoProofItem { index: usize },
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const NOTE: &str = "example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u{2014} example.com/log AAAAAAAA\n";

    #[test]
    fn a_proof_reads_back_as_written() {
        let p = TlogProof::for_item(
            HashScheme::CURRENT,
            &Hash32::digest(b"item"),
            LeafIndex(2),
            vec![Hash32::digest(b"a"), Hash32::digest(b"b")],
            NOTE,
        );
        let text = p.to_text();
        assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra YnZz"));
        assert!(text.ends_with(NOTE));
        let back = TlogProof::parse(&text).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            back.item().unwrap(),
            (HashScheme::CURRENT, Hash32::digest(b"item"))
        );
        // No extra, no proof lines (a one-leaf tree).
        let bare = TlogProof {
            extra: None,
            index: LeafIndex(0),
            proof: vec![],
            checkpoint: NOTE.into(),
        };
        assert_eq!(TlogProof::parse(&bare.to_text()).unwrap(), bare);
        assert_eq!(bare.item(), Err(TlogProofError::NoEntry));
    }

    #[test]
    fn malformed_proofs_are_refused_by_line() {
        let cases = [
            (
                "c2sp.org/tlog-proof@v2\nindex 0\n\n",
                TlogProofError::Header,
            ),
            (
                "c2sp.org/tlog-proof@v1\nindex 01\n\nx\n",
                TlogProofError::Line(2, "expected `index <decimal without leading zeros>`"),
            ),
            (
                "c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\nx\n",
                TlogProofError::Line(2, "extra is not standard base64"),
            ),
            (
                "c2sp.org/tlog-proof@v1\nindex 0\nAAAA\n\nx\n",
                TlogProofError::Line(3, "not a base64 SHA-256 hash"),
            ),
            (
                "c2sp.org/tlog-proof@v1\nindex 0\n",
                TlogProofError::NoCheckpoint,
            ),
            (
                "c2sp.org/tlog-proof@v1\nindex 0\n\n",
                TlogProofError::NoCheckpoint,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(TlogProof::parse(text), Err(want), "{text:?}");
        }
        let other_extra = TlogProof {
            extra: Some(b"rekor entry".to_vec()),
            index: LeafIndex(0),
            proof: vec![],
            checkpoint: NOTE.into(),
        };
        assert_eq!(other_extra.item(), Err(TlogProofError::UnknownEntry));
    }
}
