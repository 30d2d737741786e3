//! Password storage: PBKDF2-HMAC-SHA256 through the runtime's WebCrypto
//! (native code, several times faster than the same loop in wasm), at the
//! highest iteration count workerd accepts. Cost measured in
//! docs/dashboard.md.
//!
//! Stored form: `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`, so the
//! iteration count can be raised later without breaking old hashes.

use base64::engine::general_purpose::STANDARD_NO_PAD;
use base64::Engine as _;
use worker::js_sys::{self, Array, Object, Reflect, Uint8Array};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;

use crate::error::{ApiError, ApiResult};
use crate::ids;
use crate::secret::{self, PasswordHash};

/// PBKDF2 iterations: workerd refuses more than 100,000.
pub const PBKDF2_ITERATIONS: u32 = 100_000;
/// Random salt per password, in bytes.
const SALT_BYTES: usize = 16;
/// Derived key length, in bytes.
const HASH_BYTES: u32 = 32;
const SCHEME: &str = "pbkdf2-sha256";

/// A salt used to spend the same time on logins for unknown e-mails, so the
/// reply time does not reveal whether an account exists.
const DUMMY_SALT: &[u8; SALT_BYTES] = b"bvs-dummy-salt!!";

/// Hashes a new password with a fresh random salt.
///
/// # Errors
/// Internal error if WebCrypto fails.
pub async fn hash(password: &str) -> ApiResult<PasswordHash> {
    let salt = ids::random_bytes(SALT_BYTES)?;
    let derived = pbkdf2(password, &salt, PBKDF2_ITERATIONS).await?;
    Ok(PasswordHash::from_stored(format!(
        "{SCHEME}${PBKDF2_ITERATIONS}${}${}",
        STANDARD_NO_PAD.encode(&salt),
        STANDARD_NO_PAD.encode(&derived)
    )))
}

/// Checks a password against its stored hash in constant time.
///
/// # Errors
/// Internal error if the stored hash is unreadable or WebCrypto fails.
pub async fn verify(password: &str, stored: &PasswordHash) -> ApiResult<bool> {
    let mut parts = stored.stored().split('$');
    let (Some(scheme), Some(iterations), Some(salt), Some(expected), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(ApiError::internal("stored password hash is malformed"));
    };
    if scheme != SCHEME {
        return Err(ApiError::internal(
            "stored password hash has another scheme",
        ));
    }
    let iterations: u32 = iterations
        .parse()
        .map_err(|_| ApiError::internal("stored password hash has a bad iteration count"))?;
    let salt = STANDARD_NO_PAD
        .decode(salt)
        .map_err(|_| ApiError::internal("stored password salt is not base64"))?;
    let expected = STANDARD_NO_PAD
        .decode(expected)
        .map_err(|_| ApiError::internal("stored password hash is not base64"))?;
    let derived = pbkdf2(password, &salt, iterations).await?;
    Ok(secret::ct_eq(&derived, &expected))
}

/// Spends the time of one `verify` without an account, and always fails.
///
/// # Errors
/// Internal error if WebCrypto fails.
pub async fn verify_dummy(password: &str) -> ApiResult<bool> {
    let _ = pbkdf2(password, DUMMY_SALT, PBKDF2_ITERATIONS).await?;
    Ok(false)
}

fn js_err(what: &str) -> impl Fn(JsValue) -> ApiError + '_ {
    move |e| ApiError::internal(format!("webcrypto {what}: {e:?}"))
}

fn get(target: &JsValue, key: &str) -> ApiResult<JsValue> {
    Reflect::get(target, &JsValue::from_str(key)).map_err(js_err(key))
}

fn call(target: &JsValue, method: &str, args: &Array) -> ApiResult<JsValue> {
    let f: js_sys::Function = get(target, method)?.dyn_into().map_err(js_err(method))?;
    Reflect::apply(&f, target, args).map_err(js_err(method))
}

fn set(target: &Object, key: &str, value: &JsValue) -> ApiResult<()> {
    Reflect::set(target, &JsValue::from_str(key), value)
        .map(|_| ())
        .map_err(js_err(key))
}

/// `crypto.subtle.deriveBits({name: "PBKDF2", hash: "SHA-256", salt,
/// iterations}, importKey("raw", password), 256)`.
async fn pbkdf2(password: &str, salt: &[u8], iterations: u32) -> ApiResult<Vec<u8>> {
    crate::roundtrips::kdf();
    let crypto = get(&js_sys::global().into(), "crypto")?;
    let subtle = get(&crypto, "subtle")?;

    let usages = Array::of1(&JsValue::from_str("deriveBits"));
    let import_args = Array::new();
    import_args.push(&JsValue::from_str("raw"));
    import_args.push(&Uint8Array::from(password.as_bytes()).into());
    import_args.push(&JsValue::from_str("PBKDF2"));
    import_args.push(&JsValue::FALSE);
    import_args.push(&usages.into());
    let key_promise: js_sys::Promise = call(&subtle, "importKey", &import_args)?
        .dyn_into()
        .map_err(js_err("importKey"))?;
    let key = JsFuture::from(key_promise)
        .await
        .map_err(js_err("importKey"))?;

    let params = Object::new();
    set(&params, "name", &JsValue::from_str("PBKDF2"))?;
    set(&params, "hash", &JsValue::from_str("SHA-256"))?;
    set(&params, "salt", &Uint8Array::from(salt).into())?;
    set(&params, "iterations", &JsValue::from(iterations))?;
    let derive_args = Array::new();
    derive_args.push(&params.into());
    derive_args.push(&key);
    derive_args.push(&JsValue::from(HASH_BYTES * 8));
    let bits_promise: js_sys::Promise = call(&subtle, "deriveBits", &derive_args)?
        .dyn_into()
        .map_err(js_err("deriveBits"))?;
    let bits = JsFuture::from(bits_promise)
        .await
        .map_err(js_err("deriveBits"))?;
    Ok(Uint8Array::new(&bits).to_vec())
}
