//! Hashes, constant-time comparison and sealing of secrets.
//!
//! Invariant: every comparison of a secret (API-key secret, token hash,
//! admin token, JWT signature, password hash) goes through `ct_eq` or an
//! HMAC `verify`, never `==`.

use bvs_core::hash::Hash32;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Deserializer};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ApiResult};
use crate::ids;

type HmacSha256 = Hmac<Sha256>;

/// Lowercase hex SHA-256: how API-key secrets and e-mail tokens are stored.
/// They are 160+ random bits, so a fast hash is enough; passwords, which are
/// guessable, use PBKDF2 instead (see `password`).
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The SHA-256 of a high-entropy secret (an API key's secret, an e-mail
/// token), how the secret is stored and looked up: bound as 64 lowercase
/// hex digits (`sha256_hex`'s text), read back from the stored text once.
/// It has no `==` (compare with [`SecretDigest::ct_eq`], constant time), no
/// `Serialize` (no answer carries it) and a `Debug` that shows nothing.
#[derive(Clone, Copy)]
pub struct SecretDigest(Hash32);

impl SecretDigest {
    /// The digest of a presented or new secret.
    pub fn of(secret: &str) -> SecretDigest {
        SecretDigest(Hash32::digest(secret.as_bytes()))
    }

    /// Constant-time equality.
    pub fn ct_eq(&self, other: &SecretDigest) -> bool {
        self.0.ct_eq(&other.0)
    }

    /// The digest as the store binds it (its lowercase hex).
    pub fn stored(&self) -> &Hash32 {
        &self.0
    }
}

impl std::fmt::Debug for SecretDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretDigest(..)")
    }
}

impl<'de> Deserialize<'de> for SecretDigest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Hash32::deserialize(d).map(SecretDigest)
    }
}

/// A password's stored form (`password::hash`,
/// `pbkdf2-sha256$<iterations>$<salt>$<hash>`), opaque to everything but
/// `password::verify`: no `==`, no `Serialize`, a `Debug` that shows
/// nothing.
pub struct PasswordHash(String);

impl PasswordHash {
    /// A stored form `password::hash` just made.
    pub fn from_stored(text: String) -> PasswordHash {
        PasswordHash(text)
    }

    /// The stored form, as the store binds it and `password::verify` reads it.
    pub fn stored(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

impl<'de> Deserialize<'de> for PasswordHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(PasswordHash)
    }
}

/// Constant-time equality of two byte strings (their lengths may leak,
/// their contents do not).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// Compares a presented secret with the expected one without leaking either
/// length or content: both are hashed first.
pub fn ct_eq_secret(presented: &str, expected: &str) -> bool {
    ct_eq(
        &Sha256::digest(presented.as_bytes()),
        &Sha256::digest(expected.as_bytes()),
    )
}

pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> ApiResult<[u8; 32]> {
    let mut mac =
        HmacSha256::new_from_slice(key).map_err(|e| ApiError::internal(format!("hmac: {e}")))?;
    for p in parts {
        mac.update(p);
    }
    Ok(mac.finalize().into_bytes().into())
}

/// Checks an HMAC-SHA256 tag in constant time.
pub fn hmac_sha256_verify(key: &[u8], parts: &[&[u8]], tag: &[u8]) -> ApiResult<bool> {
    let mut mac =
        HmacSha256::new_from_slice(key).map_err(|e| ApiError::internal(format!("hmac: {e}")))?;
    for p in parts {
        mac.update(p);
    }
    Ok(mac.verify_slice(tag).is_ok())
}

/// Bytes in a seal's nonce.
const SEAL_NONCE_BYTES: usize = 16;
/// Bytes of a seal's tag.
const SEAL_TAG_BYTES: usize = 32;

