//! Proofs anyone can check: checkpoints, receipts, public verification and
//! the log's public face (docs/proofs-api.md).

use bvs_core::hash::Hash32;
use bvs_core::log::HASH_SCHEME;
use bvs_core::types::{CustomerId, Env, Page, Period, WHOLE_TENANT};
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Headers, Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::idempotency::Guard;
use crate::ledger::checkpoint::{CheckpointOf, CheckpointRow};
use crate::ledger::{self, agreement, checkpoint, heads, prove, LogId, LogKey};
use crate::views::{self, CheckpointView};

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
    f.finish()?;
    let period = period.unwrap_or_else(|| Period::containing(now));
    let extra = |row: &CheckpointRow| match &guard {
        Some(g) => g.statements(202, created_text(row)?),
        None => Ok(Vec::new()),
    };
    let created = checkpoint::create(
        app,
        &ctx.tenant_id,
        ctx.log(),
        ctx.plan,
        customer.as_ref(),
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

/// The query's `period` (`YYYY-MM`), if any.
///
/// # Errors
/// 400 naming `period` when it is not a month.
pub fn period_param(req: &Request) -> ApiResult<Option<Period>> {
    Ok(http::query_param(req, "period")?
        .map(|p| Period::parse(&p))
        .transpose()?)
}

/// `GET /api/v1/balance/receipt/:customerId[?period=YYYY-MM]`.
pub async fn receipt(
    app: &App,
    req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let period = period_param(&req)?;
    let origin = origin(&req)?;
    let request = prove::ReceiptRequest {
        tenant_id: &ctx.tenant_id,
        log: ctx.log(),
        customer_id: &customer_id,
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
                ledger::liabilities::for_receipt(
                    app,
                    request.tenant_id,
                    request.log,
                    &customer_id,
                    p,
                )
                .await
            }
            None => Ok(None),
        }
    };
    let (receipt, liabilities) =
        futures_util::future::join(prove::receipt(app, &request), liabilities).await;
    let proven = receipt?;
    let liabilities = liabilities?;
    let mut body = serde_json::to_value(&proven.receipt)
        .map_err(|e| ApiError::internal(format!("receipt: {e}")))?;
    // The receipt names its log (shard) next to core's fields.
    body["log"] = json!(proven.log);
    // Whether a quorum of the log's witnesses cosigned proof.treeHead
    // (issue 28; its cosignature lines are in the note).
    body["proof"]["witnessed"] = json!(proven.witnessed);
    let liabilities = liabilities
        .map(serde_json::value::RawValue::from_string)
        .transpose()
        .map_err(|e| ApiError::internal(format!("liabilities proof: {e}")))?;
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
            Some(t) => Some(prove::Kind::parse(&t).ok_or_else(|| {
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
    let page = prove::RecordsPage {
        limit,
        offset,
        kind,
        statements,
    };
    let (answer, agreement, witnessed) =
        match prove::public_answer(app, root, &page, &origin(&req)?).await {
            Ok(found) => found,
            Err(ApiError::NotFound(why)) => return statement_answer(app, &root, why).await,
            Err(e) => return Err(e),
        };
    let mut body = match agreement {
        None => serde_json::to_value(&answer),
        Some(agreement) => serde_json::to_value(&WithAgreement {
            answer: &answer,
            agreement,
        }),
    }
    .map_err(|e| ApiError::internal(format!("public answer: {e}")))?;
    // Whether a quorum of the log's witnesses cosigned
    // verification.treeHead (issue 28).
    body["verification"]["witnessed"] = json!(witnessed);
    http::balance(200, &body)
}

/// A root no checkpoint, submission or receipt has: a liabilities
/// statement's hash (issue 31, docs/liabilities.md §9), or the 404.
async fn statement_answer(app: &App, root: &Hash32, why: String) -> ApiResult<Response> {
    match ledger::liabilities::public_answer(app, root).await? {
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
    agreement: ledger::agreement::CheckpointAgreement,
}

// ------------------------------------------------------------------ the log

fn text_response(body: String, cache: &str) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", "text/plain; charset=utf-8")?;
    headers.set("cache-control", cache)?;
    Ok(Response::ok(body)?.with_headers(headers))
}

/// `GET /api/v1/logs`: the log list, one entry per shard of each
/// environment (like the Certificate Transparency log list): its
/// environment, shard, name in paths, origin, verifier key and URLs.
pub async fn log_list(app: &App, req: &Request) -> ApiResult<Response> {
    let service = origin(req)?;
    let mut logs = Vec::new();
    let sandbox = ledger::witness::policy(app, Env::Sandbox)?;
    let production = ledger::witness::policy(app, Env::Production)?;
    for at in ledger::shard::all(app) {
        let key = LogKey::load(app, at)?;
        let mut entry = json!(prove::log_ref(at, &key.origin, &service));
        entry["verifierKey"] = json!(key.verifier_key()?);
        entry["algorithm"] = json!("ed25519");
        entry["hashScheme"] = json!(HASH_SCHEME.name());
        // The C2SP tlog-tiles prefix (issue 28), ending in `/` like the CT
        // log list's `monitoring_url`: append `checkpoint` or `tile/...`.
        entry["monitoringUrl"] = json!(format!("{service}/log/{}/", at.path_name()));
        // The witnesses whose cosignatures make a head witnessed: k of n
        // (null for nested groups) and the C2SP tlog-policy text.
        let policy = match at.env {
            Env::Sandbox => &sandbox,
            Env::Production => &production,
        };
        let (threshold, text) = ledger::witness::published(policy, &key.verifier_key()?)?;
        entry["witnessPolicy"] = json!(threshold);
        entry["witnessPolicyText"] = json!(text);
        logs.push(entry);
    }
    let resp = http::balance(200, &json!({ "logs": logs }))?;
    resp.headers().set("cache-control", "public, max-age=300")?;
    Ok(resp)
}

/// `GET /api/v1/log/:env/checkpoint`: the latest signed tree head, with
/// the witnesses' cosignature lines collected for it.
pub async fn log_checkpoint(app: &App, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let (head, _) = ledger::witness::latest_published(app, log).await?;
    text_response(head.note, "public, max-age=5")
}

/// `GET /api/v1/logs/witnesses`: each log's witnesses, what each last
/// cosigned and how its last attempt went (issue 28; docs/proofs-api.md
/// "Witnesses").
pub async fn log_witnesses(app: &App) -> ApiResult<Response> {
    let mut logs = Vec::new();
    for at in ledger::shard::all(app) {
        logs.push(ledger::witness::status(app, at).await?);
    }
    let resp = http::balance(200, &json!({ "logs": logs }))?;
    resp.headers().set("cache-control", "no-store")?;
    Ok(resp)
}

/// `GET /api/v1/log/:env/key`: the verifier key of the log.
pub async fn log_key(app: &App, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let key = LogKey::load(app, log)?;
    let resp = http::balance(
        200,
        &json!({
            "origin": key.origin, "verifierKey": key.verifier_key()?, "algorithm": "ed25519",
            "hashScheme": HASH_SCHEME.name(),
        }),
    )?;
    resp.headers()
        .set("cache-control", "public, max-age=3600")?;
    Ok(resp)
}

fn size_param(req: &Request, name: &str) -> ApiResult<Option<u64>> {
    let max = bvs_core::log::LOG_SIZE_MAX;
    http::query_param(req, name)?
        .map(|v| {
            v.parse::<u64>().ok().filter(|n| *n <= max).ok_or_else(|| {
                ApiError::field(
                    name,
                    format!("must be a whole number from 0 to {max} (a recorded tree size)"),
                )
            })
        })
        .transpose()
}

/// `GET /api/v1/log/:env/heads?from=&limit=`.
pub async fn log_heads(app: &App, req: Request, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let db = ledger::db(app, log)?;
    let from = size_param(&req, "from")?.unwrap_or(0);
    let page = Page::for_list(http::query_param(&req, "limit")?.as_deref(), None)?;
    let heads: Vec<Value> = heads::heads_from(&db, from, page.limit())
        .await?
        .into_iter()
        .map(|h| {
            json!({
                "treeSize": h.tree_size, "root": h.root, "note": h.note,
                "noteHash": h.note_hash, "createdAt": views::iso(h.created_at),
            })
        })
        .collect();
    http::balance(
        200,
        &json!({ "hashScheme": HASH_SCHEME.name(), "heads": heads }),
    )
}

/// `GET /api/v1/log/:env/proof/inclusion?itemHash=&treeSize=`.
pub async fn log_inclusion(app: &App, req: Request, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let db = ledger::db(app, log)?;
    let item = http::query_param(&req, "itemHash")?
        .ok_or_else(|| ApiError::field("itemHash", "is required"))?;
    let item = Hash32::parse_field("itemHash", &item)?;
    let head = match size_param(&req, "treeSize")? {
        Some(size) => heads::head_sized(&db, size, "treeSize").await?,
        None => ledger::head_or_init(app, log).await?,
    };
    let leaf = heads::leaf_of_item(&db, log, &item).await?;
    if leaf.leaf_index >= head.tree_size {
        return Err(ApiError::NotFound(format!(
            "itemHash {item} was appended after tree size {}",
            head.tree_size
        )));
    }
    let proof = ledger::inclusion_proofs(&db, &[leaf.leaf_index], head.tree_size).await?;
    http::balance(
        200,
        &json!({
            "hashScheme": HASH_SCHEME.name(),
            "itemHash": item,
            "leafIndex": leaf.leaf_index,
            "treeSize": head.tree_size,
            "inclusionProof": proof.first().map(|p| p.iter().map(Hash32::to_hex).collect::<Vec<_>>()).unwrap_or_default(),
            "treeHead": head.note,
        }),
    )
}

/// `GET /api/v1/log/:env/proof/consistency?from=&to=`.
pub async fn log_consistency(app: &App, req: Request, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let db = ledger::db(app, log)?;
    let from = size_param(&req, "from")?.ok_or_else(|| ApiError::field("from", "is required"))?;
    let to = match size_param(&req, "to")? {
        Some(t) => t,
        None => ledger::head_or_init(app, log).await?.tree_size,
    };
    if from > to {
        return Err(ApiError::field("from", "must not be larger than to"));
    }
    let old = heads::head_sized(&db, from, "from").await?;
    let new = heads::head_sized(&db, to, "to").await?;
    let proof = ledger::consistency_proof(&db, from, to).await?;
    http::balance(
        200,
        &json!({
            "hashScheme": HASH_SCHEME.name(),
            "from": from,
            "to": to,
            "consistencyProof": proof.iter().map(Hash32::to_hex).collect::<Vec<_>>(),
            "fromTreeHead": old.note,
            "toTreeHead": new.note,
        }),
    )
}
