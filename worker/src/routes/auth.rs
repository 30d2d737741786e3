//! `/dashboard/auth/*`: accounts, e-mail verification, passwords, profile.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{Email, Env, Password};
use serde::Serialize;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::accounts::{self, login_bucket, Registration};
use crate::auth::Session;
use crate::auth::{self, device, limit, password};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::fields::Fields;
use crate::http;
use crate::ids::{TenantId, UserId};

/// Names (first, last, company), in characters. // spec: silent
pub const NAME_CHARS_MAX: usize = 100;
use crate::auth::mailer::MailKind;
/// Longest token we look at.
const EMAIL_TOKEN_CHARS_MAX: usize = 128;

const BAD_LOGIN: &str = "Invalid e-mail or password";
const RESET_REPLY: &str =
    "If an account exists for this e-mail, a password reset link has been sent to it";
const RESEND_REPLY: &str =
    "If an unverified account exists for this e-mail, a new verification link has been sent to it";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RegisteredView {
    id: UserId,
    email: String,
    name: String,
    is_verified: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoginView {
    id: UserId,
    email: String,
    name: String,
    role: &'static str,
    is_verified: bool,
    tenant_id: TenantId,
    token: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProfileView {
    id: UserId,
    email: String,
    first_name: String,
    last_name: String,
    tenant_id: TenantId,
    email_verified: bool,
    role: &'static str,
    preferred_environment: String,
    created_at: String,
}

/// `POST /dashboard/auth/register`. Each registration creates a tenant,
/// a user, a contract, a token and a mail and runs the password KDF, so
/// one client network may register only a few accounts an hour
/// (`limit::registrations_rate`; spent before any of that work).
pub async fn register(app: &App, mut req: Request) -> ApiResult<Response> {
    let r = registration(Fields::read(&mut req).await?)?;
    let address = http::header(&req, "cf-connecting-ip");
    if let Some(rate) = limit::registrations_rate(app, address.as_deref()) {
        let network = limit::client_network(address.as_deref());
        limit::take(app, &format!("register-{network}"), rate).await?;
    }
    let user_id = accounts::create(app, &r).await?;
    let view = RegisteredView {
        id: user_id,
        email: r.email.into_string(),
        name: format!("{} {}", r.first_name, r.last_name),
        is_verified: false,
    };
    http::dashboard(
        201,
        &view,
        Some("Account created: check your e-mail and open the verification link"),
    )
}

/// A registration's fields, every problem named at once.
fn registration(mut f: Fields) -> ApiResult<Registration> {
    let email_text = f.required("email");
    let email = if email_text.is_empty() {
        None
    } else {
        f.check(Email::parse(&email_text))
    };
    let password_text = f.required("password");
    let password = if password_text.is_empty() {
        None
    } else {
        f.check(Password::parse("password", &password_text))
    };
    let first_name = f.text("firstName", NAME_CHARS_MAX);
    let last_name = f.text("lastName", NAME_CHARS_MAX);
    let company = f.text("companyName", NAME_CHARS_MAX);
    f.finish()?;
    let (Some(email), Some(password)) = (email, password) else {
        return Err(ApiError::internal("validated fields missing"));
    };
    Ok(Registration {
        email,
        password,
        first_name,
        last_name,
        company,
    })
}

/// `POST /dashboard/auth/login`.
pub async fn login(app: &App, mut req: Request) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let email_text = f.required("email");
    let password_text = f.required("password");
    f.finish()?;
    let Ok(email) = Email::parse(&email_text) else {
        return Err(ApiError::coded(ErrorCode::InvalidCredentials, BAD_LOGIN));
    };
    // Every attempt spends a token; success refills the bucket. Concurrent
    // guesses cannot slip past the limit.
    let client = limit::client_network(http::header(&req, "cf-connecting-ip").as_deref());
    let network = format!("login-{client}");
    limit::take(app, &network, limit::LOGIN_FAILURES_PER_NETWORK).await?;
    // A browser that logged in to this account before (its device cookie)
    // has an allowance of its own; every other client spends one per
    // e-mail and network and one the account's untrusted clients share
    // (issue 40: guesses spread over many networks meet a limit, and a
    // stranger's failures never lock the owner's known browser out).
    let device = device::presented(app, http::header(&req, "cookie").as_deref(), email.as_str())?;
    let bucket = match &device {
        Some(d) => device::bucket(email.as_str(), d),
        None => login_bucket(email.as_str(), &client),
    };
    limit::take(app, &bucket, limit::LOGIN_FAILURES).await?;
    let untrusted = device::untrusted_bucket(email.as_str());
    if device.is_none() {
        limit::take(app, &untrusted, device::UNTRUSTED_LOGIN_FAILURES).await?;
    }
    let user = accounts::user_by_email(app, &email).await?;
    let ok = match &user {
        Some(u) => password::verify(&password_text, &u.password_hash).await?,
        None => password::verify_dummy(&password_text).await?,
    };
    let (true, Some(user)) = (ok, user) else {
        return Err(ApiError::coded(ErrorCode::InvalidCredentials, BAD_LOGIN));
    };
    limit::reset(app, &bucket, limit::LOGIN_FAILURES).await?;
    limit::refund(app, &network, limit::LOGIN_FAILURES_PER_NETWORK).await?;
    if device.is_none() {
        limit::refund(app, &untrusted, device::UNTRUSTED_LOGIN_FAILURES).await?;
    }
    let cookie = device::issue(app, email.as_str())?;
    let token = auth::issue_jwt(app, &user)?;
    let view = LoginView {
        name: user.name(),
        is_verified: user.is_verified(),
        id: user.id,
        email: user.email,
        role: user.role.as_str(),
        tenant_id: user.tenant_id,
        token,
    };
    let response = http::dashboard(200, &view, Some("Logged in"))?;
    response.headers().set("set-cookie", &cookie)?;
    Ok(response)
}

fn token_param(text: Option<String>, field: &str) -> ApiResult<String> {
    let t = text.unwrap_or_default();
    if t.is_empty()
        || t.len() > EMAIL_TOKEN_CHARS_MAX
        || !t.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return Err(ApiError::field(
            field,
            "is required: the token from the e-mail we sent",
        ));
    }
    Ok(t)
}

