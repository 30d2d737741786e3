//! Who is calling: dashboard users (JWT), API keys (X-Api-Key), operators
//! (ADMIN_TOKEN). Every secret comparison is constant-time (`secret`).

pub mod accounts;
pub mod contracts;
pub mod jwt;
pub mod keys;
pub mod limit;
pub mod mailer;
pub mod password;

use bvs_core::types::{ApiKey, Env};
use worker::Request;

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::plan::Plan;
use crate::secret;
use crate::store;
use crate::store::accounts::UserRow;
use crate::store::contracts::ContractStatus;

#[expect(
    dead_code,
    reason = "the key id is part of the context the balance routes receive; kept for audit logging"
)]
/// A request authenticated by an API key.
#[derive(Debug, Clone)]
pub struct KeyContext {
    pub tenant_id: String,
    /// The key's environment: the only one this request may touch.
    pub env: Env,
    pub key_id: String,
    /// The tenant's plan.
    pub plan: Plan,
    /// The shard the tenant's environment is placed on.
    pub shard: u32,
    /// The tenant's (active) contract for the key's environment, read with
    /// the key.
    pub contract_id: String,
}

impl KeyContext {
    /// The shard (database and log) this request reads and writes.
    pub fn log(&self) -> crate::ledger::LogId {
        crate::ledger::LogId::new(self.env, self.shard)
    }
}

#[expect(
    dead_code,
    reason = "a resolved contract carries its full identity; routes read only the id today"
)]
/// A tenant's environment (the spec's "contract").
#[derive(Debug, Clone)]
pub struct Contract {
    pub id: String,
    pub tenant_id: String,
    pub env: Env,
    pub status: ContractStatus,
}

const INVALID_KEY: &str =
    "Invalid API key: send X-Api-Key: pk_test_<id>.<secret> or pk_live_<id>.<secret>";

/// Authenticates `X-Api-Key`, checks the environment and spends one token
/// of the key's rate limit. Updates the key's lastUsedAt.
///
/// # Errors
/// 401 when the key is missing, malformed, unknown, disabled or deleted;
/// 403 when the key's environment is not active for the tenant; 402 for a
/// production key of a tenant whose plan no longer includes Production;
/// 429 with Retry-After when the key's rate limit is spent.
pub async fn authenticate_api_key(app: &App, req: &Request) -> ApiResult<KeyContext> {
    Ok(authenticate(app, req, None).await?.0)
}

/// Like [`authenticate_api_key`], and, in the same control-database call
/// (a batch with the key's read: issue 16), records in the proof-root
/// index that the key's shard issues `root` (`store::roots`, INSERT OR
/// IGNORE, only for a key that is active with its secret and an active
/// environment) when the isolate holds a live lease of the key's rate
/// limit, so the request is almost surely not refused after it: the
/// second value says whether it did. Without a lease (a key's first
/// request in an isolate, a sandbox key, a key at its limit) nothing is
/// indexed here and the caller indexes the root alongside its write
/// (`ledger::submit::with_root_index`).
///
/// # Errors
/// As [`authenticate_api_key`].
pub async fn authenticate_api_key_indexing(
    app: &App,
    req: &Request,
    root: &str,
) -> ApiResult<(KeyContext, bool)> {
    authenticate(app, req, Some(root)).await
}

async fn authenticate(
    app: &App,
    req: &Request,
    root: Option<&str>,
) -> ApiResult<(KeyContext, bool)> {
    let header = req
        .headers()
        .get("x-api-key")?
        .ok_or_else(|| ApiError::Unauthorized(format!("Missing API key. {INVALID_KEY}")))?;
    let key =
        ApiKey::parse(header.trim()).map_err(|_| ApiError::Unauthorized(INVALID_KEY.into()))?;
    let db = app.control_db()?;
    let presented = secret::sha256_hex(key.secret());
    let bucket = key_bucket(&key);
    let index = root.filter(|_| limit::holds_lease(&bucket, app.now_ms));
    let row = match index {
        None => store::keys::for_auth(&db, key.id()).await?,
        Some(root) => {
            store::keys::for_auth_indexing(&db, key.id(), &presented, root, app.now_ms).await?
        }
    }
    .ok_or_else(|| ApiError::Unauthorized(INVALID_KEY.into()))?;
    // The secret is checked before anything about the key is revealed.
    if !secret::ct_eq(presented.as_bytes(), row.secret_hash.as_bytes()) || row.env != key.env() {
        return Err(ApiError::Unauthorized(INVALID_KEY.into()));
    }
    // From here on the request is the tenant's: the request log keeps it,
    // refusals included (a disabled key, a spent rate limit).
    app.set_key_caller(
        &row.tenant_id,
        crate::app::KeyCaller {
            key_id: row.id.clone(),
            env: key.env(),
            shard: row.shard.unwrap_or(0),
            plan: row.plan.as_str(),
        },
    );
    let env = key.env();
    refuse_unusable(&row, env)?;
    let plan = row.plan;
    limit::take_reported(app, &bucket, plan.rate(env)).await?;
    touch_if_stale(app, db, &row).await;
    app.set_tenant(&row.tenant_id);
    let ctx = KeyContext {
        tenant_id: row.tenant_id,
        env,
        key_id: row.id,
        plan,
        shard: row.shard.unwrap_or(0),
        contract_id: row.contract_id.unwrap_or_default(),
    };
    Ok((ctx, index.is_some()))
}

