//! Tenants, users, single-use e-mail tokens and the dev
//! mail outbox.

use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{args, batch_changed_one, queries, row, statements, Query, Statements};
use crate::error::ApiResult;
use crate::ids::{TenantId, UserId};
use crate::plan::Plan;
use crate::secret::{PasswordHash, SecretDigest};
use crate::store::mail::MailKind;

// ---- tenants ----

const INSERT_TENANT: &str =
    "INSERT INTO tenants (id, name, plan, data_retention_days, created_at, updated_at) \
     VALUES (?1, ?2, 'free', NULL, ?3, ?3)";
const SELECT_TENANT: &str =
    "SELECT id, name, plan, data_retention_days, created_at FROM tenants WHERE id = ?1";
const UPDATE_TENANT_PLAN: &str = "UPDATE tenants SET plan = ?2, updated_at = ?3 WHERE id = ?1";
const UPDATE_TENANT_RETENTION: &str =
    "UPDATE tenants SET data_retention_days = ?2, updated_at = ?3 WHERE id = ?1";
const SELECT_TENANTS_WITH_RETENTION: &str = "SELECT id, data_retention_days FROM tenants \
     WHERE data_retention_days IS NOT NULL AND id > ?1 ORDER BY id LIMIT ?2";

row! {
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Deserialize)]
    pub struct TenantRow {
        id: TenantId, name: String,
        #[serde(deserialize_with = "crate::plan::stored")]
        plan: Plan,
        data_retention_days: Option<u32>, created_at: u64,
    }
}

#[derive(Debug, Deserialize)]
pub struct TenantRetentionRow {
    pub id: TenantId,
    pub data_retention_days: u32,
}

pub fn insert_tenant<'a>(id: &'a TenantId, name: &'a str, now_ms: u64) -> ApiResult<Query<'a>> {
    Ok(Query::new(INSERT_TENANT, args![id, name, now_ms]))
}

queries! {
    pub fn tenant(id: &TenantId) -> Option<TenantRow> = first(SELECT_TENANT);
    /// Returns the number of tenants changed (0: no such tenant).
    pub fn set_tenant_plan(id: &TenantId, plan: &str, now_ms: u64) -> u64 = run(UPDATE_TENANT_PLAN);
    pub fn set_tenant_retention(id: &TenantId, days: Option<u32>, now_ms: u64) -> u64
        = run(UPDATE_TENANT_RETENTION);
    /// Tenants with a retention window, in id order after `after_id` (use
    /// "" to start), at most `limit`: the retention job pages through these.
    pub fn tenants_with_retention(after_id: &str, limit: u32) -> Vec<TenantRetentionRow>
        = all(SELECT_TENANTS_WITH_RETENTION);
}

// ---- users ----

super::text_enum! {
    /// A user's `role`; every account is its tenant's owner (the spec
    /// names no other role), and `INSERT_USER` writes it.
    pub enum Role {
        Owner = "owner",
    }
}

const INSERT_USER: &str =
    "INSERT INTO users (id, tenant_id, email, first_name, last_name, role, password_hash, \
     email_verified, preferred_environment, session_version, created_at, updated_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, 'owner', ?6, 0, 'sandbox', 0, ?7, ?7)";
row! {
    $ select_users from "users";
    #[derive(Debug, Deserialize)]
    pub struct UserRow {
        id: UserId, tenant_id: TenantId, email: String, first_name: String, last_name: String,
        role: Role, password_hash: PasswordHash, email_verified: i64, preferred_environment: Env,
        session_version: i64, created_at: u64,
    }
}
const SELECT_USER_BY_EMAIL: &str = select_users!("WHERE email = ?1");
const SELECT_USER_BY_ID: &str = select_users!("WHERE id = ?1");
const UPDATE_USER_PREFERENCE: &str =
    "UPDATE users SET preferred_environment = ?2, updated_at = ?3 WHERE id = ?1";
const UPDATE_USER_PASSWORD: &str = "UPDATE users SET password_hash = ?2, \
     session_version = session_version + 1, updated_at = ?3 WHERE id = ?1";

impl UserRow {
    pub fn is_verified(&self) -> bool {
        self.email_verified != 0
    }

