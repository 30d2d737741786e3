//! OWASP's device cookie ("Slow Down Online Guessing Attacks with Device
//! Cookies"): a browser that logged in to an account before keeps its own
//! allowance of failed logins, and every other client of that account,
//! from whatever network, shares one small allowance (issue 40). A
//! stranger spread over many networks meets the shared limit after
//! [`UNTRUSTED_LOGIN_FAILURES`]'s burst, and cannot lock the owner's known
//! browser out with it.
//!
//! The cookie is `<nonce>.<tag>`: a random nonce and its HMAC-SHA256 under
//! a key derived from `JWT_SECRET`, over the account's e-mail and the
//! nonce, so it is valid for that account only and cannot be forged.

use super::limit::Rate;
use crate::app::App;
use crate::error::ApiResult;
use crate::{ids, secret};

/// The cookie's name.
pub const COOKIE: &str = "bvs_device";
/// How long a device stays known without logging in again: a year.
pub const COOKIE_MAX_AGE_SECS: u64 = 365 * 24 * 3600;
/// Random bytes of a cookie's nonce.
const NONCE_BYTES: usize = 16;

/// Failed logins per account from every client without a device cookie
/// for it, whatever its network: 20 at once, then one a minute. An owner's
/// successful login gives one back (not all: a stranger does not get a
/// fresh allowance each time the owner logs in).
pub const UNTRUSTED_LOGIN_FAILURES: Rate = Rate::new(1.0 / 60.0, 20.0);

/// A device cookie presented with a login, valid for its account.
pub struct Device {
    nonce: String,
}

fn key(app: &App) -> ApiResult<[u8; 32]> {
    secret::hmac_sha256(
        app.secret("JWT_SECRET")?.as_bytes(),
        &[b"bvs/device-cookie/v1"],
    )
}

fn tag(app: &App, email: &str, nonce: &str) -> ApiResult<[u8; 32]> {
    secret::hmac_sha256(&key(app)?, &[email.as_bytes(), b"\n", nonce.as_bytes()])
}

/// A new device cookie for `email`'s account, as a `Set-Cookie` value:
/// `HttpOnly`, `Secure`, `SameSite=Strict`, sent back only to the login
/// route.
///
/// # Errors
/// Internal error if `JWT_SECRET` is missing or the CSPRNG fails.
pub fn issue(app: &App, email: &str) -> ApiResult<String> {
    let nonce = hex::encode(ids::random_bytes(NONCE_BYTES)?);
    let tag = hex::encode(tag(app, email, &nonce)?);
    Ok(format!(
        "{COOKIE}={nonce}.{tag}; Max-Age={COOKIE_MAX_AGE_SECS}; Path=/dashboard/auth/login; \
         HttpOnly; Secure; SameSite=Strict"
    ))
}

/// The device cookie in a `Cookie` header, when it is valid for `email`'s
/// account; `None` when there is none, or it is forged or another
/// account's.
///
/// # Errors
/// Internal error if `JWT_SECRET` is missing.
pub fn presented(app: &App, cookie_header: Option<&str>, email: &str) -> ApiResult<Option<Device>> {
    let Some(header) = cookie_header else {
        return Ok(None);
    };
    for pair in header.split(';') {
        let Some((name, value)) = pair.trim().split_once('=') else {
            continue;
        };
        if name != COOKIE {
            continue;
        }
        let Some((nonce, presented_tag)) = value.split_once('.') else {
            continue;
        };
        let well_formed = nonce.len() == NONCE_BYTES * 2
            && nonce.bytes().all(|b| b.is_ascii_hexdigit())
            && presented_tag.len() == 64;
        if !well_formed {
            continue;
        }
        let want = hex::encode(tag(app, email, nonce)?);
        if secret::ct_eq(want.as_bytes(), presented_tag.as_bytes()) {
            return Ok(Some(Device {
                nonce: nonce.to_owned(),
            }));
        }
    }
    Ok(None)
}

/// The failed-login bucket of one known device of one account.
pub fn bucket(email: &str, device: &Device) -> String {
    format!(
        "login-device:{}",
        secret::sha256_hex(&format!("{email}\n{}", device.nonce))
    )
}

/// The failed-login bucket every client without a device cookie for the
/// account shares.
pub fn untrusted_bucket(email: &str) -> String {
    format!("login-untrusted:{}", secret::sha256_hex(email))
}
