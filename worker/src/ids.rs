//! Random identifiers and secrets (the platform's CSPRNG via getrandom).

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Fills `n` random bytes.
pub fn random_bytes(n: usize) -> ApiResult<Vec<u8>> {
    let mut buf = vec![0u8; n];
    getrandom::getrandom(&mut buf).map_err(|e| ApiError::internal(format!("getrandom: {e}")))?;
    Ok(buf)
}

/// A random alphanumeric string of `len` characters (base62, unbiased).
pub fn random_token(len: usize) -> ApiResult<String> {
    let mut out = String::with_capacity(len);
    while out.len() < len {
        for b in random_bytes(len * 2)? {
            // 62 * 4 = 248: reject 248..=255 to stay unbiased.
            if b < 248 {
                out.push(char::from(ALPHABET[usize::from(b % 62)]));
                if out.len() == len {
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// `<prefix>_<20 random base62 chars>`, about 119 bits.
pub fn new_id(prefix: &str) -> ApiResult<String> {
    Ok(format!("{prefix}_{}", random_token(20)?))
}

/// An id stored and bound as its text (the store's `Bind` takes any of
/// them): implemented by every type [`id!`] declares.
pub trait IdText: AsRef<str> {}

/// `id!(Name, "prefix", "what it names")` declares one id type: a
/// newtype of its text, serde transparent (rows read it as the stored
/// text, answers write it as that text), with `new()` minting `<prefix>_`
/// and 20 random base62 characters, `from_text` for an id named as text
/// (a path parameter, a queue message, a fixture: nothing to check, an
/// unknown id finds nothing), `as_str`, `into_string`, `Display` and
/// `AsRef<str>`.
/// Without a prefix the type has no `new()` (its id is minted elsewhere).
/// Typed so that one kind of id is not mixed up with another string from
/// where it is minted or read to the SQL bind.
macro_rules! id {
    ($name:ident, $prefix:literal, $what:literal) => {
        id!($name, $what);

        #[allow(dead_code, reason = "every id type has the same accessors, used or not yet")]
        impl $name {
            #[doc = concat!("Mints the id of ", $what, ": `", $prefix, "_` and 20 random base62 characters.")]
            ///
            /// # Errors
            /// The platform's random source failing.
            pub fn new() -> ApiResult<Self> {
                new_id($prefix).map(Self)
            }
        }
    };
    ($name:ident, $what:literal) => {
        #[doc = concat!("The id of ", $what, ", stored and bound as its text.")]
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        #[allow(dead_code, reason = "every id type has the same accessors, used or not yet")]
        impl $name {
            #[doc = concat!("The id of ", $what, " named as text (nothing to check: an unknown id finds nothing).")]
            pub fn from_text(text: impl Into<String>) -> Self {
                Self(text.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Its text, for a type of core (which knows no id types) or a
            /// polymorphic column (a leaf's `ref_id`).
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl IdText for $name {}

        #[cfg(test)]
        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self::from_text(text)
            }
        }
    };
}

// A tenant's id is minted by the service, never parsed from a caller's
// text; a `:tenantId` path parameter, the owner of the public agreement
// writes' Idempotency-Key claims and fixtures name one by `from_text`.
id!(TenantId, "ten", "a tenant");
// An API key's id is the `{id}` part of the key core mints (`ApiKey`).
id!(KeyId, "an API key");
id!(UserId, "usr", "a dashboard user");
id!(ContractId, "ctr", "a tenant's environment contract");
id!(WebhookId, "wh", "a webhook endpoint");
// A delivery's id is derived from its event's and endpoint's
// (`webhooks::dispatch::delivery_id`).
id!(DeliveryId, "a webhook delivery");
// Most event ids are derived from what they report (`evt_failed_…`,
// `evt_done_…`, …): `from_text`; the others are minted `evt_`.
id!(EventId, "evt", "a webhook event");
id!(AnchorId, "anc", "a delta (its anchor)");
// A submission's prefix says its kind (`sub_`, `bat_`): minted by
// `emit`.
id!(SubmissionId, "a submission");
id!(StatementId, "lst", "a liabilities statement");
id!(CheckpointId, "chk", "a checkpoint");
// This request's random token in its Idempotency-Key claim: the claim's
// later statements write only while the claim still holds it.
id!(ClaimToken, "clm", "an Idempotency-Key claim");
id!(MailRequestId, "mrq", "a queued mail request");

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_new_tenant_id_is_ten_and_20_base62_characters_stored_as_its_text() {
        let id = TenantId::new().unwrap();
        let rest = id.as_str().strip_prefix("ten_").unwrap();
        assert_eq!(rest.len(), 20);
        assert!(rest.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(TenantId::new().unwrap(), id);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<TenantId>(&json).unwrap(), id);
    }

    #[test]
    fn every_minted_id_is_its_prefix_and_20_base62_characters_and_reads_back_as_its_text() {
        fn check<T: IdText + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
            id: &T,
            prefix: &str,
        ) {
            let rest = id.as_ref().strip_prefix(prefix).unwrap();
            assert_eq!(rest.len(), 20, "{id:?}");
            assert!(rest.bytes().all(|b| b.is_ascii_alphanumeric()));
            let json = format!("\"{}\"", id.as_ref());
            assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), id);
        }
        check(&UserId::new().unwrap(), "usr_");
        check(&ContractId::new().unwrap(), "ctr_");
        check(&WebhookId::new().unwrap(), "wh_");
        check(&EventId::new().unwrap(), "evt_");
        check(&AnchorId::new().unwrap(), "anc_");
        check(&StatementId::new().unwrap(), "lst_");
        check(&CheckpointId::new().unwrap(), "chk_");
        check(&ClaimToken::new().unwrap(), "clm_");
        check(&MailRequestId::new().unwrap(), "mrq_");
    }

    #[test]
    fn an_id_named_as_text_is_that_text() {
        let id = DeliveryId::from_text("dlv_0123");
        assert_eq!(id.as_str(), "dlv_0123");
        assert_eq!(id.to_string(), "dlv_0123");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"dlv_0123\"");
        assert_eq!(id.into_string(), "dlv_0123");
    }
}
