//! `/dashboard/api-keys*`: create (the full key is shown once), list,
//! toggle, delete. Only the SHA-256 of a key's secret is stored.

use bvs_core::time::format_iso_ms;
use bvs_core::types::Env;
use serde::Serialize;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::keys::{self, KeyRow};
use crate::auth::Session;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ids::KeyId;
/// Longest key name, in characters. // spec: silent
pub const KEY_NAME_CHARS_MAX: usize = 100;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeyView {
    id: KeyId,
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
pub async fn create(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
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
    let (row, key) = keys::create(
        app,
        &keys::NewKeyRequest {
            tenant_id: session.tenant_id(),
            user_id: &session.user.id,
            env,
            name,
        },
    )
    .await?;
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
pub async fn list(app: &App, session: Session) -> ApiResult<Response> {
    let rows = keys::list(app, session.tenant_id()).await?;
    let views = rows.into_iter().map(view).collect::<ApiResult<Vec<_>>>()?;
    http::dashboard(200, &views, None)
}

/// `POST /dashboard/api-keys/:id/toggle`.
pub async fn toggle(app: &App, session: Session, id: &KeyId) -> ApiResult<Response> {
    let row = keys::toggle(app, session.tenant_id(), id).await?;
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
pub async fn delete(app: &App, session: Session, id: &KeyId) -> ApiResult<Response> {
    keys::delete(app, session.tenant_id(), id).await?;
    http::dashboard(
        200,
        &serde_json::json!({ "id": id, "deleted": true }),
        Some("API key deleted"),
    )
}
