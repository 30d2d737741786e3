//! Witness cosignatures: C2SP tlog-cosignature `cosignature/v1` (Ed25519).
//!
//! A witness that has checked a checkpoint against the last one it
//! cosigned for that log adds a signed-note line to it:
//!
//! ```text
//! — <witness name> base64(key id || u64 timestamp || Ed25519 signature)
//! ```
//!
//! over the message `cosignature/v1\ntime <timestamp>\n` followed by the
//! whole checkpoint body (every line before the note's blank line, with
//! its final newline). The key id is SHA-256(name || "\n" || 0x04 ||
//! public key)[:4], and a witness key is published as a signed-note vkey
//! of type 0x04: `<name>+<hex id>+<base64(0x04 || public key)>`.
//!
//! Verification needs no signing code and no time source: the caller
//! passes the keys it trusts (a [`crate::policy::Policy`]) and, when it
//! checks the log's latest head, the current time ([`Freshness`]).
//! ML-DSA-44 cosignatures (type 0x06) are not supported; a policy naming
//! one is refused by name.

use crate::note::{self, NoteError};
#[cfg(feature = "server")]
use ed25519_dalek::{Signer as _, SigningKey};

/// Signature type byte of a `cosignature/v1` key. // C2SP tlog-cosignature
pub const COSIGNATURE_V1_TYPE: u8 = 0x04;
/// A `cosignature/v1` signature: u64 timestamp, then 64 Ed25519 bytes. // C2SP tlog-cosignature
const COSIGNATURE_V1_BYTES: usize = 8 + 64;
/// Largest timestamp a cosignature may carry. // C2SP tlog-cosignature: MUST NOT exceed 2^63 - 1
pub const TIMESTAMP_MAX: u64 = (1 << 63) - 1;
/// How far ahead of the verifier's clock a cosignature of the latest head
/// may be dated (clock skew between witness and verifier). // spec: silent; as aics-tlog's default
pub const FUTURE_SECONDS_MAX: u64 = 30;
/// How old the newest cosignatures of a log's latest head may be when a
/// verifier checks that head now (`bvs-verify head`, `monitor`): a log
/// that keeps showing one client an old head (a frozen view) fails it.
/// Never applied to a saved receipt or answer checked offline. // spec: silent; the service refreshes cosignatures well within it (docs/proofs-api.md)
pub const LATEST_HEAD_AGE_SECONDS_DEFAULT: u64 = 3600;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CosignatureError {
    #[error("witness key: {0}")]
    MalformedKey(NoteError),
    /// Another signature type: a log's key (0x01), or ML-DSA-44's (0x06).
    #[error("not a cosignature/v1 witness key (signature type 0x04; ML-DSA-44 is not supported)")]
    WrongType,
    #[error("a weak Ed25519 witness key (small order): anyone could forge its cosignatures")]
    WeakKey,
    #[error("witness name must be non-empty, without spaces, '+' or line breaks")]
    InvalidName,
    #[error("the checkpoint is not a well-formed signed note")]
    MalformedNote,
    #[error("the cosignature by {0} is malformed: not 8 timestamp bytes and a 64-byte signature")]
    MalformedCosignature(String),
    #[error("the cosignature by {0} has a timestamp beyond 2^63-1")]
    TimestampTooLarge(String),
    #[error("the cosignature by {0} does not match the checkpoint: a forged or altered line")]
    InvalidCosignature(String),
}

/// A witness's `cosignature/v1` key, read from its vkey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessKey {
    name: String,
    id: u32,
    key: ed25519_dalek::VerifyingKey,
}

impl WitnessKey {
    /// Reads a vkey `<name>+<hex key id>+<base64(0x04 || Ed25519 key)>`.
    ///
    /// # Errors
    /// A malformed vkey or key id, another signature type (a log's 0x01
    /// key, ML-DSA-44's 0x06), or a weak Ed25519 key.
    pub fn parse(vkey: &str) -> Result<WitnessKey, CosignatureError> {
        let (name, id, key) = note::vkey_parts(vkey).map_err(CosignatureError::MalformedKey)?;
        if key[0] != COSIGNATURE_V1_TYPE {
            return Err(CosignatureError::WrongType);
        }
        let key = note::ed25519_key(&key[1..]).map_err(CosignatureError::MalformedKey)?;
        if key.is_weak() {
            return Err(CosignatureError::WeakKey);
        }
        Ok(WitnessKey {
            name: name.to_owned(),
            id,
            key,
        })
    }

