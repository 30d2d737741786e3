//! Balance API: emit, batch, status, derive, compare, customer ledgers.

use bvs_core::amount::Amount;
use bvs_core::time::parse_iso_ms;
use bvs_core::types::{CustomerId, Reason, ReferenceId, BATCH_DELTAS_MAX};
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::{self, KeyContext};
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::idempotency;
use crate::ledger;
use crate::ledger::submit::{self, DeltaInput, SubmissionKind, Submitter};
use crate::quota;
use crate::store;
use crate::views::{self, anchor_status, DeltaRecord};

// ------------------------------------------------------------------ emit

fn read_delta(f: &mut Fields) -> Option<DeltaInput> {
    let customer = f.string("customerId", true);
    let customer_id = f.parse("customerId", customer, CustomerId::parse);
    let delta_text = f.number("delta", true);
    let delta = f.parse("delta", delta_text, |t| Amount::parse_delta("delta", t));
    let reason_text = f.string("reason", true);
    let reason = f.parse("reason", reason_text, Reason::parse);
    let reference_text = f.string("referenceId", false);
    let reference_id = f.parse("referenceId", reference_text, ReferenceId::parse);
    let metadata = f.metadata("metadata");
    let ts_text = f.string("timestamp", false);
    let declared_at = f.parse("timestamp", ts_text, |t| {
        parse_iso_ms(t)
            .ok()
            .and_then(|ms| u64::try_from(ms).ok())
            .ok_or_else(|| {
                FieldError::new(
                    "timestamp",
                    "must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z",
                )
            })
    });
    if !f.problems.is_empty() {
        return None;
    }
    Some(DeltaInput {
        customer_id: customer_id?,
        delta: delta?,
        reason: reason?,
        reference_id,
        metadata,
        declared_at,
    })
}

