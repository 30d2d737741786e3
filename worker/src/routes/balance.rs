//! Balance API: emit, batch, status, derive, compare, customer ledgers.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::time::parse_iso_ms;
use bvs_core::types::{CustomerId, Reason, ReferenceId, BATCH_DELTAS_MAX};
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::{self, KeyContext};
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::idempotency::{self, Claim, Fault};
use crate::ledger::submit::{self, DeltaInput, Prepared, SubmissionKind, Submitter};
use crate::profile::EmitStops;
use crate::views;

// ------------------------------------------------------------------ emit

fn read_delta(f: &mut Fields) -> Option<DeltaInput> {
    let customer = f.string("customerId", true);
    // `all` names the whole-tenant checkpoint: no ledger may have it.
    let customer_id = f.parse("customerId", customer, CustomerId::parse_new);
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

fn submitter<'a>(app: &App, ctx: &'a KeyContext, contract_id: &'a str) -> Submitter<'a> {
    Submitter {
        tenant_id: &ctx.tenant_id,
        log: ctx.log(),
        contract_id,
        plan: ctx.plan,
        root_indexed: false,
        stop: EmitStops::of(app).stop(),
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

/// A single emit's body and its delta, prepared (or why it is not).
struct SingleBody {
    bytes: Vec<u8>,
    prepared: ApiResult<Prepared>,
}

async fn read_single(req: &mut Request, now_ms: u64) -> ApiResult<SingleBody> {
    let bytes = http::body_bytes(req, http::BODY_BYTES_MAX).await?;
    let prepared = prepare_single(&bytes, now_ms);
    Ok(SingleBody { bytes, prepared })
}

fn prepare_single(bytes: &[u8], now_ms: u64) -> ApiResult<Prepared> {
    let mut f = Fields::from_bytes(bytes)?;
    let input = read_delta(&mut f);
    f.finish()?;
    let input = input.ok_or_else(|| ApiError::internal("validated delta missing"))?;
    submit::prepare(input, 0, now_ms)
}

/// `POST /api/v1/balance/delta`. When the isolate holds a live lease of
/// the key's rate limit (`auth::holds_key_lease`: the key was just used
/// here), the body is read and its delta prepared before the key is
/// checked, so that the key's read also writes the proof-root index row:
/// one control-database call instead of two (issue 16). The body's errors
/// still come after the key's.
pub async fn emit(app: &App, mut req: Request) -> ApiResult<Response> {
    let stops = EmitStops::of(app);
    if let Some(answer) = stops.at_route() {
        return answer;
    }
    let early = if auth::holds_key_lease(app, &req) {
        Some(read_single(&mut req, app.now_ms).await)
    } else {
        None
    };
    let root = early
        .as_ref()
        .and_then(|b| b.as_ref().ok())
        .and_then(|b| b.prepared.as_ref().ok())
        .map(|p| submit::items_root(std::slice::from_ref(p)).to_hex());
    let (ctx, root_indexed) = match &root {
        Some(root) => auth::authenticate_api_key_indexing(app, &req, root).await?,
        None => (auth::authenticate_api_key(app, &req).await?, false),
    };
    if let Some(answer) = stops.after_auth(app).await {
        return answer;
    }
    let pool = http::header(&req, "x-credit-pool-id");
    let idem = idempotency::key(&req)?;
    let fault = idempotency::fault(app, &req);
    let SingleBody { bytes, prepared } = match early {
        Some(body) => body?,
        None => read_single(&mut req, app.now_ms).await?,
    };
    let (ctx, pool) = (&ctx, &pool);
    idempotency::once(
        app,
        super::idempotent::owner(app, ctx)?,
        idem,
        fault,
        "POST /api/v1/balance/delta",
        &bytes,
        |claim| async move {
            let claim = claim.as_deref();
            let mut prepared = prepared?;
            let contract = auth::key_contract(ctx, pool.as_deref())?;
            after_quota(claim).await?;
            submit::for_tenant(std::slice::from_mut(&mut prepared), &ctx.tenant_id);
            let by = Submitter {
                root_indexed,
                ..submitter(app, ctx, &contract.id)
            };
            let customer = prepared.row.customer_id.clone();
            let single = std::slice::from_ref(&prepared);
            submit::submit(
                app,
                &by,
                SubmissionKind::Single,
                single,
                claim,
                Some(customer.as_str()),
                |_, root| Ok((202, emit_record(app, &prepared, root)?)),
            )
            .await
        },
    )
    .await
}

/// DEV_MODE fault injection (`idempotency::fault`): a claimed request
/// may end here, after its quota is spent and before its write.
async fn after_quota(claim: Option<&Claim>) -> ApiResult<()> {
    match claim {
        Some(c) => c.fault_point(Fault::AfterQuota).await,
        None => Ok(()),
    }
}

/// The answer of a single emit (`estimatedVerifiedDeltas` pending: the
/// write's batch counts it).
fn emit_record(app: &App, prepared: &Prepared, root: &Hash32) -> ApiResult<String> {
    let record = EmitRecord {
        anchor_id: prepared.row.anchor_id.clone(),
        customer_id: prepared.row.customer_id.to_string(),
        delta: prepared.delta,
        status: "QUEUED",
        receipt_id: root.to_hex(),
        items_root: root.to_hex(),
        item_hash: prepared.item.to_hex(),
        item_hashes: vec![prepared.item.to_hex()],
        estimated_verified_deltas: submit::ESTIMATE_PENDING,
        declared_timestamp: views::iso(prepared.row.declared_at),
        received_at: views::iso(app.now_ms),
        message: format!(
            "Delta queued for verification; it is typically verified within seconds. \
             Poll GET /api/v1/balance/delta/{} or subscribe to the delta.verified webhook.",
            prepared.row.anchor_id
        ),
    };
    http::balance_text(202, &record)
}

/// `POST /api/v1/balance/delta/batch`.
pub async fn emit_batch(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let pool = http::header(&req, "x-credit-pool-id");
    let idem = idempotency::key(&req)?;
    let fault = idempotency::fault(app, &req);
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    let (ctx, bytes, pool) = (&ctx, &bytes, &pool);
    idempotency::once(
        app,
        super::idempotent::owner(app, ctx)?,
        idem,
        fault,
        "POST /api/v1/balance/delta/batch",
        bytes,
        |claim| async move {
            let claim = claim.as_deref();
            let items = batch_items(bytes)?;
            let contract = auth::key_contract(ctx, pool.as_deref())?;
            let ReadBatch {
                mut results,
                valid,
                problems,
            } = read_batch(&items);
            if valid.is_empty() {
                return Err(ApiError::Validation(problems));
            }
            after_quota(claim).await?;
            let mut prepared = Vec::with_capacity(valid.len());
            let mut indexes = Vec::with_capacity(valid.len());
            for (position, (i, input)) in valid.into_iter().enumerate() {
                prepared.push(submit::prepare(input, position as u64, app.now_ms)?);
                indexes.push(i);
            }
            submit::for_tenant(&mut prepared, &ctx.tenant_id);
            let by = submitter(app, ctx, &contract.id);
            let respond = |batch_id: &str, root: &Hash32| {
                for (p, i) in prepared.iter().zip(&indexes) {
                    results[*i] = queued_item(*i, p, root);
                }
                let data = batch_data(batch_id.to_string(), root, &prepared, results);
                Ok((202, http::balance_text(202, &data)?))
            };
            submit::submit(
                app,
                &by,
                SubmissionKind::Batch,
                &prepared,
                claim,
                None,
                respond,
            )
            .await
        },
    )
    .await
}

/// A batch body's `deltas`: 1 to `BATCH_DELTAS_MAX` items, each still raw.
fn batch_items(bytes: &[u8]) -> ApiResult<Vec<Box<RawValue>>> {
    let mut f = Fields::from_bytes(bytes)?;
    let items = f.array("deltas", true);
    f.finish()?;
    let items = items.unwrap_or_default();
    if items.is_empty() {
        return Err(ApiError::field("deltas", "must contain at least 1 delta"));
    }
    if items.len() > BATCH_DELTAS_MAX {
        return Err(ApiError::field(
            "deltas",
            format!(
                "must contain at most {BATCH_DELTAS_MAX} deltas (got {})",
                items.len()
            ),
        ));
    }
    Ok(items)
}

/// A batch's items read one by one: the valid ones with their index, a
/// FAILED result in place of each bad one, and every problem.
struct ReadBatch {
    results: Vec<BatchResult>,
    valid: Vec<(usize, DeltaInput)>,
    problems: Vec<FieldProblem>,
}

fn read_batch(items: &[Box<RawValue>]) -> ReadBatch {
    let mut read = ReadBatch {
        results: (0..items.len()).map(|_| BatchResult::default()).collect(),
        valid: Vec::new(),
        problems: Vec::new(),
    };
    for (i, raw) in items.iter().enumerate() {
        let prefix = format!("deltas[{i}].");
        match Fields::from_raw(raw, &prefix) {
            Ok(mut item) => {
                let customer = item
                    .raw("customerId")
                    .and_then(|t| serde_json::from_str::<String>(t).ok());
                match read_delta(&mut item) {
                    Some(input) => read.valid.push((i, input)),
                    None => {
                        let err = ApiError::Validation(item.problems.clone());
                        read.problems.extend(item.problems);
                        read.results[i] = failed_item(i, customer, &err);
                    }
                }
            }
            Err(err) => {
                if let ApiError::Validation(p) = &err {
                    read.problems.extend(p.iter().cloned());
                }
                read.results[i] = failed_item(i, None, &err);
            }
        }
    }
    read
}

fn queued_item(index: usize, p: &Prepared, root: &Hash32) -> BatchResult {
    BatchResult {
        index,
        customer_id: Some(p.row.customer_id.to_string()),
        delta: Some(p.delta),
        anchor_id: Some(p.row.anchor_id.clone()),
        item_hash: Some(p.row.item_hash.to_hex()),
        receipt_id: Some(root.to_hex()),
        items_root: Some(root.to_hex()),
        status: "QUEUED",
        error: None,
    }
}

fn batch_data(
    batch_id: String,
    root: &Hash32,
    prepared: &[Prepared],
    results: Vec<BatchResult>,
) -> BatchData {
    let mut customers: Vec<&str> = prepared
        .iter()
        .map(|p| p.row.customer_id.as_str())
        .collect();
    customers.sort_unstable();
    customers.dedup();
    let total_queued = prepared.len();
    BatchData {
        batch_id,
        total_queued,
        total_failed: results.len() - total_queued,
        items_root: root.to_hex(),
        receipt_id: root.to_hex(),
        item_hashes: prepared.iter().map(|p| p.row.item_hash.to_hex()).collect(),
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
    }
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
    BatchResult {
        index,
        customer_id,
        status: "FAILED",
        // The error envelope with its code (and field/errors), no requestId.
        error: serde_json::to_value(err.body()).ok(),
        ..BatchResult::default()
    }
}

// ------------------------------------------------------------------ status

/// `GET /api/v1/balance/delta/:anchorId`.
pub async fn status(app: &App, req: Request, anchor_id: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let data = submit::status(app, &ctx.tenant_id, ctx.log(), anchor_id).await?;
    http::balance(200, &data)
}