/// Refuses a key whose secret checked out but that may not be used: deleted,
/// disabled, its environment not active, or Production on a plan without it.
fn refuse_unusable(row: &store::keys::AuthRow, env: Env) -> ApiResult<()> {
    if row.deleted_at.is_some() {
        return Err(ApiError::coded(
            ErrorCode::ApiKeyDeleted,
            "API key deleted: create a new key in the dashboard",
        ));
    }
    if row.active == 0 {
        return Err(ApiError::coded(
            ErrorCode::ApiKeyDisabled,
            "API key disabled: enable it again with POST /dashboard/api-keys/:id/toggle or use another key",
        ));
    }
    if row.contract_status != Some(ContractStatus::Active) {
        return Err(ApiError::coded(
            ErrorCode::EnvironmentNotProvisioned,
            format!(
            "Environment not provisioned: {} ({}) is not active for this tenant; provision it with \
             POST /dashboard/contracts/provision",
            env_label(env),
            env.contract_name()
        ),
        ));
    }
    if env == Env::Production && !row.plan.allows_production() {
        // A tenant moved back to Free keeps its production contract and
        // keys, but they stop working until the plan is paid again.
        return Err(ApiError::PaymentRequired(format!(
            "Plan limit exceeded: no active subscription for Production; the {} plan is Sandbox \
             only, Production needs Pilot or above",
            row.plan.label()
        )));
    }
    Ok(())
}

/// Writes the key's `lastUsedAt` after the response when it is a minute
/// (`LAST_USED_RESOLUTION_MS`) or more old.
async fn touch_if_stale(app: &App, db: worker::D1Database, row: &store::keys::AuthRow) {
    let stale = row
        .last_used_at
        .is_none_or(|t| app.now_ms.saturating_sub(t) >= store::keys::LAST_USED_RESOLUTION_MS);
    if stale {
        // Off the response path: lastUsedAt is kept to the minute.
        let (id, now) = (row.id.clone(), app.now_ms);
        app.after_response(async move {
            if let Err(e) = store::keys::touch(&db, &id, now).await {
                worker::console_warn!("lastUsedAt of key {id} not written: {e:?}");
            }
        })
        .await;
    }
}

/// Whether the isolate holds a live lease of the rate limit of the
/// request's API key (`limit::holds_lease`; the key is not checked, nothing
/// is spent): the key was used here within the last second.
pub fn holds_key_lease(app: &App, req: &Request) -> bool {
    let header = req.headers().get("x-api-key").ok().flatten();
    header
        .and_then(|h| ApiKey::parse(h.trim()).ok())
        .is_some_and(|key| limit::holds_lease(&key_bucket(&key), app.now_ms))
}

/// The rate-limit bucket of an API key: the one its requests spend from
/// and the one [`holds_key_lease`] looks at.
fn key_bucket(key: &ApiKey) -> String {
    format!("key:{}", key.id())
}

