//! Who is calling: dashboard users (JWT), API keys (X-Api-Key), operators
//! (ADMIN_TOKEN). Every secret comparison is constant-time (`secret`).

pub mod accounts;
pub mod api_key;
pub mod contracts;
pub mod device;
pub mod jwt;
pub mod keys;
pub mod limit;
pub mod mailer;
pub mod password;

use bvs_core::hash::Hash32;
use bvs_core::types::{ApiKey, Env};
use worker::Request;

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ContractId, KeyId, TenantId};
use crate::plan::Plan;
use crate::secret::{self, SecretDigest};
use crate::store;
use crate::store::accounts::UserRow;
use crate::store::contracts::ContractStatus;

/// A request authenticated by an API key.
#[derive(Debug, Clone)]
pub struct KeyContext {
    pub tenant_id: TenantId,
    /// The key's environment: the only one this request may touch.
    pub env: Env,
    pub key_id: KeyId,
    /// The tenant's plan.
    pub plan: Plan,
    /// The shard the tenant's environment is placed on.
    pub shard: u32,
    /// The tenant's (active) contract for the key's environment, read with
    /// the key.
    pub contract_id: ContractId,
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
    pub id: ContractId,
    pub tenant_id: TenantId,
    pub env: Env,
    pub status: ContractStatus,
}

pub(crate) const INVALID_KEY: &str =
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
    Ok(authenticate(app, req, &[], None).await?.ctx)
}

/// An emit's key: its context, whether its read indexed the emit's proof
/// root, and the contract `X-Credit-Pool-Id` names (its 404 is raised
/// where the route raises it: after the body's errors).
pub struct EmitKey {
    pub ctx: KeyContext,
    pub root_indexed: bool,
    pub contract: ApiResult<Contract>,
}

/// [`authenticate_api_key`] for an emit, given what it needs: the
/// `X-Credit-Pool-Id` (`pool_id`) and the emit's proof roots (`roots`,
/// when its body holds deltas: the items root and each ledger's). In the
/// same control-database call as the key's read (a batch: issue 16; a
/// batch emit's too, issue 42) it records in the proof-root index that the
/// key's shard issues `roots` (`store::roots`, INSERT OR IGNORE, only for a
/// key that is active with its secret and an active environment) when the
/// isolate holds a live lease of the key's rate limit
/// (`limit::around_read`), so the request is almost surely not refused
/// after it: [`EmitKey::root_indexed`] says whether it did. Without a
/// lease (a key's first request in an isolate, a sandbox key, a key at
/// its limit) or without roots, nothing is indexed here and the write
/// indexes the roots alongside itself (`ledger::roots::with_roots_index`).
///
/// # Errors
/// As [`authenticate_api_key`].
pub async fn authenticate_emit(
    app: &App,
    req: &Request,
    roots: &[Hash32],
    pool_id: Option<&str>,
) -> ApiResult<EmitKey> {
    authenticate(app, req, roots, pool_id).await
}

/// The key's steps, each once and in order: its header; its read under
/// its rate limit (the lease, the read, what the row allows, the token);
/// its `lastUsedAt` after the response.
async fn authenticate(
    app: &App,
    req: &Request,
    roots: &[Hash32],
    pool_id: Option<&str>,
) -> ApiResult<EmitKey> {
    let key = presented_key(req)?;
    let key_id = KeyId::from_text(key.id());
    let presented = SecretDigest::of(key.secret());
    let db = app.control_db()?;
    let (db_ref, key_ref, id) = (&db, &key, &key_id);
    let (usable, root_indexed) = limit::around_read(app, &key_bucket(&key), move |leased| {
        async move {
            let index = leased && !roots.is_empty();
            let row = if index {
                store::keys::for_auth_indexing(db_ref, id, &presented, roots, app.now_ms).await?
            } else {
                store::keys::for_auth(db_ref, id).await?
            };
            let admitted = api_key::admit(row, key_ref, &presented, app.now_ms, pool_id)?;
            // From here on the request is the tenant's: the request log
            // keeps it, refusals included (a disabled key, a spent limit).
            app.set_key_caller(&admitted.tenant_id, admitted.caller);
            let usable = admitted.usable?;
            let rate = usable.plan.rate(key_ref.env());
            Ok(((usable, index), rate))
        }
    })
    .await?;
    if usable.stale {
        // Off the response path: lastUsedAt is kept to the minute.
        let (id, now) = (usable.ctx.key_id.clone(), app.now_ms);
        app.after_response(async move {
            if let Err(e) = store::keys::touch(&db, &id, now).await {
                worker::console_warn!("lastUsedAt of key {id} not written: {e:?}");
            }
        })
        .await;
    }
    app.set_tenant(&usable.ctx.tenant_id);
    Ok(EmitKey {
        ctx: usable.ctx,
        root_indexed,
        contract: usable.contract,
    })
}

/// The request's `X-Api-Key`, parsed.
fn presented_key(req: &Request) -> ApiResult<ApiKey> {
    let header = req
        .headers()
        .get("x-api-key")?
        .ok_or_else(|| ApiError::Unauthorized(format!("Missing API key. {INVALID_KEY}")))?;
    ApiKey::parse(header.trim()).map_err(|_| ApiError::Unauthorized(INVALID_KEY.into()))
}

/// The rate-limit bucket of an API key: the one its requests spend from.
fn key_bucket(key: &ApiKey) -> String {
    format!("key:{}", key.id())
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
pub async fn tenant_plan(app: &App, tenant_id: &TenantId) -> ApiResult<Plan> {
    store::accounts::tenant_plan(&app.control_db()?, tenant_id).await
}

/// A dashboard request authenticated by its JWT.
pub struct Session {
    pub user: UserRow,
}

impl Session {
    pub fn tenant_id(&self) -> &TenantId {
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
