//! Idempotency-Key on the emit routes: a request is run at most once per
//! key, and a retry with the same body replays the stored answer.

use bvs_core::hash::Hash32;
use bvs_core::types::IdempotencyKey;
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::store::idempotency as idem_store;

/// How long an Idempotency-Key is remembered after its first use.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;

/// The request's `Idempotency-Key`, if any.
///
/// # Errors
/// 400 naming `Idempotency-Key` when it is malformed.
pub fn key(req: &Request) -> ApiResult<Option<IdempotencyKey>> {
    http::header(req, "idempotency-key")
        .map(|k: String| {
            IdempotencyKey::parse(&k).map_err(|mut e| {
                e.field = "Idempotency-Key".to_string();
                ApiError::from(e)
            })
        })
        .transpose()
}

/// Runs `f` at most once per Idempotency-Key: the same key with the same
/// body replays the stored answer; while the first is in flight → 202; the
/// same key with another body → 409. Failed requests release the key.
pub async fn once<F, Fut>(
    app: &App,
    ctx: &KeyContext,
    key: Option<IdempotencyKey>,
    route: &str,
    body: &[u8],
    f: F,
) -> ApiResult<Response>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ApiResult<(u16, String)>>,
{
    let Some(key) = key else {
        let (status, text) = f().await?;
        return http::raw_json(status, text);
    };
    let mut hashed = route.as_bytes().to_vec();
    hashed.push(b'\n');
    hashed.extend_from_slice(body);
    let request_hash = Hash32::digest(&hashed).to_hex();
    let db = app.control_db()?;
    let scope = idem_store::Scope {
        tenant_id: &ctx.tenant_id,
        env: ctx.env.as_str(),
        key: key.as_str(),
    };
    let existing = idem_store::claim(
        &db,
        &scope,
        &request_hash,
        app.now_ms,
        app.now_ms + IDEMPOTENCY_WINDOW_MS,
    )
    .await?;
    if let Some(record) = existing {
        if record.request_hash != request_hash {
            return Err(ApiError::coded(
                ErrorCode::IdempotencyKeyReused,
                "Idempotency-Key was already used with a different request body; use a new key for a new request",
            ));
        }
        return match (
            record.state.as_str(),
            record.response_status,
            record.response_body,
        ) {
            ("done", Some(status), Some(text)) => {
                let resp = http::raw_json(status, text)?;
                resp.headers().set("idempotent-replayed", "true")?;
                Ok(resp)
            }
            _ => http::balance(
                202,
                &json!({
                    "idempotencyKey": key.as_str(),
                    "status": "processing",
                    "message": "A request with this Idempotency-Key is still being processed; retry shortly to get its result",
                }),
            ),
        };
    }
    match f().await {
        Ok((status, text)) => {
            idem_store::complete(&db, &scope, status, &text).await?;
            http::raw_json(status, text)
        }
        Err(e) => {
            if let Err(release) = idem_store::abandon(&db, &scope).await {
                worker::console_error!("idempotency key not released: {release:?}");
            }
            Err(e)
        }
    }
}