/// The contract a balance write targets, from what authentication read
/// (no round trip): `X-Credit-Pool-Id` must name the tenant's contract for
/// the key's environment (a tenant has one per environment), which is
/// active, or the header is absent.
///
/// # Errors
/// 404 for any other contract id (unknown, another tenant's, or of the
/// other environment).
pub fn key_contract(ctx: &KeyContext, pool_id: Option<&str>) -> ApiResult<Contract> {
    if let Some(id) = pool_id.map(str::trim).filter(|p| !p.is_empty()) {
        if id != ctx.contract_id {
            return Err(ApiError::NotFound(format!(
                "No contract {id} in {} for this API key (X-Credit-Pool-Id)",
                env_label(ctx.env)
            )));
        }
    }
    Ok(Contract {
        id: ctx.contract_id.clone(),
        tenant_id: ctx.tenant_id.clone(),
        env: ctx.env,
        status: ContractStatus::Active,
    })
}

pub fn env_label(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "Sandbox",
        Env::Production => "Production",
    }
}

/// The tenant's plan, for a per-plan limit (dashboard routes, agreement
/// statements).
///
/// # Errors
/// D1 errors; a tenant that vanished is an internal error.
pub async fn tenant_plan(app: &App, tenant_id: &str) -> ApiResult<Plan> {
    store::accounts::tenant_plan(&app.control_db()?, tenant_id).await
}

/// A dashboard request authenticated by its JWT.
pub struct Session {
    pub user: UserRow,
}

impl Session {
    pub fn tenant_id(&self) -> &str {
        &self.user.tenant_id
    }

    /// Unverified accounts may log in and look, not create.
    ///
    /// # Errors
    /// 403 telling the user to verify their e-mail.
    pub fn require_verified(&self) -> ApiResult<()> {
        if self.user.is_verified() {
            Ok(())
        } else {
            Err(ApiError::coded(
                ErrorCode::EmailNotVerified,
                "Verify your e-mail address first: open the link we sent you, or ask for a new one with \
                 POST /dashboard/auth/resend-verification-email",
            ))
        }
    }
}

fn jwt_key(app: &App) -> ApiResult<Vec<u8>> {
    Ok(app.secret("JWT_SECRET")?.into_bytes())
}

/// Issues a dashboard JWT for `user`.
///
/// # Errors
/// Internal error if JWT_SECRET is missing.
pub fn issue_jwt(app: &App, user: &UserRow) -> ApiResult<String> {
    let now_secs = app.now_ms / 1000;
    jwt::sign(
        &jwt_key(app)?,
        &jwt::Claims {
            sub: user.id.clone(),
            tid: user.tenant_id.clone(),
            ver: user.session_version,
            iat: now_secs,
            exp: now_secs + jwt::JWT_LIFETIME_SECS,
        },
    )
}

/// Authenticates `Authorization: Bearer <JWT>`.
///
/// # Errors
/// 401 when the token is missing, malformed, tampered, signed with another
/// key or algorithm, expired, or revoked by a password change.
pub async fn session(app: &App, req: &Request) -> ApiResult<Session> {
    let token = bearer(req)?.ok_or_else(|| {
        ApiError::coded(
            ErrorCode::AuthenticationRequired,
            "Missing JWT: send Authorization: Bearer <token from /dashboard/auth/login>",
        )
    })?;
    let claims =
        jwt::verify(&jwt_key(app)?, &token, app.now_ms / 1000).map_err(jwt::JwtError::into_api)?;
    let user = store::accounts::user_by_id(&app.control_db()?, &claims.sub)
        .await?
        .filter(|u| u.tenant_id == claims.tid && u.session_version == claims.ver)
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::JwtRevoked,
                "JWT revoked: the password changed; log in again",
            )
        })?;
    app.set_tenant(&user.tenant_id);
    Ok(Session { user })
}

/// The token of an `Authorization: Bearer` header, if any.
///
/// # Errors
/// Internal error if headers cannot be read.
pub fn bearer(req: &Request) -> ApiResult<Option<String>> {
    Ok(req.headers().get("authorization")?.and_then(|h| {
        let h = h.trim();
        let (scheme, token) = h.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim().to_string())
            .filter(|t| !t.is_empty())
    }))
}

/// Checks the operator's `Authorization: Bearer <ADMIN_TOKEN>`.
///
/// # Errors
/// 401 when missing or wrong.
pub fn require_admin(app: &App, req: &Request) -> ApiResult<()> {
    let expected = app.secret("ADMIN_TOKEN")?;
    match bearer(req)? {
        Some(token) if !expected.is_empty() && secret::ct_eq_secret(&token, &expected) => Ok(()),
        _ => Err(ApiError::coded(
            ErrorCode::AuthenticationRequired,
            "Operator authentication required: Authorization: Bearer <ADMIN_TOKEN>",
        )),
    }
}
