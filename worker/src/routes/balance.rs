//! Balance API: emit, batch, status, derive, compare, customer ledgers.

use bvs_core::amount::Amount;
use bvs_core::derive;
use bvs_core::hash::{item_hash, DeltaContent, Hash32};
use bvs_core::merkle;
use bvs_core::time::{format_iso_ms, parse_iso_ms};
use bvs_core::types::{
    CustomerId, IdempotencyKey, Metadata, Page, Reason, ReferenceId, BATCH_DELTAS_MAX,
    DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN, DERIVE_HINT_DELTAS_MIN,
};
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::{self, KeyContext};
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::ids;
use crate::jobs::Job;
use crate::ledger;
use crate::quota;
use crate::store::idempotency as idem_store;
use crate::store::ledger as store;
use crate::views::{self, anchor_status, DeltaRecord, DeltaView};

/// How long an Idempotency-Key is remembered after its first use.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;

/// The deterministic ledger identifier of a customer: the service keeps no
/// notion of who the customer is (docs/balance.md).
pub fn ledger_id(tenant_id: &str, customer_id: &str) -> String {
    Hash32::digest(format!("bvs-ledger-v1\n{tenant_id}\n{customer_id}").as_bytes()).to_hex()
}

// ------------------------------------------------------------------ emit

/// One validated delta of an emit or batch request.
struct DeltaInput {
    customer_id: CustomerId,
    delta: Amount,
    reason: Reason,
    reference_id: Option<ReferenceId>,
    metadata: Option<Metadata>,
    declared_at: Option<u64>,
}

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

/// A delta ready to store: ids and hashes computed.
struct Prepared {
    row: store::NewDelta,
    item: Hash32,
    delta: Amount,
}

fn prepare(ctx: &KeyContext, input: DeltaInput, position: u64, now_ms: u64) -> ApiResult<Prepared> {
    let anchor_id = ids::new_id("anc")?;
    let declared_at = input.declared_at.unwrap_or(now_ms);
    let metadata = input.metadata.as_ref().map(Metadata::to_value);
    let content = DeltaContent {
        anchor_id: anchor_id.clone(),
        customer_id: input.customer_id.as_str().to_string(),
        delta: input.delta,
        reason: input.reason.as_str().to_string(),
        reference_id: input.reference_id.as_ref().map(|r| r.as_str().to_string()),
        metadata: metadata.as_ref().map(bvs_core::json::Value::from_serde),
        declared_timestamp: format_iso_ms(i64::try_from(declared_at).unwrap_or(i64::MAX)),
    };
    let item = item_hash(&content).map_err(ApiError::internal)?;
    Ok(Prepared {
        row: store::NewDelta {
            anchor_id,
            customer_id: content.customer_id.clone(),
            ledger_id: ledger_id(&ctx.tenant_id, &content.customer_id),
            position,
            item_hash: item.to_hex(),
            delta: input.delta.to_string(),
            reason: content.reason,
            reference_id: content.reference_id,
            metadata: metadata.map(|m| m.to_string()),
            declared_at,
        },
        item,
        delta: input.delta,
    })
}

/// Writes the submission and rings the sequencer's doorbell. A lost ring
/// only delays verification: the sweeper re-rings for QUEUED items.
async fn queue_submission(
    app: &App,
    ctx: &KeyContext,
    contract_id: &str,
    kind: &'static str,
    prepared: &[Prepared],
) -> ApiResult<(String, Hash32)> {
    let items: Vec<Hash32> = prepared.iter().map(|p| p.item).collect();
    let root = merkle::root(&items);
    let submission_id = ids::new_id(if kind == "batch" { "bat" } else { "sub" })?;
    let rows: Vec<&store::NewDelta> = prepared.iter().map(|p| &p.row).collect();
    store::insert_submission(
        &ledger::db(app, ctx.env)?,
        &store::NewSubmission {
            id: &submission_id,
            tenant_id: &ctx.tenant_id,
            contract_id,
            kind,
            items_root: &root.to_hex(),
            item_count: prepared.len() as u64,
            received_at: app.now_ms,
        },
        &rows,
    )
    .await?;
    ring(app, ctx.env).await;
    Ok((submission_id, root))
}

