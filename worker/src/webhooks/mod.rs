//! Webhooks: event names, url safety, signing, the dispatcher that turns
//! ledger events into deliveries, and the delivery attempts themselves.
//! See docs/webhooks.md.

pub mod delivery;
pub mod dispatch;
pub mod endpoints;
pub mod event_log;
pub mod samples;
pub mod signing;
pub mod url_safety;

use crate::app::App;
use crate::error::ApiResult;
use crate::secret;

pub const EVENT_TEST: &str = "test";
pub use crate::store::events::{
    CHECKPOINT_COSIGNED as EVENT_CHECKPOINT_COSIGNED,
    CHECKPOINT_DISPUTED as EVENT_CHECKPOINT_DISPUTED,
    CHECKPOINT_VERIFIED as EVENT_CHECKPOINT_VERIFIED,
    CHECKPOINT_WITNESSED as EVENT_CHECKPOINT_WITNESSED, DELTA_VERIFIED as EVENT_DELTA_VERIFIED,
    VERIFICATION_COMPLETED as EVENT_VERIFICATION_COMPLETED,
    VERIFICATION_FAILED as EVENT_VERIFICATION_FAILED,
};

/// Every event name a webhook may subscribe to (spec: Events).
pub const EVENT_NAMES: &[&str] = &[
    EVENT_DELTA_VERIFIED,
    EVENT_CHECKPOINT_VERIFIED,
    EVENT_VERIFICATION_COMPLETED,
    EVENT_VERIFICATION_FAILED,
    EVENT_CHECKPOINT_COSIGNED,
    EVENT_CHECKPOINT_DISPUTED,
    EVENT_CHECKPOINT_WITNESSED,
    EVENT_TEST,
];

/// The key that seals webhook secrets at rest: derived from JWT_SECRET, so
/// only this deployment can open them.
///
/// # Errors
/// Internal error if JWT_SECRET is missing.
pub fn secret_key(app: &App) -> ApiResult<[u8; 32]> {
    let jwt = app.secret("JWT_SECRET")?;
    secret::hmac_sha256(jwt.as_bytes(), &[b"bvs/webhook-secret/v1"])
}