    pub fn name(&self) -> String {
        format!("{} {}", self.first_name, self.last_name)
    }
}

row! {
    pub struct NewUser<'a> {
        id: &'a UserId, tenant_id: &'a TenantId, email: &'a str, first_name: &'a str, last_name: &'a str,
        password_hash: &'a PasswordHash,
    }
}

statements! {
    pub fn insert_user<'a>(u: &'a NewUser<'a>, now_ms: u64) = INSERT_USER,
        [u.id, u.tenant_id, u.email, u.first_name, u.last_name, u.password_hash, now_ms];
}

queries! {
    pub fn user_by_email(email: &str) -> Option<UserRow> = first(SELECT_USER_BY_EMAIL);
    pub fn user_by_id(id: &UserId) -> Option<UserRow> = first(SELECT_USER_BY_ID);
    pub fn set_preferred_environment(user_id: &UserId, env: Env, now_ms: u64) -> ()
        = exec(UPDATE_USER_PREFERENCE);
}

/// Ends every session of a user (server-side logout): JWTs carry the
/// session version, and every one issued before no longer matches.
const BUMP_SESSION_VERSION: &str =
    "UPDATE users SET session_version = session_version + 1, updated_at = ?2 WHERE id = ?1";

queries! {
    /// Revokes every JWT issued to the user so far.
    pub fn end_sessions(user_id: &UserId, now_ms: u64) -> () = exec(BUMP_SESSION_VERSION);
}

/// Sets a new password hash, revokes every JWT issued before and retires
/// the user's open password-reset tokens, in one batch: a reset link sent
/// before the change cannot undo it.
///
/// # Errors
/// D1 errors.
pub async fn set_password(
    db: &D1Database,
    user_id: &UserId,
    password_hash: &PasswordHash,
    now_ms: u64,
) -> ApiResult<()> {
    let statements = vec![
        Query::new(UPDATE_USER_PASSWORD, args![user_id, password_hash, now_ms]),
        Query::new(
            EXPIRE_OPEN_TOKENS,
            args![user_id, PURPOSE_RESET_PASSWORD, now_ms],
        ),
    ];
    super::batch(db, statements).await?;
    Ok(())
}

// ---- single-use e-mail tokens ----

pub const PURPOSE_VERIFY_EMAIL: &str = "verify_email";
pub const PURPOSE_RESET_PASSWORD: &str = "reset_password";

const INSERT_TOKEN: &str =
    "INSERT INTO auth_tokens (token_hash, user_id, purpose, expires_at, used_at, created_at) \
     VALUES (?1, ?2, ?3, ?4, NULL, ?5)";
/// Earlier unused tokens of the same purpose die when a new one is sent.
const EXPIRE_OPEN_TOKENS: &str = "UPDATE auth_tokens SET used_at = ?3 \
     WHERE user_id = ?1 AND purpose = ?2 AND used_at IS NULL";
/// Spends a token: only one caller can ever see `changes = 1`.
const SPEND_TOKEN: &str = "UPDATE auth_tokens SET used_at = ?3 \
     WHERE token_hash = ?1 AND purpose = ?2 AND used_at IS NULL AND expires_at > ?3";
const VERIFY_USER_BY_SPENT_TOKEN: &str = "UPDATE users SET email_verified = 1, updated_at = ?2 \
     WHERE id = (SELECT user_id FROM auth_tokens WHERE token_hash = ?1 AND used_at = ?2)";
const RESET_PASSWORD_BY_SPENT_TOKEN: &str = "UPDATE users SET password_hash = ?3, \
     session_version = session_version + 1, updated_at = ?2 \
     WHERE id = (SELECT user_id FROM auth_tokens WHERE token_hash = ?1 AND used_at = ?2)";

const COUNT_LIVE_TOKEN: &str = "SELECT COUNT(*) AS n FROM auth_tokens \
     WHERE token_hash = ?1 AND purpose = ?2 AND used_at IS NULL AND expires_at > ?3";

