//! The signature receivers check: `X-Service-Signature: sha256=<hex>`, the
//! lowercase hex HMAC-SHA256 of the exact body bytes keyed with the
//! webhook's secret (spec: Authentication, item 7).

use crate::auth::secret;
use crate::error::ApiResult;

pub const HEADER_SIGNATURE: &str = "X-Service-Signature";
pub const HEADER_DELIVERY_ID: &str = "X-Service-Delivery-Id";
pub const HEADER_TIMESTAMP: &str = "X-Service-Timestamp";
pub const HEADER_EVENT: &str = "X-Service-Event";

/// `sha256=<hex HMAC-SHA256(secret, body)>`.
///
/// # Errors
/// Internal error if the HMAC cannot be keyed (never for a byte key).
pub fn signature_header(secret_text: &str, body: &[u8]) -> ApiResult<String> {
    let tag = secret::hmac_sha256(secret_text.as_bytes(), &[body])?;
    Ok(format!("sha256={}", hex::encode(tag)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_matches_rfc_4231_test_case_2() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            signature_header("Jefe", b"what do ya want for nothing?").unwrap(),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
