//! Emit: a delta, a batch of deltas, and a delta's status (docs/balance.md).

use bvs_core::amount::Amount;
use bvs_core::conditions::Conditions;
use bvs_core::hash::Hash32;
use bvs_core::time::parse_iso_ms;
use bvs_core::types::{Asset, CustomerId, Reason, ReferenceId, BATCH_DELTAS_MAX};
use bvs_core::FieldError;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth;
use crate::auth::KeyContext;
use crate::emit::prepare::{self, DeltaInput, Prepared};
use crate::emit::{self, SubmissionKind, Submitter};
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::idempotency;
use crate::ids::{AnchorId, SubmissionId};
use crate::profile::EmitProbe;
use crate::views::EmitRecord;

// ------------------------------------------------------------------ emit

fn read_delta(f: &mut Fields) -> Option<DeltaInput> {
    let customer = f.string("customerId", true);
    // `all` names the whole-tenant checkpoint: no ledger may have it.
    let customer_id = f.parse("customerId", customer, CustomerId::parse_new);
    let delta_text = f.number("delta", true);
    let delta = f.parse("delta", delta_text, |t| Amount::parse_delta("delta", t));
    let asset_text = f.string("asset", false);
    let asset = f
        .parse("asset", asset_text, |t| Asset::parse("asset", t))
        .unwrap_or_default();
    if let Some(d) = delta {
        if let Err(e) = asset.check("delta", d) {
            f.problem("delta", e.reason);
        }
    }
    let conditions = read_conditions(f, &asset);
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
        asset,
        reason: reason?,
        reference_id,
        metadata,
        declared_at,
        conditions,
    })
}

/// A delta's optional `conditions` object (issue 43, docs/balance.md
/// "Conditions"): `balanceAtLeast`, a number within the asset's
/// precision, and `expectedSequence`, a whole number ≥ 0. Each problem
/// names its member (`conditions.balanceAtLeast`, or
/// `deltas[i].conditions.balanceAtLeast` in a batch).
fn read_conditions(f: &mut Fields, asset: &Asset) -> Conditions {
    let Some(raw) = f.raw("conditions").map(str::to_string) else {
        return Conditions::default();
    };
    let prefix = f.name("conditions.");
    let parsed = serde_json::from_str::<Box<RawValue>>(&raw)
        .ok()
        .and_then(|raw| Fields::from_raw(&raw, &prefix).ok());
    let Some(mut c) = parsed.filter(|_| raw.starts_with('{')) else {
        f.problem("conditions", "must be a JSON object");
        return Conditions::default();
    };
    c.only(&["balanceAtLeast", "expectedSequence"]);
    let floor_text = c.number("balanceAtLeast", false);
    let balance_at_least = c.parse("balanceAtLeast", floor_text, |t| {
        let floor = Amount::parse(t)
            .map_err(|e| FieldError::new("balanceAtLeast", format!("must be a number: {e}")))?;
        asset.check("balanceAtLeast", floor)?;
        Ok(floor)
    });
    let seq_text = c.number("expectedSequence", false);
    let expected_sequence = c.parse("expectedSequence", seq_text, |t| {
        t.parse::<u64>().map_err(|_| {
            FieldError::new(
                "expectedSequence",
                "must be a whole number ≥ 0: the asset's verified deltas so far",
            )
        })
    });
    f.absorb(c);
    Conditions {
        balance_at_least,
        expected_sequence,
    }
}

/// A single emit's body, read before its key: its bytes and the delta
/// they hold (or why not: the body's errors come after the key's).
async fn read_single(req: &mut Request) -> ApiResult<(Vec<u8>, ApiResult<DeltaInput>)> {
    let bytes = http::body_bytes(req, http::BODY_BYTES_MAX).await?;
    let input = Fields::from_bytes(&bytes).and_then(|mut f| {
        let input = read_delta(&mut f);
        f.finish()?;
        input.ok_or_else(|| ApiError::internal("validated delta missing"))
    });
    Ok((bytes, input))
}

