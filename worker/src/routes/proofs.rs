//! Proofs anyone can check: checkpoints, receipts, public verification and
//! the log's public face (docs/proofs-api.md).

use bvs_core::hash::Hash32;
use bvs_core::types::{CustomerId, Page, Period, WHOLE_TENANT};
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::idempotency::Guard;
use crate::proofs::checkpoint::{self, CheckpointOf, CheckpointRow};
use crate::views::CheckpointView;
use crate::{agreement, liabilities, proofs};

/// Records per page of the public verify route.
pub const VERIFY_RECORDS_MAX: u64 = 1_000;

fn origin(req: &Request) -> ApiResult<String> {
    let url = req.url()?;
    Ok(url.origin().ascii_serialization())
}

// ------------------------------------------------------------------ checkpoints

/// `POST /api/v1/balance/checkpoint`: fixes the covered deltas and their
/// root now (202, QUEUED); the sequencer commits the root to the log. Under
/// an Idempotency-Key the answer is stored in the checkpoint's own batch, so
/// a retried POST never makes a second checkpoint.
pub async fn checkpoint_create(
    app: &App,
    mut req: Request,
    ctx: KeyContext,
) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    let route = "POST /api/v1/balance/checkpoint";
    let (db, guard) = match super::idempotent::for_key(app, &ctx, &req, route, &bytes).await? {
        Ok(go) => go,
        Err(answer) => return Ok(answer),
    };
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}".to_vec()
    } else {
        bytes
    };
    let mut f = Fields::from_bytes(&bytes)?;
    let customer_t = f.string("customerId", false);
    // `all` (the spec's name for every customer) is the whole tenant.
    let customer_t = customer_t.filter(|c| c != WHOLE_TENANT);
    let customer = f.parse("customerId", customer_t, CustomerId::parse);
    let period_t = f.string("period", false);
    let now = i64::try_from(app.now_ms).unwrap_or(i64::MAX);
    let period = f.parse("period", period_t, |t| Period::parse_not_in_future(t, now));
    let asset_t = f.string("asset", false);
    let asset = f.parse("asset", asset_t, |t| {
        bvs_core::types::Asset::parse("asset", t)
    });
    if asset.is_some() && customer.is_none() && f.raw("customerId").is_none() {
        f.problem(
            "asset",
            "is only used with customerId (a whole-tenant checkpoint covers every asset)",
        );
    }
    f.finish()?;
    let period = period.unwrap_or_else(|| Period::containing(now));
    let asset = asset.unwrap_or_default();
    let extra = |row: &CheckpointRow| match &guard {
        Some(g) => g.statements(202, created_text(row)?),
        None => Ok(Vec::new()),
    };
    let created = checkpoint::create(
        app,
        &ctx.tenant_id,
        ctx.log(),
        ctx.plan,
        (customer.as_ref(), &asset),
        period,
        &extra,
    )
    .await;
    match Guard::or_held(guard.as_ref(), app, &db, created).await? {
        Ok(row) => http::raw_json(202, created_text(&row)?),
        Err(answer) => Ok(answer),
    }
}

/// The answer to a created checkpoint, as sent and as stored under its
/// Idempotency-Key.
fn created_text(row: &CheckpointRow) -> ApiResult<String> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Created {
        #[serde(flatten)]
        checkpoint: CheckpointView,
        message: String,
    }
    http::balance_text(
        202,
        &Created {
            checkpoint: CheckpointView::from_row(row, None),
            message: "Checkpoint queued: its merkleRoot is fixed over the deltas listed; a checkpoint.verified \
                      webhook follows when the root is committed to the signed log (status COMMITTED)."
                .to_string(),
        },
    )
}