/// Encrypts and authenticates `plain` under `key` (encrypt-then-MAC): the
/// keystream is HMAC-SHA256(k_enc, nonce || counter), the tag
/// HMAC-SHA256(k_mac, nonce || ciphertext). Used only for the DEV_MODE mail
/// outbox, so no table holds a token in clear. Output: hex.
pub fn seal(key: &[u8], plain: &[u8]) -> ApiResult<String> {
    let (k_enc, k_mac) = seal_keys(key)?;
    let nonce = ids::random_bytes(SEAL_NONCE_BYTES)?;
    let cipher = keystream_xor(&k_enc, &nonce, plain)?;
    let tag = hmac_sha256(&k_mac, &[&nonce, &cipher])?;
    let mut out = nonce;
    out.extend_from_slice(&cipher);
    out.extend_from_slice(&tag);
    Ok(hex::encode(out))
}

/// Reverses `seal`; `None` when the seal was made with another key or altered.
pub fn open(key: &[u8], sealed: &str) -> ApiResult<Option<Vec<u8>>> {
    let Ok(bytes) = hex::decode(sealed) else {
        return Ok(None);
    };
    if bytes.len() < SEAL_NONCE_BYTES + SEAL_TAG_BYTES {
        return Ok(None);
    }
    let (k_enc, k_mac) = seal_keys(key)?;
    let (nonce, rest) = bytes.split_at(SEAL_NONCE_BYTES);
    let (cipher, tag) = rest.split_at(rest.len() - SEAL_TAG_BYTES);
    if !hmac_sha256_verify(&k_mac, &[nonce, cipher], tag)? {
        return Ok(None);
    }
    Ok(Some(keystream_xor(&k_enc, nonce, cipher)?))
}

fn seal_keys(key: &[u8]) -> ApiResult<([u8; 32], [u8; 32])> {
    Ok((
        hmac_sha256(key, &[b"bvs/seal/enc/v1"])?,
        hmac_sha256(key, &[b"bvs/seal/mac/v1"])?,
    ))
}

fn keystream_xor(k_enc: &[u8], nonce: &[u8], data: &[u8]) -> ApiResult<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    for (counter, chunk) in data.chunks(32).enumerate() {
        let block = hmac_sha256(k_enc, &[nonce, &(counter as u64).to_be_bytes()])?;
        out.extend(chunk.iter().zip(block.iter()).map(|(d, k)| d ^ k));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_matches_a_known_answer() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_secret_digest_is_bound_as_sha256_hex_and_read_back_from_it() {
        let d = SecretDigest::of("abc");
        assert_eq!(d.stored().to_hex(), sha256_hex("abc"));
        let read: SecretDigest =
            serde_json::from_str(&format!("\"{}\"", sha256_hex("abc"))).unwrap();
        assert!(read.ct_eq(&d));
        assert!(!read.ct_eq(&SecretDigest::of("abd")));
        assert!(serde_json::from_str::<SecretDigest>("\"not hex\"").is_err());
        assert_eq!(format!("{d:?}"), "SecretDigest(..)");
        let p: PasswordHash = serde_json::from_str("\"pbkdf2-sha256$1$c2FsdA$aGFzaA\"").unwrap();
        assert_eq!(p.stored(), "pbkdf2-sha256$1$c2FsdA$aGFzaA");
        assert_eq!(format!("{p:?}"), "PasswordHash(..)");
    }

    #[test]
    fn constant_time_secret_comparison_accepts_only_equal_secrets() {
        assert!(ct_eq_secret("s3cret", "s3cret"));
        assert!(!ct_eq_secret("s3cret", "s3creT"));
        assert!(!ct_eq_secret("s3cret", "s3cret-longer"));
    }

    #[test]
    fn a_seal_opens_only_with_its_key_and_unaltered() {
        let plain = b"token=abc123 and a body longer than one keystream block";
        let sealed = seal(b"key", plain).unwrap();
        assert!(
            !sealed.contains("616263313233"),
            "no clear text in the seal"
        );
        assert_eq!(open(b"key", &sealed).unwrap().unwrap(), plain.to_vec());
        assert_eq!(open(b"other", &sealed).unwrap(), None);
        let mut bytes = hex::decode(&sealed).unwrap();
        bytes[20] ^= 1;
        assert_eq!(open(b"key", &hex::encode(bytes)).unwrap(), None);
    }
}