/// Rings the environment's verification queue; failures are logged only.
pub async fn ring(app: &App, env: bvs_core::types::Env) {
    let sent = match app.env.queue(ledger::queue_binding(env)) {
        Ok(q) => {
            q.send(Job::Sequence {
                env: env.as_str().to_string(),
            })
            .await
        }
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("verification doorbell for {} not rung: {e}", env.as_str());
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
    let idem = idempotency_key(&req)?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    idempotent(
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
            quota::consume(app, &ctx, 1).await?;
            let prepared = prepare(&ctx, input, 0, app.now_ms)?;
            let (_, root) = queue_submission(
                app,
                &ctx,
                &contract.id,
                "single",
                std::slice::from_ref(&prepared),
            )
            .await?;
            let db = ledger::db(app, ctx.env)?;
            let customer = prepared.row.customer_id.clone();
            let verified = store::ledger(&db, &ctx.tenant_id, &customer)
                .await?
                .map_or(0, |l| l.verified_count);
            let queued = store::queued_count(&db, &ctx.tenant_id, &customer).await?;
            let record = EmitRecord {
                anchor_id: prepared.row.anchor_id.clone(),
                customer_id: customer,
                delta: prepared.delta,
                status: "QUEUED",
                receipt_id: root.to_hex(),
                items_root: root.to_hex(),
                item_hash: prepared.item.to_hex(),
                item_hashes: vec![prepared.item.to_hex()],
                estimated_verified_deltas: verified + queued.max(1),
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
    let idem = idempotency_key(&req)?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    idempotent(app, &ctx, idem, "POST /api/v1/balance/delta/batch", &bytes, || async {
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
        quota::consume(app, &ctx, valid.len() as u64).await?;
        let mut prepared = Vec::with_capacity(valid.len());
        let mut indexes = Vec::with_capacity(valid.len());
        for (position, (i, input)) in valid.into_iter().enumerate() {
            prepared.push(prepare(&ctx, input, position as u64, app.now_ms)?);
            indexes.push(i);
        }
        let (batch_id, root) = queue_submission(app, &ctx, &contract.id, "batch", &prepared).await?;
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

fn idempotency_key(req: &Request) -> ApiResult<Option<IdempotencyKey>> {
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
async fn idempotent<F, Fut>(
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
            return Err(ApiError::Conflict(
                "Idempotency-Key was already used with a different request body; use a new key for a new request"
                    .to_string(),
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

// ------------------------------------------------------------------ status

/// `GET /api/v1/balance/delta/:anchorId`.
pub async fn status(app: &App, req: Request, anchor_id: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let db = ledger::db(app, ctx.env)?;
    let row = store::delta(&db, &ctx.tenant_id, anchor_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No delta with anchorId {anchor_id}")))?;
    let tx_hash = match row.tree_size {
        Some(size) => store::head_at(&db, size).await?.map(|h| h.note_hash),
        None => None,
    };
    let siblings = store::submission_deltas(&db, &ctx.tenant_id, &row.submission_id).await?;
    let batch = if siblings.len() > 1 {
        Some(
            siblings
                .iter()
                .map(|d| {
                    Ok(views::BatchMember {
                        anchor_id: d.anchor_id.clone(),
                        customer_id: d.customer_id.clone(),
                        delta: views::amount(&d.delta)?,
                        item_hash: d.item_hash.clone(),
                        status: anchor_status(&d.status),
                    })
                })
                .collect::<ApiResult<Vec<_>>>()?,
        )
    } else {
        None
    };
    let mut data = DeltaRecord::from_row(&row, tx_hash)?;
    data.status = anchor_status(&row.status);
    data.batch_id = batch.as_ref().map(|_| row.submission_id.clone());
    data.delta_count = batch.as_ref().map(Vec::len);
    data.deltas = batch;
    http::balance(200, &data)
}

// ------------------------------------------------------------------ derive

/// `GET /api/v1/balance/derive/:customerId`.
pub async fn derive(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let q = |name: &str| http::query_param(&req, name);
    let mut problems = Vec::new();
    let starting_balance = match q("startingBalance")? {
        None => Amount::ZERO,
        Some(t) => Amount::parse_field("startingBalance", &t).unwrap_or_else(|e| {
            problems.push(FieldProblem::from(e));
            Amount::ZERO
        }),
    };
    let checkpoint_type = q("startingCheckpointType")?.unwrap_or_else(|| "itemsRoot".to_string());
    if checkpoint_type != "itemsRoot" && checkpoint_type != "anchorId" {
        problems.push(FieldProblem::new(
            "startingCheckpointType",
            "must be itemsRoot or anchorId",
        ));
    }
    let checkpoint = q("startingCheckpoint")?.filter(|c| !c.is_empty() && c != "genesis");
    let page = match Page::for_derive(q("limit")?.as_deref(), q("offset")?.as_deref()) {
        Ok(p) => Some(p),
        Err(e) => {
            problems.push(e.into());
            None
        }
    };
    if let (Some(c), "itemsRoot") = (&checkpoint, checkpoint_type.as_str()) {
        if Hash32::parse(c).is_err() {
            problems.push(FieldProblem::new(
                "startingCheckpoint",
                "must be a 64-character hex itemsRoot (or set startingCheckpointType=anchorId)",
            ));
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    let page = page.ok_or_else(|| ApiError::internal("page missing"))?;
    let db = ledger::db(app, ctx.env)?;
    let ledger_row = ledger::require_ledger(&db, &ctx.tenant_id, &customer_id).await?;
    let balance_now = views::amount(&ledger_row.computed_balance)?;

    // The starting point: (ledger_seq, balance after it).
    let (start_seq, start_balance) = match &checkpoint {
        None => {
            if ledger_row.verified_count >= DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN {
                return Err(ApiError::Unprocessable(format!(
                    "This ledger has {} verified deltas; derivations of {DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN} or more \
                     require a startingCheckpoint. Use startingCheckpoint={} with startingBalance={} \
                     (the latestCheckpoint and computedBalance of your last derivation).",
                    ledger_row.verified_count,
                    ledger_row.latest_items_root.clone().unwrap_or_default(),
                    balance_now
                )));
            }
            (0, Amount::ZERO)
        }
        Some(c) => {
            let row = if checkpoint_type == "anchorId" {
                store::delta(&db, &ctx.tenant_id, c)
                    .await?
                    .filter(|d| d.customer_id == customer_id.as_str() && d.status == "VERIFIED")
            } else {
                store::ledger_delta_by_items_root(&db, &ctx.tenant_id, customer_id.as_str(), c)
                    .await?
            };
            let row = row.ok_or_else(|| {
                ApiError::NotFound(format!(
                    "startingCheckpoint {c} is not a verified {checkpoint_type} of customer {}",
                    customer_id.as_str()
                ))
            })?;
            let seq = row
                .ledger_seq
                .ok_or_else(|| ApiError::internal("verified delta without ledger_seq"))?;
            let bal = views::amount(row.balance_after.as_deref().unwrap_or("0"))?;
            (seq, bal)
        }
    };
    let computed = derive::computed_balance(starting_balance, start_balance, balance_now)
        .map_err(|e| ApiError::Unprocessable(format!("computedBalance: {e}")))?;
    let total = ledger_row.verified_count.saturating_sub(start_seq);
    let from = start_seq + page.offset() + 1;
    let to = (start_seq + page.offset() + page.limit()).min(ledger_row.verified_count);
    let rows = if from <= to {
        store::ledger_deltas(&db, &ctx.tenant_id, customer_id.as_str(), from, to).await?
    } else {
        Vec::new()
    };
    let deltas: Vec<DeltaView> = rows
        .iter()
        .map(DeltaView::from_row)
        .collect::<ApiResult<_>>()?;
    let windows = window_summaries(&db, &ctx.tenant_id, customer_id.as_str(), start_seq).await?;
    let latest = ledger_row.latest_items_root.clone();
    let hint = (total >= DERIVE_HINT_DELTAS_MIN).then(|| Hint {
        message: format!(
            "This derivation replays {total} deltas. Store latestCheckpoint and computedBalance, then pass them as \
             startingCheckpoint and startingBalance next time so only newer deltas are replayed."
        ),
        starting_checkpoint: latest.clone(),
        starting_checkpoint_type: "itemsRoot",
        starting_balance: computed,
    });
    let data = Derivation {
        customer_id: customer_id.as_str().to_string(),
        ledger_id: ledger_row.ledger_id.clone(),
        starting_balance,
        starting_checkpoint: checkpoint.clone().unwrap_or_else(|| "genesis".to_string()),
        starting_checkpoint_type: checkpoint_type,
        computed_balance: computed,
        deltas_count: total,
        latest_checkpoint: latest.clone(),
        latest_receipt_id: latest.clone(),
        deltas,
        window_summaries: windows,
        verification_proof: json!({
            "itemsRoot": latest,
            "message": match &latest {
                Some(r) => format!("Every delta listed is included in this environment's signed Merkle log; \
                    check the latest one publicly at /api/v1/verify/{r}, and fetch a receipt for full inclusion proofs."),
                None => "No verified deltas yet.".to_string(),
            },
        }),
        pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        hint,
    };
    http::balance(200, &data)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Hint {
    message: String,
    starting_checkpoint: Option<String>,
    starting_checkpoint_type: &'static str,
    starting_balance: Amount,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Derivation {
    customer_id: String,
    ledger_id: String,
    starting_balance: Amount,
    starting_checkpoint: String,
    starting_checkpoint_type: String,
    computed_balance: Amount,
    deltas_count: u64,
    latest_checkpoint: Option<String>,
    latest_receipt_id: Option<String>,
    deltas: Vec<DeltaView>,
    window_summaries: Vec<WindowView>,
    verification_proof: Value,
    pagination: Value,
    #[serde(rename = "_hint", skip_serializing_if = "Option::is_none")]
    hint: Option<Hint>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WindowView {
    window: String,
    deltas_count: u64,
    net_delta: Amount,
    first_block_timestamp: String,
    last_block_timestamp: String,
}

/// Window summaries of the deltas after ledger_seq `after`, from the
/// per-window aggregates (O(windows), never O(history)).
async fn window_summaries(
    db: &worker::D1Database,
    tenant_id: &str,
    customer_id: &str,
    after: u64,
) -> ApiResult<Vec<WindowView>> {
    let mut out = Vec::new();
    for w in store::windows_after(db, tenant_id, customer_id, after).await? {
        let (first_seq, before, first_at) = if w.first_seq > after {
            (
                w.first_seq,
                views::amount(&w.balance_before)?,
                w.first_verified_at,
            )
        } else {
            // The starting point falls inside this window: count from it.
            let start = store::ledger_delta_at(db, tenant_id, customer_id, after)
                .await?
                .ok_or_else(|| ApiError::internal("checkpoint delta vanished"))?;
            let next = store::ledger_delta_at(db, tenant_id, customer_id, after + 1)
                .await?
                .ok_or_else(|| ApiError::internal("window delta vanished"))?;
            (
                after + 1,
                views::amount(start.balance_after.as_deref().unwrap_or("0"))?,
                next.verified_at.unwrap_or(w.first_verified_at),
            )
        };
        let net = views::amount(&w.balance_after)?
            .checked_sub(before)
            .map_err(|e| ApiError::internal(format!("window net: {e}")))?;
        out.push(WindowView {
            deltas_count: w.last_seq + 1 - first_seq,
            net_delta: net,
            first_block_timestamp: views::iso(first_at),
            last_block_timestamp: views::iso(w.last_verified_at),
            window: w.window,
        });
    }
    Ok(out)
}

// ------------------------------------------------------------------ compare

/// `POST /api/v1/balance/compare`.
pub async fn compare(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    let mut f = Fields::from_bytes(&bytes)?;
    let yours_t = f.number("yourBalance", true);
    let yours = f.parse("yourBalance", yours_t, |t| {
        Amount::parse_field("yourBalance", t)
    });
    let theirs_t = f.number("theirBalance", true);
    let theirs = f.parse("theirBalance", theirs_t, |t| {
        Amount::parse_field("theirBalance", t)
    });
    let start_t = f.number("startingBalance", false);
    let starting = f.parse("startingBalance", start_t, |t| {
        Amount::parse_field("startingBalance", t)
    });
    let customer_t = f.string("customerId", false);
    let customer = f.parse("customerId", customer_t, CustomerId::parse);
    f.finish()?;
    let (yours, theirs) = match (yours, theirs) {
        (Some(y), Some(t)) => (y, t),
        _ => return Err(ApiError::internal("validated balances missing")),
    };
    let starting = starting.unwrap_or(Amount::ZERO);
    let (computed, ledger_view) = match &customer {
        None => (starting, None),
        Some(c) => {
            let db = ledger::db(app, ctx.env)?;
            let l = ledger::require_ledger(&db, &ctx.tenant_id, c).await?;
            let now = views::amount(&l.computed_balance)?;
            let computed = derive::computed_balance(starting, Amount::ZERO, now)
                .map_err(|e| ApiError::Unprocessable(format!("computedBalance: {e}")))?;
            (
                computed,
                Some(
                    json!({ "deltasCount": l.verified_count, "latestCheckpoint": l.latest_items_root }),
                ),
            )
        }
    };
    let cmp = derive::compare(computed, yours, theirs)
        .map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    let data = CompareView {
        customer_id: customer.as_ref().map(|c| c.as_str().to_string()),
        starting_balance: starting,
        your_balance: yours,
        their_balance: theirs,
        computed_balance: cmp.computed_balance,
        matches_yours: cmp.matches_yours,
        matches_theirs: cmp.matches_theirs,
        discrepancy: cmp.discrepancy,
        ledger: ledger_view,
    };
    http::balance(200, &data)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompareView {
    customer_id: Option<String>,
    starting_balance: Amount,
    your_balance: Amount,
    their_balance: Amount,
    computed_balance: Amount,
    matches_yours: bool,
    matches_theirs: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    discrepancy: Option<derive::Discrepancy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger: Option<Value>,
}

// ------------------------------------------------------------------ customers

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomerView {
    customer_id: String,
    ledger_id: String,
    total_deltas: u64,
    computed_balance: Amount,
    first_activity_at: Option<String>,
    last_activity_at: Option<String>,
    latest_receipt_id: Option<String>,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending_deltas: Option<u64>,
}

fn customer_view(l: &store::LedgerRow) -> ApiResult<CustomerView> {
    Ok(CustomerView {
        customer_id: l.customer_id.clone(),
        ledger_id: l.ledger_id.clone(),
        total_deltas: l.verified_count,
        computed_balance: views::amount(&l.computed_balance)?,
        first_activity_at: l.first_activity_at.map(views::iso),
        last_activity_at: l.last_activity_at.map(views::iso),
        latest_receipt_id: l.latest_items_root.clone(),
        created_at: views::iso(l.created_at),
        pending_deltas: None,
    })
}

#[derive(Serialize)]
struct CustomersPage {
    customers: Vec<CustomerView>,
    pagination: Value,
}

/// `GET /api/v1/balance/customers`.
pub async fn customers(app: &App, req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let page = Page::for_list(
        http::query_param(&req, "limit")?.as_deref(),
        http::query_param(&req, "offset")?.as_deref(),
    )?;
    let db = ledger::db(app, ctx.env)?;
    let total = store::ledgers_count(&db, &ctx.tenant_id).await?;
    let rows = store::ledgers_page(&db, &ctx.tenant_id, page.limit(), page.offset()).await?;
    let customers: Vec<CustomerView> = rows.iter().map(customer_view).collect::<ApiResult<_>>()?;
    http::balance(
        200,
        &CustomersPage {
            customers,
            pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        },
    )
}

/// `GET /api/v1/balance/customers/:customerId`.
pub async fn customer(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let db = ledger::db(app, ctx.env)?;
    let l = ledger::require_ledger(&db, &ctx.tenant_id, &customer_id).await?;
    let mut view = customer_view(&l)?;
    view.pending_deltas =
        Some(store::queued_count(&db, &ctx.tenant_id, customer_id.as_str()).await?);
    http::balance(200, &view)
}