/// `GET /api/v1/balance/checkpoints`.
pub async fn checkpoint_list(app: &App, req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let q = |n: &str| http::query_param(&req, n);
    // `all` names the whole-tenant checkpoints.
    let customer = match q("customerId")? {
        Some(c) if c == WHOLE_TENANT => Some(CheckpointOf::WholeTenant),
        Some(c) => Some(CheckpointOf::Customer(CustomerId::parse(&c)?)),
        None => None,
    };
    let period = q("period")?;
    if let Some(p) = &period {
        Period::parse(p)?;
    }
    let page = Page::for_list(q("limit")?.as_deref(), q("offset")?.as_deref())?;
    let (listed, total) = checkpoint::list(
        app,
        &ctx.tenant_id,
        ctx.log(),
        customer.as_ref(),
        period.as_deref(),
        &page,
    )
    .await?;
    let env = ctx.log().path_name();
    let mut checkpoints = Vec::with_capacity(listed.len());
    for l in &listed {
        let previous = match l.row.tree_size {
            Some(size) => l.previous.as_ref().and_then(|p| {
                p.tree_size.map(|ps| {
                    json!({
                        "checkpointId": p.id,
                        "period": p.period,
                        "treeSize": ps,
                        "consistencyProofUrl": format!("/api/v1/log/{env}/proof/consistency?from={ps}&to={size}"),
                    })
                })
            }),
            None => None,
        };
        checkpoints.push(ListedCheckpoint {
            checkpoint: CheckpointView::from_row(&l.row, l.tx_hash.as_ref()),
            previous_checkpoint: previous,
        });
    }
    http::balance(
        200,
        &CheckpointList {
            checkpoints,
            pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedCheckpoint {
    #[serde(flatten)]
    checkpoint: CheckpointView,
    /// The same ledger's previous committed checkpoint, and the consistency
    /// proof that links the two tree heads.
    previous_checkpoint: Option<Value>,
}

#[derive(Serialize)]
struct CheckpointList {
    checkpoints: Vec<ListedCheckpoint>,
    pagination: Value,
}

// ------------------------------------------------------------------ receipts

/// `GET /api/v1/balance/receipt/:customerId[?period=YYYY-MM]`.
pub async fn receipt(
    app: &App,
    req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let period = http::query_period(&req)?;
    let asset = http::query_asset(&req)?;
    let origin = origin(&req)?;
    let request = proofs::ReceiptRequest {
        tenant_id: &ctx.tenant_id,
        log: ctx.log(),
        customer_id: &customer_id,
        asset: &asset,
        period,
        origin: &origin,
    };
    // A closed period's receipt carries the customer's liabilities proof
    // (issue 31, docs/liabilities.md §10), its text as core wrote it: read
    // beside the receipt's own reads, so the route makes no more sequential
    // round trips (tests/tests/trips.rs); the receipt's error comes first.
    let liabilities = async {
        match period {
            Some(p) => {
                let of = (p, request.asset);
                liabilities::for_receipt(app, request.tenant_id, request.log, &customer_id, of)
                    .await
            }
            None => Ok(None),
        }
    };
    let (receipt, liabilities) =
        futures_util::future::join(proofs::receipt(app, &request), liabilities).await;
    let receipt = receipt?;
    let liabilities = liabilities?;
    let liabilities = liabilities
        .map(serde_json::value::RawValue::from_string)
        .transpose()
        .map_err(|e| ApiError::internal(format!("liabilities proof: {e}")))?;
    // Through a JSON value: its members keep the order receipts have
    // always been sent in (sorted).
    let body =
        serde_json::to_value(&receipt).map_err(|e| ApiError::internal(format!("receipt: {e}")))?;
    http::balance(200, &WithLiabilities { body, liabilities })
}

/// A receipt with its period's liabilities proof, if any.
#[derive(Serialize)]
struct WithLiabilities {
    #[serde(flatten)]
    body: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    liabilities: Option<Box<serde_json::value::RawValue>>,
}

// ------------------------------------------------------------------ public verify

/// The `:proofRoot` of `GET /api/v1/verify/:proofRoot`, read at the route's edge.
pub fn proof_root(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|_| {
        ApiError::field(
            "proofRoot",
            "must be 64 hex characters (a SHA-256 Merkle root)",
        )
    })
}

/// `GET /api/v1/verify/:proofRoot`: public; the proof root is the key.
pub async fn public_verify(app: &App, req: Request, root: Hash32) -> ApiResult<Response> {
    let limit = bounded(&req, "limit", 1, VERIFY_RECORDS_MAX)?.unwrap_or(VERIFY_RECORDS_MAX);
    let offset = bounded(&req, "offset", 0, bvs_core::types::PAGE_OFFSET_MAX)?.unwrap_or(0);
    let kind =
        match http::query_param(&req, "kind")? {
            None => None,
            Some(t) => Some(proofs::Kind::parse(&t).ok_or_else(|| {
                ApiError::field("kind", "must be checkpoint, submission or receipt")
            })?),
        };
    let statements = agreement::StatementsPage {
        limit: bounded(
            &req,
            "statementsLimit",
            1,
            agreement::STATEMENTS_PER_CHECKPOINT_MAX,
        )?
        .unwrap_or(agreement::STATEMENTS_PER_CHECKPOINT_MAX),
        offset: bounded(
            &req,
            "statementsOffset",
            0,
            agreement::STATEMENTS_PER_CHECKPOINT_MAX,
        )?
        .unwrap_or(0),
    };
    let page = proofs::RecordsPage {
        limit,
        offset,
        kind,
        statements,
    };
    let (answer, agreement) = match proofs::public_answer(app, root, &page, &origin(&req)?).await {
        Ok(found) => found,
        Err(ApiError::NotFound(why)) => return statement_answer(app, &root, why).await,
        Err(e) => return Err(e),
    };
    let body = match agreement {
        None => serde_json::to_value(&answer),
        Some(agreement) => serde_json::to_value(&WithAgreement {
            answer: &answer,
            agreement,
        }),
    }
    .map_err(|e| ApiError::internal(format!("public answer: {e}")))?;
    http::balance(200, &body)
}

/// A root no checkpoint, submission or receipt has: a liabilities
/// statement's hash (issue 31, docs/liabilities.md §9), or the 404.
async fn statement_answer(app: &App, root: &Hash32, why: String) -> ApiResult<Response> {
    match liabilities::public_answer(app, root).await? {
        Some(text) => http::raw_json(
            200,
            format!("{{\"success\":true,\"statusCode\":200,\"data\":{text}}}"),
        ),
        None => Err(ApiError::NotFound(why)),
    }
}

/// The whole-number query parameter `name`, from `min` to `max`.
fn bounded(req: &Request, name: &str, min: u64, max: u64) -> ApiResult<Option<u64>> {
    http::query_param(req, name)?
        .map(|t| {
            t.parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| {
                    ApiError::field(name, format!("must be a whole number from {min} to {max}"))
                })
        })
        .transpose()
}

/// A public answer with its checkpoint's agreement side (fields flattened
/// at serialisation, so amounts keep their exact text).
#[derive(Serialize)]
struct WithAgreement<'a, T: Serialize> {
    #[serde(flatten)]
    answer: &'a T,
    agreement: agreement::CheckpointAgreement,
}