    /// The witness's name (the key name of its signature lines).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Ed25519 public key, the witness's identity: two vkeys with the
    /// same key are one witness (C2SP tlog-policy, duplicates).
    pub fn public_key(&self) -> &[u8; 32] {
        self.key.as_bytes()
    }

    /// The vkey text, as [`WitnessKey::parse`] reads it.
    pub fn vkey(&self) -> String {
        let mut material = Vec::with_capacity(33);
        material.push(COSIGNATURE_V1_TYPE);
        material.extend_from_slice(self.key.as_bytes());
        format!(
            "{}+{:08x}+{}",
            self.name,
            self.id,
            note::base64_encode(&material)
        )
    }

    /// Checks one `cosignature/v1` signature (timestamp || signature, as
    /// a signature line carries it after the key id) over `body` and
    /// returns its timestamp.
    fn verify(&self, body: &str, signature: &[u8]) -> Result<u64, CosignatureError> {
        let malformed = || CosignatureError::MalformedCosignature(self.name.clone());
        let bytes = <[u8; COSIGNATURE_V1_BYTES]>::try_from(signature).map_err(|_| malformed())?;
        let (time, sig) = bytes.split_at(8);
        let timestamp = u64::from_be_bytes(<[u8; 8]>::try_from(time).map_err(|_| malformed())?);
        if timestamp > TIMESTAMP_MAX {
            return Err(CosignatureError::TimestampTooLarge(self.name.clone()));
        }
        let sig = <[u8; 64]>::try_from(sig).map_err(|_| malformed())?;
        ed25519_dalek::Verifier::verify(
            &self.key,
            message(body, timestamp).as_bytes(),
            &ed25519_dalek::Signature::from_bytes(&sig),
        )
        .map_err(|_| CosignatureError::InvalidCosignature(self.name.clone()))?;
        Ok(timestamp)
    }
}

/// The message a `cosignature/v1` signs: the header line, the time line,
/// then the checkpoint body (ending in a newline).
pub fn message(body: &str, timestamp: u64) -> String {
    format!("cosignature/v1\ntime {timestamp}\n{body}")
}

/// A signed note read for its cosignatures: the body they sign and its
/// signature lines.
pub struct CosignedNote<'a> {
    body: String,
    lines: Vec<note::NoteSignature<'a>>,
}

impl<'a> CosignedNote<'a> {
    /// Reads a signed note.
    ///
    /// # Errors
    /// [`CosignatureError::MalformedNote`].
    pub fn read(note_text: &'a str) -> Result<CosignedNote<'a>, CosignatureError> {
        if note_text.len() > note::NOTE_BYTES_MAX {
            return Err(CosignatureError::MalformedNote);
        }
        let (body, lines) = note::split_note(note_text).ok_or(CosignatureError::MalformedNote)?;
        Ok(CosignedNote { body, lines })
    }

    /// The time of `witness`'s valid cosignature on this note (the newest,
    /// when it cosigned more than once), or `None` when the note has no
    /// line of its key. Lines of other keys are ignored, as signed-note
    /// readers do.
    ///
    /// # Errors
    /// A line with the witness's name and key id whose signature does not
    /// verify: per C2SP signed-note such a note is malformed, and nothing
    /// in it counts.
    pub fn cosigned_at(&self, witness: &WitnessKey) -> Result<Option<u64>, CosignatureError> {
        let mut found: Option<u64> = None;
        for (name, id, signature) in &self.lines {
            if witness.id == *id && witness.name == *name {
                let t = witness.verify(&self.body, signature)?;
                found = Some(found.map_or(t, |s| s.max(t)));
            }
        }
        Ok(found)
    }
}

/// For each of `witnesses`, [`CosignedNote::cosigned_at`] on `note_text`.
///
/// # Errors
/// As [`CosignedNote::read`] and [`CosignedNote::cosigned_at`].
pub fn cosignatures(
    note_text: &str,
    witnesses: &[WitnessKey],
) -> Result<Vec<Option<u64>>, CosignatureError> {
    let note = CosignedNote::read(note_text)?;
    witnesses.iter().map(|w| note.cosigned_at(w)).collect()
}

/// Whether a cosignature's time matters, and against which clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// A saved receipt, answer or proof checked offline: a cosignature
    /// counts whatever its time (C2SP tlog-proof: timestamps are not part
    /// of the check).
    Offline,
    /// The log's latest head, fetched now: a cosignature counts only when
    /// made at most `max_age` seconds before `now` (and at most
    /// [`FUTURE_SECONDS_MAX`] after it), so a stale view fails.
    Latest { now: u64, max_age: u64 },
}

