//! Facts: arbitrary content identified by its SHA-256, verified by inclusion
//! in the environment's log.

use bvs_core::hash::Hash32;
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult};
use crate::facts::{self, FactRow};
use crate::fields::Fields;
use crate::http;
use crate::ledger::ItemStatus;
use crate::views::{self, FactView};

/// Largest fact content accepted, in UTF-8 bytes (docs/balance.md).
pub const FACT_CONTENT_BYTES_MAX: usize = 64 * 1024;
/// Largest request body for a fact: content plus metadata plus JSON escaping.
pub const FACT_BODY_BYTES_MAX: usize = 256 * 1024;

/// `POST /api/v1/facts`: 202, status `queued`.
pub async fn create(app: &App, mut req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, FACT_BODY_BYTES_MAX).await?;
    let (db, guard) =
        match super::idempotent::for_key(app, &ctx, &req, "POST /api/v1/facts", &bytes).await? {
            Ok(go) => go,
            Err(answer) => return Ok(answer),
        };
    let mut f = Fields::from_bytes(&bytes)?;
    let content = f.string("content", true);
    let metadata = f.metadata("metadata");
    f.finish()?;
    let content = content.ok_or_else(|| ApiError::internal("validated content missing"))?;
    if content.len() > FACT_CONTENT_BYTES_MAX {
        return Err(ApiError::PayloadTooLarge(format!(
            "content: must be at most {FACT_CONTENT_BYTES_MAX} bytes of UTF-8 (got {})",
            content.len()
        )));
    }
    let metadata_text = metadata.map(|m| m.to_value().to_string());
    let (row, created) = facts::record(
        app,
        &ctx.tenant_id,
        ctx.log(),
        ctx.plan,
        &content,
        metadata_text.as_deref(),
    )
    .await?;
    let status = views::fact_status(row.status);
    let text = http::dashboard_text(
        202,
        &json!({
            "contentHash": row.content_hash,
            "status": status,
            "message": if created {
                "Fact queued for verification; check GET /api/v1/facts/{contentHash}/verify".to_string()
            } else {
                "This content was already recorded; the existing fact is returned".to_string()
            },
            "createdAt": views::iso(row.created_at),
        }),
        None,
    )?;
    // A fact is content-addressed (a retry makes no second one): its
    // answer is stored after the write, so a replay answers the same.
    if let Some(g) = &guard {
        g.record(&db, 202, &text).await;
    }
    http::raw_json(202, text)
}

/// The `contentHash` path parameter (a 400 naming it; stored hashes are
/// read by their rows' types).
pub fn content_hash_param(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|_| {
        ApiError::field(
            "contentHash",
            "must be 64 lowercase hex characters (a SHA-256)",
        )
    })
}

async fn load(app: &App, ctx: &KeyContext, hash: Hash32) -> ApiResult<FactRow> {
    facts::fact(app, &ctx.tenant_id, ctx.log(), &hash).await
}

/// `GET /api/v1/facts/:contentHash`.
pub async fn get(app: &App, ctx: KeyContext, hash: Hash32) -> ApiResult<Response> {
    let row = load(app, &ctx, hash).await?;
    http::dashboard(200, &FactView::from_row(&row)?, None)
}

/// `GET /api/v1/facts/:contentHash/verify`.
pub async fn verify(app: &App, ctx: KeyContext, hash: Hash32) -> ApiResult<Response> {
    let row = load(app, &ctx, hash).await?;
    let data = match (row.status, row.verified_at) {
        (ItemStatus::Verified, Some(at)) => json!({
            "contentHash": row.content_hash,
            "verified": true,
            "verifiedAt": views::iso(at),
            "verificationProof": {
                "timestamp": views::iso(at),
                "leafIndex": row.leaf_index,
                "treeSize": row.tree_size,
                "message": "The contentHash is a leaf of this environment's signed Merkle log; \
                    fetch an inclusion proof from /api/v1/log/proof/inclusion",
            },
        }),
        (ItemStatus::Failed, _) => json!({
            "contentHash": row.content_hash,
            "verified": false,
            "status": views::fact_status(ItemStatus::Failed),
            "failure": views::Failure::of(true, row.failure.as_deref()),
        }),
        _ => json!({
            "contentHash": row.content_hash,
            "verified": false,
            "status": "pending",
        }),
    };
    http::dashboard(200, &data, None)
}