/// `POST /api/v1/balance/delta`, each step once and in order: the body is
/// read and its delta prepared (`emit::prepare`); the key is
/// authenticated (`auth::authenticate_emit`), its read also writing the
/// proof-root index row when the isolate holds a live lease of the key's
/// rate limit (one control-database call instead of two, issue 16); then
/// the Idempotency-Key's claim (`idempotency::once`) and the write
/// (`emit`), whose answer is built before it (`views`). The
/// body's errors still come after the key's. The DEV_MODE stops and fault
/// points: `profile::EmitProbe`.
pub async fn emit(app: &App, mut req: Request) -> ApiResult<Response> {
    let probe = EmitProbe::of(app, &req);
    let now = app.now_ms;
    let first = probe.around_auth(app, async {
        let body = read_single(&mut req).await.map(|(bytes, input)| {
            let prepared = input.and_then(|input| prepare::prepare(input, 0, now));
            let prepared = prepared.map(|mut p| {
                emit::ledger_roots(std::slice::from_mut(&mut p));
                p
            });
            (bytes, prepared)
        });
        let root = body.as_ref().ok().and_then(|(_, p)| p.as_ref().ok());
        let roots: Vec<Hash32> = root
            .map(|p| prepare::items_root(std::slice::from_ref(p)))
            .into_iter()
            .collect();
        let pool = http::header(&req, "x-credit-pool-id");
        let key = auth::authenticate_emit(app, &req, &roots, pool.as_deref()).await?;
        Ok((body, key, idempotency::key(&req)))
    });
    let (body, key, idem) = match first.await? {
        Ok(first) => first,
        Err(stopped) => return Ok(stopped),
    };
    let idem = idem?;
    let (bytes, prepared) = body?;
    let auth::EmitKey {
        ctx,
        root_indexed,
        contract,
    } = key;
    let ctx = &ctx;
    idempotency::once(
        app,
        super::idempotent::owner(app, ctx)?,
        idem,
        probe.holds_claim(),
        "POST /api/v1/balance/delta",
        &bytes,
        |claim| async move {
            let mut prepared = prepared?;
            let contract = contract?;
            emit::for_tenant(std::slice::from_mut(&mut prepared), &ctx.tenant_id);
            let by = Submitter::new(
                (&ctx.tenant_id, ctx.log(), ctx.plan),
                &contract.id,
                root_indexed,
                probe,
            );
            let customer = prepared.row.customer_id.clone();
            let single = std::slice::from_ref(&prepared);
            emit::submit(
                app,
                &by,
                SubmissionKind::Single,
                single,
                claim.as_deref(),
                Some(&customer),
                |_, root| {
                    let estimate = (root, emit::ESTIMATE_PENDING);
                    let record = EmitRecord::queued(&prepared.row, prepared.delta, estimate, now);
                    Ok((202, http::balance_text(202, &record)?))
                },
            )
            .await
        },
    )
    .await
}