/// How a cosignature's time stands against a [`Freshness`] bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeliness {
    InTime,
    /// Older than the bound: made `age` seconds before the verifier's clock.
    TooOld {
        age: u64,
    },
    /// Dated this many seconds after the verifier's clock.
    InTheFuture {
        ahead: u64,
    },
}

impl Freshness {
    /// How `timestamp` stands against this bound.
    pub fn judge(self, timestamp: u64) -> Timeliness {
        match self {
            Freshness::Offline => Timeliness::InTime,
            Freshness::Latest { now, max_age } => {
                if timestamp > now.saturating_add(FUTURE_SECONDS_MAX) {
                    Timeliness::InTheFuture {
                        ahead: timestamp - now,
                    }
                } else if now.saturating_sub(timestamp) > max_age {
                    Timeliness::TooOld {
                        age: now - timestamp,
                    }
                } else {
                    Timeliness::InTime
                }
            }
        }
    }
}

/// The vkey of the witness `name` whose Ed25519 seed is `seed`.
///
/// # Errors
/// [`CosignatureError::InvalidName`].
#[cfg(feature = "server")]
pub fn witness_vkey(name: &str, seed: &[u8; 32]) -> Result<String, CosignatureError> {
    if !note::key_name_valid(name) || name.chars().any(char::is_control) {
        return Err(CosignatureError::InvalidName);
    }
    let key = SigningKey::from_bytes(seed).verifying_key();
    let mut material = vec![COSIGNATURE_V1_TYPE];
    material.extend_from_slice(key.as_bytes());
    Ok(format!(
        "{name}+{:08x}+{}",
        note::key_id(name, &material),
        note::base64_encode(&material)
    ))
}

/// Cosigns the signed note `note_text` as the witness `name` (seed
/// `seed`) at `timestamp`: the signature line, ending in a newline, as a
/// witness's `add-checkpoint` answer carries it. For tests and fixtures;
/// the service never cosigns its own checkpoints.
///
/// # Errors
/// A bad name, a malformed note, or a timestamp beyond 2^63-1.
#[cfg(feature = "server")]
pub fn cosign(
    note_text: &str,
    name: &str,
    seed: &[u8; 32],
    timestamp: u64,
) -> Result<String, CosignatureError> {
    if !note::key_name_valid(name) || name.chars().any(char::is_control) {
        return Err(CosignatureError::InvalidName);
    }
    if timestamp > TIMESTAMP_MAX {
        return Err(CosignatureError::TimestampTooLarge(name.into()));
    }
    let (body, _) = note::split_note(note_text).ok_or(CosignatureError::MalformedNote)?;
    let key = SigningKey::from_bytes(seed);
    let mut material = vec![COSIGNATURE_V1_TYPE];
    material.extend_from_slice(key.verifying_key().as_bytes());
    let mut bytes = note::key_id(name, &material).to_be_bytes().to_vec();
    bytes.extend_from_slice(&timestamp.to_be_bytes());
    bytes.extend_from_slice(&key.sign(message(&body, timestamp).as_bytes()).to_bytes());
    Ok(format!("\u{2014} {name} {}\n", note::base64_encode(&bytes)))
}

