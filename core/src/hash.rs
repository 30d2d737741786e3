//! Hashes a user can recompute with standard tools (see docs/hashes.md).

use crate::amount::Amount;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

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
    pub fn parse_field(field: &str, text: &str) -> Result<Hash32, crate::FieldError> {
        Hash32::parse(text).map_err(|e| crate::FieldError::new(field, e.to_string()))
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
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
        f.write_str(&self.to_hex())
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
        s.serialize_str(&self.to_hex())
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

/// What a delta's `itemHash` commits to. Raw context (reason, referenceId,
/// metadata) may be purged later; the hash stays and anyone who kept these
/// fields can recompute it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaContent {
    pub anchor_id: String,
    pub customer_id: String,
    pub delta: Amount,
    pub reason: String,
    pub reference_id: Option<String>,
    pub metadata: Option<crate::json::Value>,
    /// ISO 8601 UTC with milliseconds, as `time::format_iso_ms` prints it.
    pub declared_timestamp: String,
}

impl DeltaContent {
    /// The exact JSON text that is hashed: RFC 8785 (JCS) canonical form of
    /// `{anchorId, customerId, declaredTimestamp, delta (decimal string),
    /// metadata (object or null), reason, referenceId (string or null)}`.
    ///
    /// # Errors
    /// [`HashError::Canonicalization`] if the metadata cannot be
    /// canonicalized (it always can once it passed `types::Metadata`).
    pub fn canonical_json(&self) -> Result<String, HashError> {
        // Members written in JCS order (sorted keys); the metadata object
        // is canonicalized by `json`, the same code the verifier runs.
        let mut out = String::with_capacity(256);
        let text = |out: &mut String, key: &str, value: &str| {
            crate::json::write_string(out, key);
            out.push(':');
            crate::json::write_string(out, value);
            out.push(',');
        };
        out.push('{');
        text(&mut out, "anchorId", &self.anchor_id);
        text(&mut out, "customerId", &self.customer_id);
        text(&mut out, "declaredTimestamp", &self.declared_timestamp);
        text(&mut out, "delta", &self.delta.to_string());
        out.push_str("\"metadata\":");
        match &self.metadata {
            Some(m) => m
                .write_canonical(&mut out)
                .map_err(|e| HashError::Canonicalization(e.to_string()))?,
            None => out.push_str("null"),
        }
        out.push(',');
        text(&mut out, "reason", &self.reason);
        out.push_str("\"referenceId\":");
        match &self.reference_id {
            Some(r) => crate::json::write_string(&mut out, r),
            None => out.push_str("null"),
        }
        out.push('}');
        Ok(out)
    }
}

/// A delta's `itemHash`: SHA-256 of [`DeltaContent::canonical_json`].
///
/// # Errors
/// As [`DeltaContent::canonical_json`].
pub fn item_hash(content: &DeltaContent) -> Result<Hash32, HashError> {
    Ok(Hash32::digest(content.canonical_json()?.as_bytes()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    #[test]
    fn item_hash_is_over_jcs_with_delta_as_string() {
        let content = DeltaContent {
            anchor_id: "anc_1".into(),
            customer_id: "cust_42".into(),
            delta: Amount::parse("-4.250").unwrap(),
            reason: "refund €".into(),
            reference_id: None,
            metadata: Some(crate::json::Value::from_serde(
                &serde_json::json!({"z": 1, "a": [1.5, "x", 1e21], "é": true}),
            )),
            declared_timestamp: "2026-11-22T04:56:40.123Z".into(),
        };
        assert_eq!(
            content.canonical_json().unwrap(),
            r#"{"anchorId":"anc_1","customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"-4.25","metadata":{"a":[1.5,"x",1e+21],"z":1,"é":true},"reason":"refund €","referenceId":null}"#
        );
        assert_eq!(
            item_hash(&content).unwrap(),
            Hash32::digest(content.canonical_json().unwrap().as_bytes())
        );
    }

    /// The canonical text as serde_json_canonicalizer writes it: the
    /// reference implementation the hand-written form must equal.
    fn reference_canonical_json(c: &DeltaContent, metadata: &Option<serde_json::Value>) -> String {
        serde_json_canonicalizer::to_string(&serde_json::json!({
            "anchorId": c.anchor_id,
            "customerId": c.customer_id,
            "delta": c.delta.to_string(),
            "reason": c.reason,
            "referenceId": c.reference_id,
            "metadata": metadata,
            "declaredTimestamp": c.declared_timestamp,
        }))
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn canonical_json_equals_the_reference_jcs_implementation(
            texts in prop::collection::vec("\\PC{0,12}|[\\u{0}-\\u{40}]{0,6}", 4),
            with_ref in any::<bool>(),
            keys in prop::collection::vec("\\PC{0,6}", 0..5),
            numbers in prop::collection::vec(any::<f64>().prop_filter("finite", |f| f.is_finite()), 5),
            ints in prop::collection::vec(-(1i64 << 53)..(1i64 << 53), 5),
            delta in -1_000_000_000i64..1_000_000_000,
        ) {
            let metadata = (!keys.is_empty()).then(|| {
                let mut m = serde_json::Map::new();
                for (i, k) in keys.iter().enumerate() {
                    m.insert(k.clone(), serde_json::json!([numbers[i], ints[i], texts[i % 4], {"n": null, "b": true}]));
                }
                serde_json::Value::Object(m)
            });
            let c = DeltaContent {
                anchor_id: texts[0].clone(),
                customer_id: texts[1].clone(),
                delta: Amount::parse(&format!("{delta}.5")).unwrap(),
                reason: texts[2].clone(),
                reference_id: with_ref.then(|| texts[3].clone()),
                metadata: metadata.as_ref().map(crate::json::Value::from_serde),
                declared_timestamp: "2026-11-22T04:56:40.123Z".into(),
            };
            prop_assert_eq!(c.canonical_json().unwrap(), reference_canonical_json(&c, &metadata));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn any_field_change_changes_the_item_hash(reason in "\\PC{1,20}", other in "\\PC{1,20}") {
            prop_assume!(reason != other);
            let base = DeltaContent {
                anchor_id: "a".into(), customer_id: "c".into(), delta: Amount::parse("1").unwrap(),
                reason: reason.clone(), reference_id: Some("r".into()), metadata: None,
                declared_timestamp: "2026-01-01T00:00:00.000Z".into(),
            };
            let changed = DeltaContent { reason: other, ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&changed).unwrap());
            let no_ref = DeltaContent { reference_id: None, ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&no_ref).unwrap());
        }
    }
}
