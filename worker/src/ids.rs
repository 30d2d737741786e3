//! Random identifiers and secrets (the platform's CSPRNG via getrandom).

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
