//! Account mails that must not tell whether an address has an account
//! (resend-verification, request-password-reset) go through the queue:
//! the HTTP path does the same work for every address, one D1 write and
//! one doorbell (`request`), and the consumer (`process`) looks the
//! address up, issues the token and sends. D1 is written before the
//! doorbell; a lost doorbell is re-rung by the sweep.

use bvs_core::types::Email;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::MailRequestId;
use crate::jobs::{Job, QUEUE_MAIL};
use crate::secret::SecretDigest;
use crate::store::accounts::{self, PURPOSE_RESET_PASSWORD, PURPOSE_VERIFY_EMAIL};
use crate::{ids, mail, store};

/// A verification link works for a day. // spec: silent
pub const VERIFY_TOKEN_LIFETIME_MS: u64 = 24 * 60 * 60 * 1000;
/// A reset link works for an hour. // issue 4
pub const RESET_TOKEN_LIFETIME_MS: u64 = 60 * 60 * 1000;
/// E-mail tokens: 32 base62 characters, about 190 bits.
pub const EMAIL_TOKEN_CHARS: usize = 32;

pub use crate::store::mail::MailKind;

/// Records the request and rings the queue. The same work for every
/// address: nothing here reads whether it has an account.
///
/// # Errors
/// D1 errors (a failed doorbell is only logged: the sweep re-rings).
pub async fn request(app: &App, kind: MailKind, email: &Email) -> ApiResult<()> {
    let id = MailRequestId::new()?;
    store::mail::insert(&app.control_db()?, &id, kind, email.as_str(), app.now_ms).await?;
    ring(app, id).await;
    Ok(())
}

/// Rings the mail queue for request `id`; failures are logged only.
pub async fn ring(app: &App, id: MailRequestId) {
    let sent = match app.env.queue(QUEUE_MAIL) {
        Ok(q) => match crate::roundtrips::outbound().await {
            Ok(()) => q.send(Job::Mail { id }).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("mail doorbell not rung: {e}");
    }
}

/// The consumer: claims request `id` (a second delivery finds nothing),
/// and issues and sends the mail if the address has an account that wants
/// it. A failing transport is logged (never the body) and not retried: the
/// user can ask again.
///
/// # Errors
/// D1 errors before the claim (the message is retried).
pub async fn process(app: &App, id: &MailRequestId) -> ApiResult<()> {
    let db = app.control_db()?;
    let Some(claimed) = store::mail::claim(&db, id).await? else {
        return Ok(());
    };
    let kind = claimed.kind;
    let Some(user) = accounts::user_by_email(&db, &claimed.email).await? else {
        return Ok(());
    };
    let (purpose, lifetime) = match kind {
        MailKind::VerifyEmail if user.is_verified() => return Ok(()),
        MailKind::VerifyEmail => (PURPOSE_VERIFY_EMAIL, VERIFY_TOKEN_LIFETIME_MS),
        MailKind::ResetPassword => (PURPOSE_RESET_PASSWORD, RESET_TOKEN_LIFETIME_MS),
    };
    let token = ids::random_token(EMAIL_TOKEN_CHARS)?;
    let token_hash = SecretDigest::of(&token);
    let statements = accounts::issue_token(
        &token_hash,
        &user.id,
        purpose,
        app.now_ms + lifetime,
        app.now_ms,
    )?;
    store::batch(&db, statements).await?;
    let m = match kind {
        MailKind::VerifyEmail => mail::verification(app, &user.email, &user.first_name, &token),
        MailKind::ResetPassword => mail::password_reset(app, &user.email, &token),
    };
    if let Err(e) = mail::send(app, &m).await {
        let cause = match &e {
            ApiError::Internal(c) => c.clone(),
            other => format!("{}", other.status()),
        };
        worker::console_error!("mail ({}) not sent: {cause}", m.kind);
    }
    Ok(())
}

/// Mail requests whose doorbell was lost (older than `stale_ms`), re-rung;
/// at most `limit` per sweep.
///
/// # Errors
/// D1 errors.
pub async fn sweep(app: &App, stale_ms: u64, limit: u64) -> ApiResult<()> {
    let db = app.control_db()?;
    for s in store::mail::stale(&db, app.now_ms.saturating_sub(stale_ms), limit).await? {
        ring(app, s.id).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The source of the function `name` in `file` (from its signature to
    /// the first line that closes it).
    fn body<'a>(file: &'a str, name: &str) -> &'a str {
        let start = file
            .find(&format!("fn {name}("))
            .unwrap_or_else(|| panic!("fn {name} not found"));
        let len = file[start..]
            .find("\n}\n")
            .unwrap_or_else(|| panic!("fn {name} has no end"));
        &file[start..start + len]
    }

    /// What answers whether an address has an account, or acts on it.
    const ACCOUNT_WORK: [&str; 6] = [
        "user_by_email",
        "issue_token",
        "send_mail",
        "mail::send",
        "is_verified",
        "if let Some(user)",
    ];

    #[test]
    fn the_mail_routes_do_the_same_work_for_every_address() {
        let routes = include_str!("../routes/auth.rs");
        let this = include_str!("mailer.rs");
        let accounts = include_str!("accounts.rs");
        for (file, name) in [
            (routes, "resend_verification"),
            (routes, "request_password_reset"),
            (accounts, "request_mail"),
            (this, "request"),
            (this, "ring"),
        ] {
            let source = body(file, name);
            for word in ACCOUNT_WORK {
                assert!(
                    !source.contains(word),
                    "{name} does `{word}`: the HTTP path must not depend on the account"
                );
            }
        }
        for name in ["resend_verification", "request_password_reset"] {
            assert!(
                body(routes, name).contains("request_mail(app, MailKind::"),
                "{name} goes through request_mail"
            );
        }
    }
}
