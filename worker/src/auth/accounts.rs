//! Accounts: registration (tenant, owner and sandbox contract in one
//! batch), e-mail tokens, passwords and preferences. The dashboard's auth
//! routes parse a request, call these, and respond.

use bvs_core::types::{Email, Env, Password};

use super::limit;
use super::mailer::{self, MailKind, EMAIL_TOKEN_CHARS, VERIFY_TOKEN_LIFETIME_MS};
use super::password;
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ContractId, TenantId, UserId};
use crate::secret::{self, SecretDigest};
use crate::store::accounts::{self as store, NewUser, UserRow, PURPOSE_VERIFY_EMAIL};
use crate::store::contracts;
use crate::{ids, ledger, mail};

/// A registration's fields, parsed.
pub struct Registration {
    pub email: Email,
    pub password: Password,
    pub first_name: String,
    pub last_name: String,
    pub company: String,
}

/// The failed-login bucket of an address (login and change-password).
/// The failed-login bucket of an e-mail address from one client network
/// (`limit::client_network`): a stranger's failures spend only the
/// stranger's network's bucket, never the owner's (issue 25).
pub fn login_bucket(email: &str, network: &str) -> String {
    format!(
        "login:{}",
        secret::sha256_hex(&format!("{email}\n{network}"))
    )
}

fn mail_bucket(email: &str) -> String {
    format!("mail:{}", secret::sha256_hex(email))
}

/// A fresh e-mail token and its stored hash.
fn new_email_token() -> ApiResult<(String, SecretDigest)> {
    let token = ids::random_token(EMAIL_TOKEN_CHARS)?;
    let hash = SecretDigest::of(&token);
    Ok((token, hash))
}

/// Sends a mail; a failing transport is logged (without the body) and does
/// not undo the request: the user can ask for another mail.
async fn send_mail(app: &App, m: &mail::Mail) {
    if let Err(e) = mail::send(app, m).await {
        let cause = match &e {
            ApiError::Internal(c) => c.clone(),
            other => format!("{}", other.status()),
        };
        worker::console_error!("mail ({}) not sent: {cause}", m.kind);
    }
}

fn email_taken() -> ApiError {
    ApiError::Conflict(
        "An account with this e-mail already exists: log in, or reset the password".into(),
    )
}

/// Creates the tenant, its owner (unverified) and its active sandbox
/// contract atomically, then mails the verification link. Returns the
/// user's id.
///
/// # Errors
/// 409 when the e-mail has an account; D1 errors.
pub async fn create(app: &App, r: &Registration) -> ApiResult<UserId> {
    let email = r.email.as_str();
    let db = app.control_db()?;
    if store::user_by_email(&db, email).await?.is_some() {
        return Err(email_taken());
    }
    let password_hash = password::hash(r.password.expose()).await?;
    let tenant_id = TenantId::new()?;
    let user_id = UserId::new()?;
    let contract_id = ContractId::new()?;
    let (token, token_hash) = new_email_token()?;
    let now = app.now_ms;

    // The sandbox environment is shared infrastructure: place the tenant on
    // a shard and make sure that shard's log exists before the tenant's
    // contract says `active`.
    let shard = ledger::shard::place(app, Env::Sandbox).await?;
    ledger::ensure_log(app, ledger::LogId::new(Env::Sandbox, shard)).await?;

    let user = NewUser {
        id: &user_id,
        tenant_id: &tenant_id,
        email,
        first_name: &r.first_name,
        last_name: &r.last_name,
        password_hash: &password_hash,
    };
    let mut statements = vec![
        store::insert_tenant(&tenant_id, &r.company, now)?,
        store::insert_user(&user, now)?,
        contracts::insert_active(&contract_id, &tenant_id, Env::Sandbox, shard, now)?,
    ];
    let expires = now + VERIFY_TOKEN_LIFETIME_MS;
    statements.extend(store::issue_token(
        &token_hash,
        &user_id,
        PURPOSE_VERIFY_EMAIL,
        expires,
        now,
    )?);
    if let Err(e) = crate::store::batch(&db, statements).await {
        // Two registrations of one e-mail at once: the UNIQUE index decides.
        if store::user_by_email(&db, email).await?.is_some() {
            return Err(email_taken());
        }
        return Err(e);
    }
    let _ = limit::try_take(app, &mail_bucket(email), limit::MAILS_PER_ADDRESS).await;
    send_mail(app, &mail::verification(app, email, &r.first_name, &token)).await;
    Ok(user_id)
}

/// The user of an address, if any.
///
/// # Errors
/// D1 errors.
pub async fn user_by_email(app: &App, email: &Email) -> ApiResult<Option<UserRow>> {
    store::user_by_email(&app.control_db()?, email.as_str()).await
}

/// Spends an e-mail verification token: `false` when it is invalid,
/// expired or already used.
///
/// # Errors
/// D1 errors.
pub async fn verify_email(app: &App, token: &str) -> ApiResult<bool> {
    store::spend_verify_token(&app.control_db()?, &SecretDigest::of(token), app.now_ms).await
}

/// The one path of both mail routes. Over the per-address mail limit the
/// request is dropped silently: a 429 here would tell nothing about the
/// account, but the mail limit is per address, known or not.
///
/// # Errors
/// Limiter and D1 errors.
pub async fn request_mail(app: &App, kind: MailKind, email: &Email) -> ApiResult<()> {
    if limit::try_take(app, &mail_bucket(email.as_str()), limit::MAILS_PER_ADDRESS).await? {
        mailer::request(app, kind, email).await?;
    }
    Ok(())
}

/// Sets a new password with a reset token: `false` when the token is
/// invalid, expired or already used (checked before the password is
/// hashed: a made-up token must not cost a PBKDF2 run).
///
/// # Errors
/// D1 errors.
pub async fn reset_password(app: &App, token: &str, new_password: &Password) -> ApiResult<bool> {
    let db = app.control_db()?;
    let token_hash = SecretDigest::of(token);
    if !store::reset_token_is_live(&db, &token_hash, app.now_ms).await? {
        return Ok(false);
    }
    let hash = password::hash(new_password.expose()).await?;
    store::spend_reset_token(&db, &token_hash, &hash, app.now_ms).await
}

/// Replaces a user's password (every session is signed out).
///
/// # Errors
/// D1 errors.
pub async fn set_password(app: &App, user_id: &UserId, new_password: &Password) -> ApiResult<()> {
    let hash = password::hash(new_password.expose()).await?;
    store::set_password(&app.control_db()?, user_id, &hash, app.now_ms).await
}

/// Ends every session of the user (logout): every JWT issued so far is
/// refused from now on.
///
/// # Errors
/// D1 errors.
pub async fn end_sessions(app: &App, user_id: &UserId) -> ApiResult<()> {
    store::end_sessions(&app.control_db()?, user_id, app.now_ms).await
}

/// # Errors
/// D1 errors.
pub async fn set_preferred_environment(app: &App, user_id: &UserId, env: Env) -> ApiResult<()> {
    store::set_preferred_environment(&app.control_db()?, user_id, env, app.now_ms).await
}
