//! Dashboard session tokens: JWT (RFC 7519) with HS256 only.
//!
//! Written by hand over `hmac` + `sha2` rather than with a JWT crate: the
//! whole format we accept is one fixed algorithm, and a twenty-line verifier
//! that refuses anything else cannot be talked into `alg: none` or a
//! public-key confusion.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{TenantId, UserId};
use crate::secret;

/// How long a dashboard JWT is valid: 8 hours, one working day. There is no
/// refresh token; after that the user logs in again. A password change or
/// reset revokes earlier tokens at once (see `Claims::ver`).
pub const JWT_LIFETIME_SECS: u64 = 8 * 60 * 60;

/// Longest token we look at, in bytes; ours are about 250.
const JWT_BYTES_MAX: usize = 2048;

const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// User id.
    pub sub: UserId,
    /// Tenant id.
    pub tid: TenantId,
    /// The user's session version when the token was issued.
    pub ver: i64,
    /// Issued at, seconds since the epoch.
    pub iat: u64,
    /// Expires at, seconds since the epoch.
    pub exp: u64,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
}

/// Signs `claims` with HS256.
///
/// # Errors
/// Internal error if serialization or HMAC set-up fails.
pub fn sign(key: &[u8], claims: &Claims) -> ApiResult<String> {
    let header = URL_SAFE_NO_PAD.encode(HEADER);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims)?);
    let signing_input = format!("{header}.{payload}");
    let tag = secret::hmac_sha256(key, &[signing_input.as_bytes()])?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(tag)))
}

/// Why a token was refused. All become 401; the message differs only
/// between "expired" and "invalid".
#[derive(Debug, PartialEq, Eq)]
pub enum JwtError {
    Malformed,
    Algorithm,
    Signature,
    Expired,
}

impl JwtError {
    pub fn into_api(self) -> ApiError {
        match self {
            JwtError::Expired => ApiError::coded(
                ErrorCode::JwtExpired,
                "JWT expired: log in again to get a new token",
            ),
            _ => ApiError::coded(
                ErrorCode::InvalidJwt,
                "Invalid JWT: send the token returned by /dashboard/auth/login",
            ),
        }
    }
}

/// Verifies signature, algorithm and expiry at `now_secs`.
///
/// # Errors
/// `JwtError` naming why the token is refused.
pub fn verify(key: &[u8], token: &str, now_secs: u64) -> Result<Claims, JwtError> {
    if token.len() > JWT_BYTES_MAX {
        return Err(JwtError::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    let header_bytes = URL_SAFE_NO_PAD.decode(h).map_err(|_| JwtError::Malformed)?;
    let header: Header = serde_json::from_slice(&header_bytes).map_err(|_| JwtError::Malformed)?;
    // Exactly HS256: `none`, `HS512`, `RS256`... are refused before any
    // signature work.
    if header.alg != "HS256" {
        return Err(JwtError::Algorithm);
    }
    let tag = URL_SAFE_NO_PAD.decode(s).map_err(|_| JwtError::Malformed)?;
    let signing_input = &token[..h.len() + 1 + p.len()];
    let valid = secret::hmac_sha256_verify(key, &[signing_input.as_bytes()], &tag)
        .map_err(|_| JwtError::Signature)?;
    if !valid {
        return Err(JwtError::Signature);
    }
    let payload = URL_SAFE_NO_PAD.decode(p).map_err(|_| JwtError::Malformed)?;
    let claims: Claims = serde_json::from_slice(&payload).map_err(|_| JwtError::Malformed)?;
    if claims.exp <= now_secs {
        return Err(JwtError::Expired);
    }
    Ok(claims)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn claims(exp: u64) -> Claims {
        Claims {
            sub: UserId::from_text("usr_1"),
            tid: "ten_1".into(),
            ver: 0,
            iat: 100,
            exp,
        }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let t = sign(b"k", &claims(200)).unwrap();
        assert_eq!(verify(b"k", &t, 199).unwrap(), claims(200));
        assert_eq!(verify(b"k", &t, 200), Err(JwtError::Expired));
    }

    #[test]
    fn another_key_or_a_changed_payload_is_refused() {
        let t = sign(b"k", &claims(200)).unwrap();
        assert_eq!(verify(b"other", &t, 150), Err(JwtError::Signature));
        let forged = sign(b"k", &claims(10_000)).unwrap();
        let mixed = format!(
            "{}.{}",
            forged.rsplit_once('.').unwrap().0,
            t.rsplit_once('.').unwrap().1
        );
        assert_eq!(verify(b"k", &mixed, 150), Err(JwtError::Signature));
    }

    #[test]
    fn alg_none_is_refused() {
        let h = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
        let p = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(200)).unwrap());
        assert_eq!(
            verify(b"k", &format!("{h}.{p}."), 150),
            Err(JwtError::Algorithm)
        );
    }
}
