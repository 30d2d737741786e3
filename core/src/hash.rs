//! Hashes a user can recompute with standard tools (see docs/hashes.md).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lowercase hex digits, two per byte (what `hex::encode`
/// gives, without its per-character iterator: a batch emit writes a few
/// hundred hashes as hex, issue 42).
pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; bytes.len() * 2];
    write_hex(bytes, &mut out);
    // Only ASCII digits were written: never the replacement.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `bytes` as hex digits into `out`, two per byte.
fn write_hex(bytes: &[u8], out: &mut [u8]) {
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX_DIGITS[usize::from(b >> 4)];
        pair[1] = HEX_DIGITS[usize::from(b & 0x0f)];
    }
}

/// A SHA-256 value, shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Hash32(pub [u8; 32]);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    #[error("must be 64 lowercase hex digits")]
    NotHex,
    #[error("could not canonicalize the item as RFC 8785 JSON: {0}")]
    Canonicalization(String),
}

impl Hash32 {
    /// SHA-256 of the empty string, the RFC 9162 root of an empty tree.
    pub const EMPTY: Hash32 = Hash32([
        0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9,
        0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52,
        0xb8, 0x55,
    ]);

    /// Parses 64 hex digits (lowercase; uppercase is accepted and normalized).
    ///
    /// # Errors
    /// [`HashError::NotHex`] for anything else.
    pub fn parse(text: &str) -> Result<Hash32, HashError> {
        if text.len() != 64 {
            return Err(HashError::NotHex);
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(text, &mut out).map_err(|_| HashError::NotHex)?;
        Ok(Hash32(out))
    }

    /// Parses a hash for a named field (`itemsRoot`, a path segment ...).
    ///
    /// # Errors
    /// `<field>: must be 64 lowercase hex digits`.
    pub fn parse_field(field: &str, text: &str) -> Result<Hash32, crate::error::FieldError> {
        Hash32::parse(text).map_err(|e| crate::error::FieldError::new(field, e.to_string()))
    }

    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// The 64 hex digits, without allocating.
    fn hex_digits(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        write_hex(&self.0, &mut out);
        out
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Constant-time equality: verification never leaks how many leading
    /// bytes of a forged hash were right.
    pub fn ct_eq(&self, other: &Hash32) -> bool {
        self.0.ct_eq(&other.0).into()
    }

    /// SHA-256 of arbitrary bytes.
    pub fn digest(bytes: &[u8]) -> Hash32 {
        Hash32(Sha256::digest(bytes).into())
    }
}

impl fmt::Display for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.hex_digits();
        f.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash32({})", self.to_hex())
    }
}

impl std::str::FromStr for Hash32 {
    type Err = HashError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Hash32::parse(s)
    }
}

#[cfg(feature = "server")]
impl From<tlog_tiles::Hash> for Hash32 {
    fn from(h: tlog_tiles::Hash) -> Self {
        Hash32(h.0)
    }
}

#[cfg(feature = "server")]
impl From<Hash32> for tlog_tiles::Hash {
    fn from(h: Hash32) -> Self {
        tlog_tiles::Hash(h.0)
    }
}

impl Serialize for Hash32 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let digits = self.hex_digits();
        let text = std::str::from_utf8(&digits).map_err(serde::ser::Error::custom)?;
        s.serialize_str(text)
    }
}

impl<'de> Deserialize<'de> for Hash32 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        Hash32::parse(&s).map_err(|e| serde::de::Error::custom(format!("hash {e}")))
    }
}

/// A fact's `contentHash`: SHA-256 of the content's UTF-8 bytes, the same
/// as `printf %s "$content" | sha256sum`.
pub fn content_hash(content: &str) -> Hash32 {
    Hash32::digest(content.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_known_answers() {
        // printf %s "" | sha256sum ; printf %s "hello world" | sha256sum
        assert_eq!(
            content_hash("").to_string(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            content_hash("hello world").to_string(),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert_eq!(content_hash(""), Hash32::EMPTY);
    }

    #[test]
    fn hex_is_hex_encodes_in_every_form() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(to_hex(&bytes), hex::encode(&bytes));
        let h = content_hash("x");
        let want = hex::encode(h.0);
        assert_eq!(h.to_hex(), want);
        assert_eq!(h.to_string(), want);
        assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{want}\""));
    }

    #[test]
    fn hex_parse_rules() {
        let h = content_hash("x");
        assert_eq!(Hash32::parse(&h.to_hex()).unwrap(), h);
        assert_eq!(Hash32::parse(&h.to_hex().to_uppercase()).unwrap(), h);
        for bad in [
            "",
            "00",
            &"g".repeat(64),
            &"0".repeat(63),
            &"0".repeat(65),
            &format!(" {}", "0".repeat(63)),
        ] {
            assert_eq!(Hash32::parse(bad), Err(HashError::NotHex), "{bad}");
        }
        assert_eq!(
            Hash32::parse_field("itemsRoot", "zz")
                .unwrap_err()
                .to_string(),
            "itemsRoot: must be 64 lowercase hex digits"
        );
        assert!(h.ct_eq(&h));
        assert!(!h.ct_eq(&Hash32::EMPTY));
        assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{h}\""));
    }
}