/// `GET /dashboard/auth/verify?token=`.
pub async fn verify(app: &App, req: Request) -> ApiResult<Response> {
    let token = token_param(http::query_param(&req, "token")?, "token")?;
    if !accounts::verify_email(app, &token).await? {
        return Err(ApiError::field(
            "token",
            "is invalid, expired or already used; ask for a new link with \
             POST /dashboard/auth/resend-verification-email",
        ));
    }
    http::dashboard(
        200,
        &serde_json::json!({ "verified": true }),
        Some("E-mail verified: your account is active"),
    )
}

async fn email_field(req: &mut Request) -> ApiResult<Email> {
    let mut f = Fields::read(req).await?;
    let text = f.required("email");
    let email = if text.is_empty() {
        None
    } else {
        f.check(Email::parse(&text))
    };
    f.finish()?;
    email.ok_or_else(|| ApiError::internal("validated e-mail missing"))
}

/// `POST /dashboard/auth/resend-verification-email`: the same reply, and
/// the same work, whether or not the address has an unverified account:
/// one mail request and a doorbell (`auth::mailer`); the queue consumer
/// looks the address up.
pub async fn resend_verification(app: &App, mut req: Request) -> ApiResult<Response> {
    let email = email_field(&mut req).await?;
    accounts::request_mail(app, MailKind::VerifyEmail, &email).await?;
    http::dashboard(200, &serde_json::json!({}), Some(RESEND_REPLY))
}

/// `POST /dashboard/auth/request-password-reset`: the same reply, and the
/// same work, whether or not the e-mail exists (see `resend_verification`).
pub async fn request_password_reset(app: &App, mut req: Request) -> ApiResult<Response> {
    let email = email_field(&mut req).await?;
    accounts::request_mail(app, MailKind::ResetPassword, &email).await?;
    http::dashboard(200, &serde_json::json!({}), Some(RESET_REPLY))
}

