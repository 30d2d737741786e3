//! Hand-made JWTs for the forging tests: base64url, HS256 signing with a
//! key of the test's choice, and reading a token's claims.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// Unpadded base64url (the `base64` crate: an implementation of its own,
/// not the service's).
pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes unpadded base64url; panics on any other text.
pub fn b64url_decode(text: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(text)
        .unwrap_or_else(|e| panic!("not base64url: {text}: {e}"))
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