/// `POST /api/v1/balance/delta/batch`. As a single emit does, it reads
/// its body and prepares its deltas before the key (issue 42), so the
/// key's read indexes the batch's proof roots (`auth::authenticate_emit`:
/// one control-database call, not two); the body's errors still come after
/// the key's. A batch with an Idempotency-Key indexes nothing there (a
/// replay would index roots nobody writes): its write indexes them.
pub async fn emit_batch(app: &App, mut req: Request) -> ApiResult<Response> {
    let probe = EmitProbe::of(app, &req);
    let pool = http::header(&req, "x-credit-pool-id");
    let idem = idempotency::key(&req);
    let body = http::body_bytes(&mut req, http::BODY_BYTES_MAX)
        .await
        .map(|bytes| {
            let batch = prepare_batch(&bytes, app.now_ms);
            (bytes, batch)
        });
    let roots = match (&body, &idem) {
        (Ok((_, Ok(b))), Ok(None)) => b.roots(),
        _ => Vec::new(),
    };
    let key = auth::authenticate_emit(app, &req, &roots, pool.as_deref()).await?;
    let idem = idem?;
    let (bytes, batch) = body?;
    let auth::EmitKey {
        ctx,
        contract,
        root_indexed,
    } = key;
    let (ctx, bytes) = (&ctx, &bytes);
    idempotency::once(
        app,
        super::idempotent::owner(app, ctx)?,
        idem,
        probe.holds_claim(),
        "POST /api/v1/balance/delta/batch",
        bytes,
        |claim| async move {
            let claim = claim.as_deref();
            let PreparedBatch {
                mut results,
                mut prepared,
                indexes,
                problems,
            } = batch?;
            let contract = contract?;
            if prepared.is_empty() {
                return Err(ApiError::Validation(problems));
            }
            emit::for_tenant(&mut prepared, &ctx.tenant_id);
            let by = Submitter::new(
                (&ctx.tenant_id, ctx.log(), ctx.plan),
                &contract.id,
                root_indexed,
                probe,
            );
            let respond = |batch_id: &SubmissionId, root: &Hash32| {
                for (p, i) in prepared.iter().zip(&indexes) {
                    results[*i] = queued_item(*i, p, root);
                }
                let data = batch_data(batch_id.clone(), root, &prepared, results);
                Ok((202, http::balance_text(202, &data)?))
            };
            emit::submit(
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

/// A batch's body read, its valid deltas prepared (anchor ids, item
/// hashes, ledger roots; not yet the tenant's ledger ids) with their
/// indexes, a FAILED result in place of each bad item, and every problem.
struct PreparedBatch {
    results: Vec<BatchResult>,
    prepared: Vec<Prepared>,
    indexes: Vec<usize>,
    problems: Vec<FieldProblem>,
}

impl PreparedBatch {
    /// Its proof roots: the items root and each ledger's (none without a
    /// valid delta).
    fn roots(&self) -> Vec<Hash32> {
        if self.prepared.is_empty() {
            return Vec::new();
        }
        emit::roots_of(&self.prepared, &prepare::items_root(&self.prepared))
    }
}

/// Reads a batch body and prepares its valid deltas (nothing of it
/// depends on the key).
///
/// # Errors
/// A body without 1 to `BATCH_DELTAS_MAX` deltas; no randomness for ids.
fn prepare_batch(bytes: &[u8], now_ms: u64) -> ApiResult<PreparedBatch> {
    let items = batch_items(bytes)?;
    let ReadBatch {
        results,
        valid,
        problems,
    } = read_batch(&items);
    let mut prepared = Vec::with_capacity(valid.len());
    let mut indexes = Vec::with_capacity(valid.len());
    for (position, (i, input)) in valid.into_iter().enumerate() {
        let mut p = prepare::prepare(input, position as u64, now_ms)?;
        p.asset_field = format!("deltas[{i}].asset");
        prepared.push(p);
        indexes.push(i);
    }
    emit::ledger_roots(&mut prepared);
    Ok(PreparedBatch {
        results,
        prepared,
        indexes,
        problems,
    })
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
        item_hash: Some(p.row.item_hash),
        receipt_id: Some(*root),
        items_root: Some(*root),
        status: "QUEUED",
        error: None,
    }
}

fn batch_data(
    batch_id: SubmissionId,
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
        items_root: *root,
        receipt_id: *root,
        item_hashes: prepared.iter().map(|p| p.row.item_hash).collect(),
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
    anchor_id: Option<AnchorId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    item_hash: Option<Hash32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt_id: Option<Hash32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    items_root: Option<Hash32>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchData {
    batch_id: SubmissionId,
    total_queued: usize,
    total_failed: usize,
    items_root: Hash32,
    receipt_id: Hash32,
    item_hashes: Vec<Hash32>,
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
pub async fn status(app: &App, ctx: KeyContext, anchor_id: &AnchorId) -> ApiResult<Response> {
    let data = emit::status(app, &ctx.tenant_id, ctx.log(), anchor_id).await?;
    http::balance(200, &data)
}
