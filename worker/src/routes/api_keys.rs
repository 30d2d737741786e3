//! `/dashboard/api-keys*`: create (the full key is shown once), list,
//! toggle, delete. Only the SHA-256 of a key's secret is stored.

use bvs_core::time::format_iso_ms;
use bvs_core::types::{ApiKey, Env};
use serde::Serialize;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::{self, secret};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::fields::Fields;
use crate::store::contracts::STATUS_ACTIVE;
use crate::store::keys::{self, KeyRow, NewKey};
use crate::{http, ids, store};

/// Characters of a key's `{id}` part (base62).
pub const KEY_ID_CHARS: usize = 16;
/// Characters of a key's `{secret}` part (base62, about 190 bits).
pub const KEY_SECRET_CHARS: usize = 32;
/// Longest key name, in characters. // spec: silent
pub const KEY_NAME_CHARS_MAX: usize = 100;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeyView {
    id: String,
    name: Option<String>,
    environment: &'static str,
    prefix: String,
    active: bool,
    created_at: String,
    last_used_at: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedKeyView {
    #[serde(flatten)]
    view: KeyView,
    /// The full key, returned only here.
    key: String,
}

#[allow(clippy::cast_possible_wrap)]
fn view(row: KeyRow) -> ApiResult<KeyView> {
    let env = row.env;
    Ok(KeyView {
        prefix: format!("pk_{}_{}", env.key_prefix(), row.id),
        id: row.id,
        name: row.name,
        environment: env.key_prefix(),
        active: row.active != 0,
        created_at: format_iso_ms(row.created_at as i64),
        last_used_at: row.last_used_at.map(|t| format_iso_ms(t as i64)),
    })
}

/// `POST /dashboard/api-keys` `{environment: test|live, name?}`.
pub async fn create(app: &App, mut req: Request) -> ApiResult<Response> {
    let session = auth::session(app, &req).await?;
    let mut f = Fields::read(&mut req).await?;
    let text = f.required("environment");
    let env = if f.problems.is_empty() {
        f.check(Env::parse_key_prefix("environment", &text))
    } else {
        None
    };
    let name_text = f.string("name", false);
    let name = name_text.as_deref().map(str::trim);
    if let Some(n) = name {
        if n.is_empty() || n.chars().count() > KEY_NAME_CHARS_MAX || n.chars().any(char::is_control)
        {
            f.problem("name", "must be 1 to 100 characters");
        }
    }
    f.finish()?;
    let env = env.ok_or_else(|| ApiError::internal("validated environment missing"))?;
    session.require_verified()?;
    let db = app.control_db()?;
    let tenant_id = session.tenant_id().to_string();
    let contract = store::contracts::for_env(&db, &tenant_id, env.as_str()).await?;
    if contract.as_ref().map(|c| c.status.as_str()) != Some(STATUS_ACTIVE) {
        return Err(ApiError::coded(ErrorCode::EnvironmentNotProvisioned, format!(
            "Environment not provisioned: {} keys need an active {} environment; provision {} first",
            env.key_prefix(),
            auth::env_label(env),
            env.contract_name()
        )));
    }
    let plan = auth::tenant_plan(app, &tenant_id).await?;
    let key = ApiKey::new(
        env,
        &ids::random_token(KEY_ID_CHARS)?,
        &ids::random_token(KEY_SECRET_CHARS)?,
    )
    .map_err(|e| ApiError::internal(format!("generated key is invalid: {e}")))?;
    // Keys a tenant may hold at once, per plan (deleted ones do not count);
    // counted inside the insert.
    let max = plan.api_keys_max();
    let inserted = keys::insert_within(
        &db,
        &NewKey {
            id: key.id(),
            tenant_id: &tenant_id,
            env: env.as_str(),
            name,
            secret_hash: &secret::sha256_hex(key.secret()),
            created_by: &session.user.id,
        },
        app.now_ms,
        max,
    )
    .await?;
    if !inserted {
        return Err(ApiError::coded(
            ErrorCode::PlanLimitExceeded,
            format!(
                "Plan limit exceeded: the {} plan holds at most {max} API keys; delete one first, \
                 or upgrade",
                plan.label()
            ),
        ));
    }
    let row = keys::of_tenant(&db, &tenant_id, key.id())
        .await?
        .ok_or_else(|| ApiError::internal("created key not found"))?;
    let created = CreatedKeyView {
        view: view(row)?,
        key: key.expose(),
    };
    http::dashboard(
        201,
        &created,
        Some("API key created: store it now, it is shown only once"),
    )
}

/// `GET /dashboard/api-keys`: never the secret.
pub async fn list(app: &App, req: Request) -> ApiResult<Response> {
    let session = auth::session(app, &req).await?;
    let rows = keys::list(&app.control_db()?, session.tenant_id()).await?;
    let views = rows.into_iter().map(view).collect::<ApiResult<Vec<_>>>()?;
    http::dashboard(200, &views, None)
}

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("No API key {id}"))
}

/// `POST /dashboard/api-keys/:id/toggle`.
pub async fn toggle(app: &App, req: Request, id: &str) -> ApiResult<Response> {
    let session = auth::session(app, &req).await?;
    let db = app.control_db()?;
    if keys::toggle(&db, session.tenant_id(), id).await? == 0 {
        return Err(not_found(id));
    }
    let row = keys::of_tenant(&db, session.tenant_id(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let active = row.active != 0;
    let message = if active {
        "API key enabled"
    } else {
        "API key disabled: requests with it now get 401"
    };
    http::dashboard(
        200,
        &serde_json::json!({ "id": row.id, "active": active, "message": message }),
        Some(message),
    )
}

/// `DELETE /dashboard/api-keys/:id`.
pub async fn delete(app: &App, req: Request, id: &str) -> ApiResult<Response> {
    let session = auth::session(app, &req).await?;
    if keys::delete(&app.control_db()?, session.tenant_id(), id, app.now_ms).await? == 0 {
        return Err(not_found(id));
    }
    http::dashboard(
        200,
        &serde_json::json!({ "id": id, "deleted": true }),
        Some("API key deleted"),
    )
}
