//! Outgoing mail through one interface, two transports:
//!
//! - DEV_MODE: an outbox table, read back at `GET /dev/mail?to=<email>`.
//!   Body and token are sealed (`secret::seal`) so the table never
//!   holds a token in clear.
//! - otherwise: an HTTP mail API. `MAIL_HTTP_URL` (var) receives
//!   `POST {"from", "to", "subject", "text"}` with
//!   `Authorization: Bearer <MAIL_API_KEY>` (secret); `MAIL_FROM` (var) is
//!   the sender. This matches the JSON APIs of the usual providers through a
//!   thin relay.
//!
//! Invariant: no log line carries a body or a token.

use serde::{Deserialize, Serialize};
use worker::{Fetch, Headers, Method, Request, RequestInit};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::secret;
use crate::{ids, store};

use crate::store::mail::MailKind;

/// Newest mails `/dev/mail` returns.
pub const OUTBOX_READ_MAX: u32 = 50;

pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
    pub kind: MailKind,
    /// The single-use token the body carries (for the dev outbox reader).
    pub token: Option<String>,
}

/// What the outbox seals.
#[derive(Serialize, Deserialize)]
pub struct SealedMail {
    pub body: String,
    pub token: Option<String>,
}

/// The key that seals the outbox: derived from JWT_SECRET, so only this
/// deployment can open it.
pub fn outbox_key(app: &App) -> ApiResult<[u8; 32]> {
    let jwt = app.secret("JWT_SECRET")?;
    secret::hmac_sha256(jwt.as_bytes(), &[b"bvs/dev-outbox/v1"])
}

/// The newest mails of the dev outbox to `to` (at most `OUTBOX_READ_MAX`),
/// still sealed.
///
/// # Errors
/// D1 errors.
pub async fn outbox(app: &App, to: &str) -> ApiResult<Vec<store::accounts::MailRow>> {
    store::accounts::mails_to(&app.control_db()?, to, OUTBOX_READ_MAX).await
}

/// Sends `mail` through the configured transport.
///
/// # Errors
/// Internal error if the transport is missing or fails.
pub async fn send(app: &App, mail: &Mail) -> ApiResult<()> {
    if app.dev_mode() {
        let sealed = secret::seal(
            &outbox_key(app)?,
            &serde_json::to_vec(&SealedMail {
                body: mail.body.clone(),
                token: mail.token.clone(),
            })?,
        )?;
        let id = ids::new_id("mail")?;
        return store::accounts::insert_mail(
            &app.control_db()?,
            &store::accounts::NewMail {
                id: &id,
                to: &mail.to,
                subject: &mail.subject,
                kind: mail.kind,
                sealed: &sealed,
            },
            app.now_ms,
        )
        .await;
    }
    send_http(app, mail).await
}

async fn send_http(app: &App, mail: &Mail) -> ApiResult<()> {
    let url = app
        .var("MAIL_HTTP_URL")
        .ok_or_else(|| ApiError::internal("MAIL_HTTP_URL is not configured"))?;
    let from = app
        .var("MAIL_FROM")
        .ok_or_else(|| ApiError::internal("MAIL_FROM is not configured"))?;
    let api_key = app.secret("MAIL_API_KEY")?;
    let payload = serde_json::json!({
        "from": from,
        "to": mail.to,
        "subject": mail.subject,
        "text": mail.body,
    });
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set("authorization", &format!("Bearer {api_key}"))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(serde_json::to_string(&payload)?.into()));
    let req = Request::new_with_init(&url, &init)?;
    crate::roundtrips::outbound().await?;
    let resp = Fetch::Request(req).send().await?;
    let status = resp.status_code();
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(ApiError::internal(format!(
            "mail API answered {status} for a {} mail",
            mail.kind
        )))
    }
}

/// The verification e-mail.
pub fn verification(app: &App, to: &str, first_name: &str, token: &str) -> Mail {
    let link = format!("{}/verify-email?token={token}", public_base_url(app));
    Mail {
        to: to.to_string(),
        subject: "Verify your e-mail address".to_string(),
        body: format!(
            "Hello {first_name},\n\nconfirm your e-mail address by opening this link within 24 hours:\n\n{link}\n\n\
             If you did not create an account, ignore this message.\n"
        ),
        kind: MailKind::VerifyEmail,
        token: Some(token.to_string()),
    }
}

/// The password-reset e-mail.
pub fn password_reset(app: &App, to: &str, token: &str) -> Mail {
    let link = format!("{}/reset-password?token={token}", public_base_url(app));
    Mail {
        to: to.to_string(),
        subject: "Reset your password".to_string(),
        body: format!(
            "Someone asked to reset the password of this account. To choose a new one, open this link \
             within one hour:\n\n{link}\n\nor send the token {token} to POST /dashboard/auth/reset-password.\n\
             If it was not you, ignore this message: your password is unchanged.\n"
        ),
        kind: MailKind::ResetPassword,
        token: Some(token.to_string()),
    }
}

/// `PUBLIC_BASE_URL` (var), or a relative link in local runs.
fn public_base_url(app: &App) -> String {
    app.var("PUBLIC_BASE_URL")
        .map(|u| u.trim_end_matches('/').to_string())
        .unwrap_or_default()
}
