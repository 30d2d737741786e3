//! The signatures receivers check (docs/webhooks.md, "Verifying a
//! delivery").
//!
//! Standard Webhooks (issue 29): `webhook-id` (the delivery id, the same on
//! every retry), `webhook-timestamp` (unix seconds of the attempt) and
//! `webhook-signature`, a space-separated list over the signed content
//! `{id}.{timestamp}.{body}`: `v1,<base64 HMAC-SHA256>` keyed with the
//! base64 decoding of the secret's part after `whsec_` (one per live
//! secret: two during a rotation's overlap), and `v1a,<base64 Ed25519>`
//! with the environment's webhook signing key, whose public half
//! `GET /api/v1/webhooks/keys` publishes.
//!
//! Legacy, kept for compatibility: `X-Service-Signature: sha256=<hex>`, the
//! lowercase hex HMAC-SHA256 of the exact body bytes keyed with the whole
//! secret text (spec: Authentication, item 7), with the current secret only.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bvs_core::types::Env;
use ed25519_dalek::{Signer as _, SigningKey};

use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::{LogId, LogKey};
use crate::secret;

pub const HEADER_SIGNATURE: &str = "X-Service-Signature";
pub const HEADER_DELIVERY_ID: &str = "X-Service-Delivery-Id";
pub const HEADER_TIMESTAMP: &str = "X-Service-Timestamp";
pub const HEADER_EVENT: &str = "X-Service-Event";

/// Standard Webhooks headers (lowercase, as the spec writes them).
pub const HEADER_WEBHOOK_ID: &str = "webhook-id";
pub const HEADER_WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";
pub const HEADER_WEBHOOK_SIGNATURE: &str = "webhook-signature";

/// The prefix of a symmetric secret and of a published public key
/// (Standard Webhooks: "secret serialization").
pub const SECRET_PREFIX: &str = "whsec_";
pub const PUBLIC_KEY_PREFIX: &str = "whpk_";

/// What the environment's webhook signing key is derived from its log seed
/// with: a label of its own, so the key signs nothing a log key signs.
const WEBHOOK_KEY_LABEL: &[u8] = b"bvs/webhook-signing/v1";

/// `sha256=<hex HMAC-SHA256(secret, body)>` (legacy).
///
/// # Errors
/// Internal error if the HMAC cannot be keyed (never for a byte key).
pub fn signature_header(secret_text: &str, body: &[u8]) -> ApiResult<String> {
    let tag = secret::hmac_sha256(secret_text.as_bytes(), &[body])?;
    Ok(format!("sha256={}", hex::encode(tag)))
}

/// The content Standard Webhooks signs: `{id}.{timestamp}.{body}`.
pub fn signed_content(id: &str, timestamp_secs: u64, body: &[u8]) -> Vec<u8> {
    let mut content = format!("{id}.{timestamp_secs}.").into_bytes();
    content.extend_from_slice(body);
    content
}

/// `v1,<base64 HMAC-SHA256>` keyed with the base64 decoding of the part of
/// `secret_text` after `whsec_`; `None` for a secret not of that form
/// (every secret this service issues is).
///
/// # Errors
/// Internal error if the HMAC cannot be keyed (never for a byte key).
pub fn v1_signature(secret_text: &str, content: &[u8]) -> ApiResult<Option<String>> {
    let Some(key) = secret_text
        .strip_prefix(SECRET_PREFIX)
        .and_then(|b64| BASE64.decode(b64).ok())
    else {
        return Ok(None);
    };
    let tag = secret::hmac_sha256(&key, &[content])?;
    Ok(Some(format!("v1,{}", BASE64.encode(tag))))
}

/// An environment's webhook signing key (Ed25519), derived from its log
/// seed so a deployment needs no secret of its own for it.
pub struct WebhookKey {
    pub env: Env,
    key: SigningKey,
}

impl WebhookKey {
    /// The key of `env`.
    ///
    /// # Errors
    /// Internal error when the environment's log seed is missing.
    pub fn load(app: &App, env: Env) -> ApiResult<WebhookKey> {
        let seed = LogKey::load(app, LogId { env, shard: 0 })?.derive(WEBHOOK_KEY_LABEL)?;
        Ok(WebhookKey::from_seed(env, &seed))
    }

    fn from_seed(env: Env, seed: &[u8; 32]) -> WebhookKey {
        WebhookKey {
            env,
            key: SigningKey::from_bytes(seed),
        }
    }

    /// `whpk_<base64 of the 32-byte Ed25519 public key>`.
    pub fn public_key(&self) -> String {
        format!(
            "{PUBLIC_KEY_PREFIX}{}",
            BASE64.encode(self.key.verifying_key().as_bytes())
        )
    }

    /// A short id of the key: the first 8 bytes of the SHA-256 of its
    /// public key, hex.
    pub fn key_id(&self) -> String {
        let digest = bvs_core::hash::Hash32::digest(self.key.verifying_key().as_bytes());
        digest.to_hex()[..16].to_string()
    }

    /// `v1a,<base64 Ed25519 signature of content>`.
    pub fn v1a_signature(&self, content: &[u8]) -> String {
        format!("v1a,{}", BASE64.encode(self.key.sign(content).to_bytes()))
    }
}

/// The `webhook-signature` value: a `v1,` signature per secret (the current
/// one first, then the previous one during a rotation's overlap), then the
/// `v1a,` signature.
///
/// # Errors
/// Internal error if an HMAC cannot be keyed.
pub fn standard_signatures(
    secrets: &[&str],
    key: &WebhookKey,
    content: &[u8],
) -> ApiResult<String> {
    let mut parts = Vec::with_capacity(secrets.len() + 1);
    for s in secrets {
        if let Some(sig) = v1_signature(s, content)? {
            parts.push(sig);
        }
    }
    parts.push(key.v1a_signature(content));
    Ok(parts.join(" "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, Verifier as _, VerifyingKey};

    #[test]
    fn the_signature_matches_rfc_4231_test_case_2() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            signature_header("Jefe", b"what do ya want for nothing?").unwrap(),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn v1_matches_the_standard_webhooks_reference_vector() {
        // The Standard Webhooks libraries' own test vector.
        let content = signed_content(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(
            v1_signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &content).unwrap(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=".to_string())
        );
    }

    #[test]
    fn a_secret_not_of_the_whsec_base64_form_gives_no_v1() {
        assert_eq!(v1_signature("plain", b"x").unwrap(), None);
        assert_eq!(v1_signature("whsec_not base64!", b"x").unwrap(), None);
    }

    #[test]
    fn v1a_verifies_with_the_published_key_and_not_after_a_change() {
        let key = WebhookKey::from_seed(Env::Sandbox, &[7u8; 32]);
        let content = signed_content("dlv_1", 1_700_000_000, b"{\"a\":1}");
        let header =
            standard_signatures(&["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], &key, &content)
                .unwrap();
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts[0].starts_with("v1,"));
        let public = BASE64
            .decode(key.public_key().strip_prefix(PUBLIC_KEY_PREFIX).unwrap())
            .unwrap();
        let public = VerifyingKey::from_bytes(&public.try_into().unwrap()).unwrap();
        let sig = BASE64
            .decode(parts[1].strip_prefix("v1a,").unwrap())
            .unwrap();
        let sig = Signature::from_bytes(&sig.try_into().unwrap());
        assert!(public.verify(&content, &sig).is_ok());
        let tampered = signed_content("dlv_1", 1_700_000_000, b"{\"a\":2}");
        assert!(public.verify(&tampered, &sig).is_err());
        assert_eq!(key.key_id().len(), 16);
    }
}
