//! Hand-made JWTs for the forging tests: base64url, HS256 signing with a
//! key of the test's choice, and reading a token's claims.

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn b64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Decodes unpadded base64url; panics on any other character.
pub fn b64url_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        let i = ALPHABET
            .iter()
            .position(|a| *a == c)
            .unwrap_or_else(|| panic!("not base64url: {c}"));
        u32::try_from(i).unwrap_or_else(|e| panic!("{i}: {e}"))
    };
    let mut out = Vec::new();
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c) << (18 - 6 * i);
        }
        for i in 0..chunk.len().saturating_sub(1) {
            out.push(((n >> (16 - 8 * i)) & 0xff) as u8);
        }
    }
    out
}

/// The base64url HMAC-SHA256 of `signing_input` under `key`.
pub fn hs256(key: &[u8], signing_input: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|e| panic!("HMAC key: {e}"));
    mac.update(signing_input.as_bytes());
    b64url(&mac.finalize().into_bytes())
}

/// A JWT of `header` and `claims` signed with HS256 under `key`, whatever
/// `header` says its algorithm is.
pub fn sign(header: &Value, claims: &Value, key: &[u8]) -> String {
    let input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let sig = hs256(key, &input);
    format!("{input}.{sig}")
}

/// The claims of a JWT, unchecked.
pub fn claims(jwt: &str) -> Value {
    let payload = jwt
        .split('.')
        .nth(1)
        .unwrap_or_else(|| panic!("not a JWT: {jwt}"));
    serde_json::from_slice(&b64url_decode(payload))
        .unwrap_or_else(|e| panic!("claims of {jwt}: {e}"))
}

/// Seconds since the Unix epoch, the unit of `iat` and `exp`.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_else(|e| panic!("clock before 1970: {e}"))
        .as_secs()
}