/// Whether an unused, unexpired password-reset token has this hash: asked
/// before the new password is hashed, so a made-up token costs no KDF.
pub async fn reset_token_is_live(
    db: &D1Database,
    token_hash: &SecretDigest,
    now_ms: u64,
) -> ApiResult<bool> {
    let args = args![token_hash, PURPOSE_RESET_PASSWORD, now_ms];
    Ok(super::count(db, Query::new(COUNT_LIVE_TOKEN, args)).await? > 0)
}

/// Statements that retire open tokens of `purpose` and store a new one.
pub fn issue_token<'a>(
    token_hash: &'a SecretDigest,
    user_id: &'a UserId,
    purpose: &'a str,
    expires_at_ms: u64,
    now_ms: u64,
) -> Statements<'a> {
    let expire = args![user_id, purpose, now_ms];
    let insert = args![token_hash, user_id, purpose, expires_at_ms, now_ms];
    Ok(vec![
        Query::new(EXPIRE_OPEN_TOKENS, expire),
        Query::new(INSERT_TOKEN, insert),
    ])
}

/// Spends a verification token and marks its user verified, atomically.
/// `false` when the token is unknown, used or expired.
pub async fn spend_verify_token(
    db: &D1Database,
    token_hash: &SecretDigest,
    now_ms: u64,
) -> ApiResult<bool> {
    let args = args![token_hash, now_ms];
    let spend = args![token_hash, PURPOSE_VERIFY_EMAIL, now_ms];
    let statements = vec![
        Query::new(SPEND_TOKEN, spend),
        Query::new(VERIFY_USER_BY_SPENT_TOKEN, args),
    ];
    batch_changed_one(db, statements, 0).await
}

/// Spends a reset token and sets the new password hash, atomically.
/// `false` when the token is unknown, used or expired.
pub async fn spend_reset_token(
    db: &D1Database,
    token_hash: &SecretDigest,
    password_hash: &PasswordHash,
    now_ms: u64,
) -> ApiResult<bool> {
    let args = args![token_hash, now_ms, password_hash];
    let spend = args![token_hash, PURPOSE_RESET_PASSWORD, now_ms];
    let statements = vec![
        Query::new(SPEND_TOKEN, spend),
        Query::new(RESET_PASSWORD_BY_SPENT_TOKEN, args),
    ];
    batch_changed_one(db, statements, 0).await
}

// ---- dev mail outbox ----

const INSERT_MAIL: &str =
    "INSERT INTO mail_outbox (id, to_email, subject, kind, sealed, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
const SELECT_MAIL: &str =
    "SELECT id, to_email, subject, kind, sealed, created_at FROM mail_outbox \
     WHERE to_email = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2";

row! {
    #[derive(Debug, Deserialize)]
    pub struct MailRow {
        id: String, to_email: String, subject: String, kind: MailKind, sealed: String,
        created_at: u64,
    }
}

row! {
    pub struct NewMail<'a> {
        id: &'a str, to: &'a str, subject: &'a str, kind: MailKind, sealed: &'a str,
    }
}

queries! {
    pub fn insert_mail(m: &NewMail<'_>, now_ms: u64) -> ()
        = exec(INSERT_MAIL; m.id, m.to, m.subject, m.kind, m.sealed, now_ms);
    /// The newest `limit` mails to `to`, newest first.
    pub fn mails_to(to: &str, limit: u32) -> Vec<MailRow> = all(SELECT_MAIL);
}

/// A tenant's plan (what a public agreement write meters against).
///
/// # Errors
/// D1 errors; an internal error for a tenant that does not exist.
pub async fn tenant_plan(db: &D1Database, tenant_id: &TenantId) -> ApiResult<Plan> {
    tenant(db, tenant_id)
        .await?
        .map(|t| t.plan)
        .ok_or_else(|| crate::error::ApiError::internal("tenant not found"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_role_is_read_into_its_enum_and_written_as_the_same_word() {
        let role: Role = serde_json::from_str(r#""owner""#).unwrap();
        assert_eq!(role, Role::Owner);
        assert_eq!(role.as_str(), "owner");
        assert!(serde_json::from_str::<Role>(r#""admin""#).is_err());
        assert!(INSERT_USER.contains(&format!("'{}'", Role::Owner.as_str())));
    }
}
