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

/// A tenant's id (`ten_…`, [`TenantId::new`]): minted by the service,
/// never parsed from a caller's text, so it has no rule to check. Typed
/// so a tenant id is not mixed up with another string from the auth
/// context to the SQL bind; stored and bound as the same text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TenantId(String);

impl TenantId {
    /// A new tenant's id: `ten_` and 20 random base62 characters.
    ///
    /// # Errors
    /// The platform's random source failing.
    pub fn new() -> ApiResult<Self> {
        new_id("ten").map(Self)
    }

    /// An id named as text: a `:tenantId` path parameter (nothing to
    /// check: an unknown id finds no tenant), the owner of the public
    /// agreement writes' Idempotency-Key claims, a sample's or a test's
    /// fixture. Stored ids are read by serde, the same way.
    pub fn from_text(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TenantId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
impl From<&str> for TenantId {
    fn from(text: &str) -> Self {
        Self::from_text(text)
    }
}

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
}