#[cfg(test)]
#[cfg(feature = "server")]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_notes::{head, LOG_SEED, ORIGIN};

    fn witness(n: u8) -> (String, [u8; 32], WitnessKey) {
        let name = format!("witness.example/w{n}");
        let seed = [n; 32];
        let key = WitnessKey::parse(&witness_vkey(&name, &seed).unwrap()).unwrap();
        (name, seed, key)
    }

    #[test]
    fn a_cosigned_head_carries_each_witness_time_and_still_verifies_as_the_logs() {
        let (n1, s1, k1) = witness(1);
        let (n2, s2, k2) = witness(2);
        let (_, _, k3) = witness(3);
        let note = head(42);
        let cosigned = format!(
            "{note}{}{}",
            cosign(&note, &n1, &s1, 1_700_000_000).unwrap(),
            cosign(&note, &n2, &s2, 1_700_000_100).unwrap()
        );
        assert_eq!(
            cosignatures(&cosigned, &[k1.clone(), k2, k3]).unwrap(),
            vec![Some(1_700_000_000), Some(1_700_000_100), None]
        );
        // The log's own check ignores the witness lines.
        let log_key = note::public_key_string(ORIGIN, &LOG_SEED).unwrap();
        assert!(note::verify_tree_head(&cosigned, &log_key).is_ok());
        // The vkey reads back to itself.
        assert_eq!(WitnessKey::parse(&k1.vkey()).unwrap(), k1);
    }

    #[test]
    fn a_cosignature_of_another_head_or_a_changed_time_is_refused() {
        let (n1, s1, k1) = witness(1);
        let other = cosign(&head(41), &n1, &s1, 5).unwrap();
        let forged = format!("{}{other}", head(42));
        assert_eq!(
            cosignatures(&forged, std::slice::from_ref(&k1)),
            Err(CosignatureError::InvalidCosignature(n1.clone()))
        );
        // Rewrite the timestamp bytes of a valid line.
        let line = cosign(&head(42), &n1, &s1, 5).unwrap();
        let b64 = line.trim_end().rsplit(' ').next().unwrap();
        let mut bytes = note::base64_decode(b64).unwrap();
        bytes[11] ^= 1;
        let altered = format!(
            "{}\u{2014} {n1} {}\n",
            head(42),
            note::base64_encode(&bytes)
        );
        assert_eq!(
            cosignatures(&altered, &[k1]),
            Err(CosignatureError::InvalidCosignature(n1))
        );
    }

    #[test]
    fn log_keys_and_ml_dsa_keys_are_not_witness_keys() {
        let log_key = note::public_key_string(ORIGIN, &LOG_SEED).unwrap();
        assert_eq!(
            WitnessKey::parse(&log_key),
            Err(CosignatureError::WrongType)
        );
        let mut material = vec![0x06];
        material.extend_from_slice(&[9; 1312]);
        let id = note::key_id("w", &material);
        let ml_dsa = format!("w+{id:08x}+{}", note::base64_encode(&material));
        assert_eq!(WitnessKey::parse(&ml_dsa), Err(CosignatureError::WrongType));
        // The identity point is a weak key.
        let mut weak = vec![COSIGNATURE_V1_TYPE, 1];
        weak.extend_from_slice(&[0; 31]);
        let id = note::key_id("w", &weak);
        let weak = format!("w+{id:08x}+{}", note::base64_encode(&weak));
        assert_eq!(WitnessKey::parse(&weak), Err(CosignatureError::WeakKey));
    }

    #[test]
    fn freshness_applies_only_to_the_latest_head() {
        let latest = Freshness::Latest {
            now: 10_000,
            max_age: 3600,
        };
        assert_eq!(latest.judge(10_000 - 3600), Timeliness::InTime);
        assert_eq!(
            latest.judge(10_000 - 3601),
            Timeliness::TooOld { age: 3601 }
        );
        assert_eq!(latest.judge(10_030), Timeliness::InTime);
        assert_eq!(latest.judge(10_031), Timeliness::InTheFuture { ahead: 31 });
        assert_eq!(Freshness::Offline.judge(0), Timeliness::InTime);
        assert_eq!(Freshness::Offline.judge(TIMESTAMP_MAX), Timeliness::InTime);
    }
}
