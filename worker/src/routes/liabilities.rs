//! Liabilities statements (issue 31 part B, docs/liabilities.md): start
//! one for a closed period, read its progress, and a customer's proof.

use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId, Env, Period};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ids::StatementId;
use crate::liabilities::{self, StatementView};

/// Largest request body: two short fields.
const BODY_BYTES_MAX: usize = 4 * 1024;

/// `POST /api/v1/liabilities` `{environment, period}`: 202 with the
/// statement being built (a new one, or the one already being built for
/// the period). A new statement of a period whose last one is published
/// supersedes it once published.
pub async fn create(app: &App, mut req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, BODY_BYTES_MAX).await?;
    let mut f = Fields::from_bytes(&bytes)?;
    let environment = f.string("environment", true);
    let environment = f.parse("environment", environment, |t| Env::parse("environment", t));
    let period = f.string("period", true);
    let period = f.parse("period", period, Period::parse);
    let asset = f.string("asset", false);
    let asset = f
        .parse("asset", asset, |t| Asset::parse("asset", t))
        .unwrap_or_default();
    if let Some(env) = environment {
        if env != ctx.env {
            f.problem(
                "environment",
                format!(
                    "must be {}: the API key's environment (a key reaches only its own)",
                    ctx.env.as_str()
                ),
            );
        }
    }
    f.finish()?;
    let period = period.ok_or_else(|| ApiError::internal("validated period missing"))?;
    let (row, _created) =
        liabilities::request(app, &ctx.tenant_id, ctx.log(), (period, &asset)).await?;
    http::balance(202, &StatementView::of(&row))
}

/// `GET /api/v1/liabilities?period=YYYY-MM`: the period's statements,
/// newest first (the first published one is the one in force).
pub async fn list(app: &App, req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let period = http::query_period(&req)?
        .ok_or_else(|| ApiError::field("period", "is required (YYYY-MM)"))?;
    let asset = http::query_asset(&req)?;
    let rows = liabilities::of_period(app, &ctx.tenant_id, ctx.log(), (period, &asset)).await?;
    let views: Vec<StatementView> = rows.iter().map(StatementView::of).collect();
    http::balance(200, &serde_json::json!({ "statements": views }))
}

/// `GET /api/v1/liabilities/:id`: the statement's progress and, once
/// built, what it states.
pub async fn get(app: &App, ctx: KeyContext, id: &StatementId) -> ApiResult<Response> {
    let row = liabilities::status(app, &ctx.tenant_id, ctx.log(), id).await?;
    http::balance(200, &StatementView::of(&row))
}

/// `GET /api/v1/balance/customers/:customerId/liabilities-proof?period=YYYY-MM`:
/// the customer's proof document for the latest published statement of
/// the period (`data`), checked by `bvs-verify liabilities`.
pub async fn proof(
    app: &App,
    req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let period = http::query_period(&req)?
        .ok_or_else(|| ApiError::field("period", "is required (YYYY-MM)"))?;
    let asset = http::query_asset(&req)?;
    let doc = liabilities::proof(
        app,
        &ctx.tenant_id,
        ctx.log(),
        &customer_id,
        (period, &asset),
    )
    .await?;
    http::raw_json(
        200,
        format!("{{\"success\":true,\"statusCode\":200,\"data\":{doc}}}"),
    )
}

/// The `:merkleRoot` of `GET /api/v1/agreement/liabilities-proof/:merkleRoot`,
/// read at the route's edge.
pub fn merkle_root_param(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|_| {
        ApiError::field(
            "merkleRoot",
            "must be 64 hex characters (a committed checkpoint's merkleRoot)",
        )
    })
}

/// `GET /api/v1/agreement/liabilities-proof/:merkleRoot` (public, like
/// `/api/v1/verify/:merkleRoot`): the proof document of the customer of
/// that committed checkpoint, for the checkpoint's period (the same
/// document as the vendor's route). The customer holds the root (its
/// receipt's `itemsRoot`, the agreement page's link); no vendor key.
pub async fn customer_proof(app: &App, root: Hash32) -> ApiResult<Response> {
    let doc = liabilities::proof_by_checkpoint(app, &root).await?;
    http::raw_json(
        200,
        format!("{{\"success\":true,\"statusCode\":200,\"data\":{doc}}}"),
    )
}