fn submitter<'a>(ctx: &'a KeyContext, contract_id: &'a str) -> Submitter<'a> {
    Submitter {
        tenant_id: &ctx.tenant_id,
        env: ctx.env,
        contract_id,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EmitRecord {
    anchor_id: String,
    customer_id: String,
    delta: Amount,
    status: &'static str,
    receipt_id: String,
    items_root: String,
    item_hash: String,
    item_hashes: Vec<String>,
    estimated_verified_deltas: u64,
    declared_timestamp: String,
    received_at: String,
    message: String,
}

/// `POST /api/v1/balance/delta`.
pub async fn emit(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let pool = http::header(&req, "x-credit-pool-id");
    let idem = idempotency::key(&req)?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    idempotency::once(
        app,
        &ctx,
        idem,
        "POST /api/v1/balance/delta",
        &bytes,
        || async {
            let mut f = Fields::from_bytes(&bytes)?;
            let input = read_delta(&mut f);
            f.finish()?;
            let input = input.ok_or_else(|| ApiError::internal("validated delta missing"))?;
            let contract = auth::resolve_contract(app, &ctx, pool.as_deref()).await?;
            quota::consume(app, &ctx.account(), 1).await?;
            let prepared = submit::prepare(&ctx.tenant_id, input, 0, app.now_ms)?;
            let by = submitter(&ctx, &contract.id);
            let single = std::slice::from_ref(&prepared);
            let (_, root) = submit::submit(app, &by, SubmissionKind::Single, single).await?;
            let db = ledger::db(app, ctx.env)?;
            let customer = prepared.row.customer_id.clone();
            let estimated = submit::estimated_verified(&db, &ctx.tenant_id, &customer).await?;
            let record = EmitRecord {
                anchor_id: prepared.row.anchor_id.clone(),
                customer_id: customer,
                delta: prepared.delta,
                status: "QUEUED",
                receipt_id: root.to_hex(),
                items_root: root.to_hex(),
                item_hash: prepared.item.to_hex(),
                item_hashes: vec![prepared.item.to_hex()],
                estimated_verified_deltas: estimated,
                declared_timestamp: views::iso(prepared.row.declared_at),
                received_at: views::iso(app.now_ms),
                message: format!(
                    "Delta queued for verification; it is typically verified within seconds. \
                 Poll GET /api/v1/balance/delta/{} or subscribe to the delta.verified webhook.",
                    prepared.row.anchor_id
                ),
            };
            Ok((202, http::balance_text(202, &record)?))
        },
    )
    .await
}

/// `POST /api/v1/balance/delta/batch`.
pub async fn emit_batch(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let pool = http::header(&req, "x-credit-pool-id");
    let idem = idempotency::key(&req)?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    idempotency::once(app, &ctx, idem, "POST /api/v1/balance/delta/batch", &bytes, || async {
        let mut f = Fields::from_bytes(&bytes)?;
        let items = f.array("deltas", true);
        f.finish()?;
        let items = items.unwrap_or_default();
        if items.is_empty() {
            return Err(ApiError::field("deltas", "must contain at least 1 delta"));
        }
        if items.len() > BATCH_DELTAS_MAX {
            return Err(ApiError::field(
                "deltas",
                format!("must contain at most {BATCH_DELTAS_MAX} deltas (got {})", items.len()),
            ));
        }
        let contract = auth::resolve_contract(app, &ctx, pool.as_deref()).await?;
        let mut results: Vec<BatchResult> = (0..items.len()).map(|_| BatchResult::default()).collect();
        let mut valid: Vec<(usize, DeltaInput)> = Vec::new();
        let mut all_problems: Vec<FieldProblem> = Vec::new();
        for (i, raw) in items.iter().enumerate() {
            let prefix = format!("deltas[{i}].");
            match Fields::from_raw(raw, &prefix) {
                Ok(mut item) => {
                    let customer = item.raw("customerId").and_then(|t| serde_json::from_str::<String>(t).ok());
                    match read_delta(&mut item) {
                        Some(input) => valid.push((i, input)),
                        None => {
                            let err = ApiError::Validation(item.problems.clone());
                            all_problems.extend(item.problems);
                            results[i] = failed_item(i, customer, &err);
                        }
                    }
                }
                Err(err) => {
                    if let ApiError::Validation(p) = &err {
                        all_problems.extend(p.iter().cloned());
                    }
                    results[i] = failed_item(i, None, &err);
                }
            }
        }
        if valid.is_empty() {
            return Err(ApiError::Validation(all_problems));
        }
        quota::consume(app, &ctx.account(), valid.len() as u64).await?;
        let mut prepared = Vec::with_capacity(valid.len());
        let mut indexes = Vec::with_capacity(valid.len());
        for (position, (i, input)) in valid.into_iter().enumerate() {
            prepared.push(submit::prepare(&ctx.tenant_id, input, position as u64, app.now_ms)?);
            indexes.push(i);
        }
        let by = submitter(&ctx, &contract.id);
        let (batch_id, root) = submit::submit(app, &by, SubmissionKind::Batch, &prepared).await?;
        let mut customers: Vec<&str> = prepared.iter().map(|p| p.row.customer_id.as_str()).collect();
        customers.sort_unstable();
        customers.dedup();
        for (p, i) in prepared.iter().zip(&indexes) {
            results[*i] = BatchResult {
                index: *i,
                customer_id: Some(p.row.customer_id.clone()),
                delta: Some(p.delta),
                anchor_id: Some(p.row.anchor_id.clone()),
                item_hash: Some(p.row.item_hash.clone()),
                receipt_id: Some(root.to_hex()),
                items_root: Some(root.to_hex()),
                status: "QUEUED",
                error: None,
            };
        }
        let total_queued = prepared.len();
        let data = BatchData {
            batch_id,
            total_queued,
            total_failed: results.len() - total_queued,
            items_root: root.to_hex(),
            receipt_id: root.to_hex(),
            item_hashes: prepared.iter().map(|p| p.row.item_hash.clone()).collect(),
            results,
            efficiency: json!({
                "uniqueCustomers": customers.len(),
                "totalDeltas": total_queued,
                "estimatedSlots": 1,
                "message": format!(
                    "{total_queued} deltas for {} customers share one submission and one proof root; \
                     they are appended to the log in a single signed tree head.",
                    customers.len()
                ),
            }),
        };
        Ok((202, http::balance_text(202, &data)?))
    })
    .await
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct BatchResult {
    index: usize,
    customer_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<Amount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    anchor_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    item_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    items_root: Option<String>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchData {
    batch_id: String,
    total_queued: usize,
    total_failed: usize,
    items_root: String,
    receipt_id: String,
    item_hashes: Vec<String>,
    results: Vec<BatchResult>,
    #[serde(rename = "_efficiency")]
    efficiency: Value,
}

fn failed_item(index: usize, customer_id: Option<String>, err: &ApiError) -> BatchResult {
    let body = err.body();
    BatchResult {
        index,
        customer_id,
        status: "FAILED",
        error: Some(
            json!({ "statusCode": body.status_code, "error": body.error, "message": body.message }),
        ),
        ..BatchResult::default()
    }
}

// ------------------------------------------------------------------ status

/// `GET /api/v1/balance/delta/:anchorId`.
pub async fn status(app: &App, req: Request, anchor_id: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let db = ledger::db(app, ctx.env)?;
    let row = store::deltas::delta(&db, &ctx.tenant_id, anchor_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No delta with anchorId {anchor_id}")))?;
    let tx_hash = match row.tree_size {
        Some(size) => store::log::head_at(&db, size).await?.map(|h| h.note_hash),
        None => None,
    };
    let siblings =
        store::deltas::of_submission_in_tenant(&db, &ctx.tenant_id, &row.submission_id).await?;
    let batch = if siblings.len() > 1 {
        Some(
            siblings
                .iter()
                .map(|d| {
                    Ok(views::BatchMember {
                        anchor_id: d.anchor_id.clone(),
                        customer_id: d.customer_id.clone(),
                        delta: d.delta,
                        item_hash: d.item_hash.to_hex(),
                        status: anchor_status(d.status),
                    })
                })
                .collect::<ApiResult<Vec<_>>>()?,
        )
    } else {
        None
    };
    let mut data = DeltaRecord::from_row(&row, tx_hash)?;
    data.status = anchor_status(row.status);
    data.batch_id = batch.as_ref().map(|_| row.submission_id.clone());
    data.delta_count = batch.as_ref().map(Vec::len);
    data.deltas = batch;
    http::balance(200, &data)
}
