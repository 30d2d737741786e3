//! The signatures receivers check (docs/webhooks.md, "Verifying a
//! delivery").
//!
//! Standard Webhooks (issue 29): `webhook-id` (the delivery id, the same on
//! every retry), `webhook-timestamp` (unix seconds of the attempt) and
//! `webhook-signature`, a space-separated list over the signed content
//! `{id}.{timestamp}.{body}`: `v1,<base64 HMAC-SHA256>` keyed with the
//! base64 decoding of the secret's part after `whsec_` (one per live
//! secret: two during a rotation's overlap), and `v1a,<base64 Ed25519>`
//! with the endpoint's own signing key (issue 40), whose public half
//! (`whpk_…`) the endpoint's dashboard answers show beside it (two during a
//! rotation's overlap). No key signs for more than one endpoint, so a
//! delivery taken from one receiver does not verify at another's.
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

/// What every endpoint's signing key is derived from the production log's
/// seed with: a label of its own, so the key signs nothing a log key
/// signs (issue 40: one key per endpoint, no key shared by tenants).
const ENDPOINT_KEY_LABEL: &[u8] = b"bvs/webhook-endpoint-key/v1";

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

/// The derivation key of every endpoint's signing key: HMAC-SHA256 of the
/// production log's seed under `ENDPOINT_KEY_LABEL`. The log seed is the
/// service's longest-lived secret (it is the log's identity and never
/// rotates), so an endpoint's key stays the same without being stored.
///
/// # Errors
/// Internal error when the production log's seed is missing.
pub fn endpoint_key_root(app: &App) -> ApiResult<[u8; 32]> {
    LogKey::load(
        app,
        LogId {
            env: Env::Production,
            shard: 0,
        },
    )?
    .derive(ENDPOINT_KEY_LABEL)
}

/// One webhook endpoint's Ed25519 signing key of one generation (issue
/// 40): derived from the endpoint's id and the generation, so each endpoint
/// has a key of its own, an existing endpoint has one at once (generation
/// 1, no backfill), and a rotation moves to the next generation.
pub struct EndpointKey {
    key: SigningKey,
}

impl EndpointKey {
    /// The key of `webhook_id` at `generation`, under `root`
    /// (`endpoint_key_root`): HMAC-SHA256(root, id ‖ 0x00 ‖ generation as
    /// 8 bytes big-endian) is the Ed25519 seed.
    ///
    /// # Errors
    /// Internal error if the HMAC cannot be keyed (never for a byte key).
    pub fn derive(root: &[u8; 32], webhook_id: &str, generation: u64) -> ApiResult<EndpointKey> {
        let seed = secret::hmac_sha256(
            root,
            &[webhook_id.as_bytes(), &[0u8], &generation.to_be_bytes()],
        )?;
        Ok(EndpointKey {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// `whpk_<base64 of the 32-byte Ed25519 public key>`.
    pub fn public_key(&self) -> String {
        format!(
            "{PUBLIC_KEY_PREFIX}{}",
            BASE64.encode(self.key.verifying_key().as_bytes())
        )
    }

    /// `v1a,<base64 Ed25519 signature of content>`.
    pub fn v1a_signature(&self, content: &[u8]) -> String {
        format!("v1a,{}", BASE64.encode(self.key.sign(content).to_bytes()))
    }
}

/// The `webhook-signature` value: a `v1,` signature per secret, then a
/// `v1a,` signature per endpoint key (each list the current one first, then
/// the previous one during a rotation's overlap).
///
/// # Errors
/// Internal error if an HMAC cannot be keyed.
pub fn standard_signatures(
    secrets: &[&str],
    keys: &[EndpointKey],
    content: &[u8],
) -> ApiResult<String> {
    let mut parts = Vec::with_capacity(secrets.len() + keys.len());
    for s in secrets {
        if let Some(sig) = v1_signature(s, content)? {
            parts.push(sig);
        }
    }
    parts.extend(keys.iter().map(|k| k.v1a_signature(content)));
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

    fn verifying(public: &str) -> VerifyingKey {
        let public = BASE64
            .decode(public.strip_prefix(PUBLIC_KEY_PREFIX).unwrap())
            .unwrap();
        VerifyingKey::from_bytes(&public.try_into().unwrap()).unwrap()
    }

    fn v1a(part: &str) -> Signature {
        let sig = BASE64.decode(part.strip_prefix("v1a,").unwrap()).unwrap();
        Signature::from_bytes(&sig.try_into().unwrap())
    }

    #[test]
    fn v1a_verifies_with_the_endpoints_key_and_not_after_a_change() {
        let key = EndpointKey::derive(&[7u8; 32], "wh_a", 1).unwrap();
        let content = signed_content("dlv_1", 1_700_000_000, b"{\"a\":1}");
        let header = standard_signatures(
            &["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
            std::slice::from_ref(&key),
            &content,
        )
        .unwrap();
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts[0].starts_with("v1,"));
        let public = verifying(&key.public_key());
        assert!(public.verify(&content, &v1a(parts[1])).is_ok());
        let tampered = signed_content("dlv_1", 1_700_000_000, b"{\"a\":2}");
        assert!(public.verify(&tampered, &v1a(parts[1])).is_err());
    }

    #[test]
    fn every_endpoint_and_generation_has_a_key_of_its_own() {
        let root = [7u8; 32];
        let a1 = EndpointKey::derive(&root, "wh_a", 1).unwrap();
        let public = |id: &str, generation: u64| {
            EndpointKey::derive(&root, id, generation)
                .unwrap()
                .public_key()
        };
        // Stable: the same id and generation give the same key.
        assert_eq!(a1.public_key(), public("wh_a", 1));
        assert_ne!(a1.public_key(), public("wh_b", 1));
        assert_ne!(a1.public_key(), public("wh_a", 2));
        // No id/generation pair runs into another (the 0x00 separator).
        assert_ne!(public("wh_a", 1), public("wh_a\u{0}", 1));
        // Another root, another key.
        assert_ne!(
            a1.public_key(),
            EndpointKey::derive(&[8u8; 32], "wh_a", 1)
                .unwrap()
                .public_key()
        );
        // A's key does not verify B's signature.
        let b = EndpointKey::derive(&root, "wh_b", 1).unwrap();
        let content = signed_content("dlv_1", 1_700_000_000, b"{}");
        let sig = v1a(&b.v1a_signature(&content));
        assert!(verifying(&a1.public_key()).verify(&content, &sig).is_err());
        assert!(verifying(&b.public_key()).verify(&content, &sig).is_ok());
    }

    #[test]
    fn during_an_overlap_both_keys_sign() {
        let keys = [
            EndpointKey::derive(&[7u8; 32], "wh_a", 2).unwrap(),
            EndpointKey::derive(&[7u8; 32], "wh_a", 1).unwrap(),
        ];
        let content = signed_content("dlv_1", 1_700_000_000, b"{}");
        let header = standard_signatures(&[], &keys, &content).unwrap();
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        for (part, key) in parts.iter().zip(&keys) {
            assert!(verifying(&key.public_key())
                .verify(&content, &v1a(part))
                .is_ok());
        }
    }
}