/// `POST /dashboard/auth/reset-password` `{token, newPassword}`.
pub async fn reset_password(app: &App, mut req: Request) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let token = f.required("token");
    let new_text = f.required("newPassword");
    let new_password = if new_text.is_empty() {
        None
    } else {
        f.check(Password::parse("newPassword", &new_text))
    };
    f.finish()?;
    let token = token_param(Some(token.to_string()), "token")?;
    let new_password =
        new_password.ok_or_else(|| ApiError::internal("validated password missing"))?;
    let bad_token = || {
        ApiError::field(
            "token",
            "is invalid, expired or already used; ask for a new one with \
             POST /dashboard/auth/request-password-reset",
        )
    };
    if !accounts::reset_password(app, &token, &new_password).await? {
        return Err(bad_token());
    }
    http::dashboard(
        200,
        &serde_json::json!({}),
        Some("Password reset: log in with the new password"),
    )
}

/// `POST /dashboard/auth/change-password` `{currentPassword, newPassword}`.
pub async fn change_password(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let current = f.required("currentPassword");
    let new_text = f.required("newPassword");
    let new_password = if new_text.is_empty() {
        None
    } else {
        f.check(Password::parse("newPassword", &new_text))
    };
    if !current.is_empty() && current == new_text {
        f.problem("newPassword", "must be different from the current password");
    }
    f.finish()?;
    let new_password =
        new_password.ok_or_else(|| ApiError::internal("validated password missing"))?;
    // Guessing the current password through this route counts against the
    // same failed-login bucket as /login.
    let client = limit::client_network(http::header(&req, "cf-connecting-ip").as_deref());
    let bucket = login_bucket(&session.user.email, &client);
    limit::take(app, &bucket, limit::LOGIN_FAILURES).await?;
    if !password::verify(&current, &session.user.password_hash).await? {
        return Err(ApiError::field("currentPassword", "is incorrect"));
    }
    limit::reset(app, &bucket, limit::LOGIN_FAILURES).await?;
    accounts::set_password(app, &session.user.id, &new_password).await?;
    http::dashboard(
        200,
        &serde_json::json!({}),
        Some("Password changed: every session was signed out; log in again with the new password"),
    )
}

/// `POST /dashboard/auth/logout`: ends every session of the account on the
/// server (every JWT issued so far is refused with 401 `jwt_revoked`), not
/// only the caller's copy of its token.
pub async fn logout(app: &App, session: Session) -> ApiResult<Response> {
    accounts::end_sessions(app, &session.user.id).await?;
    http::dashboard(
        200,
        &serde_json::json!({}),
        Some("Signed out: every session of this account has ended; log in again to continue"),
    )
}

/// `GET /dashboard/auth/profile`.
pub async fn profile(session: Session) -> ApiResult<Response> {
    let u = session.user;
    #[allow(clippy::cast_possible_wrap)]
    let created_at = format_iso_ms(u.created_at as i64);
    let view = ProfileView {
        email_verified: u.is_verified(),
        id: u.id,
        email: u.email,
        first_name: u.first_name,
        last_name: u.last_name,
        tenant_id: u.tenant_id,
        role: u.role.as_str(),
        preferred_environment: u.preferred_environment.as_str().to_owned(),
        created_at,
    };
    http::dashboard(200, &view, None)
}

/// `PATCH /dashboard/auth/preferences` `{preferredEnvironment}`.
pub async fn preferences(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let text = f.required("preferredEnvironment");
    let env = if text.is_empty() && !f.problems.is_empty() {
        None
    } else {
        f.check(Env::parse("preferredEnvironment", &text))
    };
    f.finish()?;
    let env = env.ok_or_else(|| ApiError::internal("validated environment missing"))?;
    accounts::set_preferred_environment(app, &session.user.id, env).await?;
    http::dashboard(
        200,
        &serde_json::json!({ "preferredEnvironment": env.as_str() }),
        Some("Preferences saved"),
    )
}
