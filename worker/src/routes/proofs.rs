//! Proofs anyone can check: checkpoints, receipts, public verification and
//! the log's public face (docs/proofs-api.md).

use bvs_core::amount::Amount;
use bvs_core::derive::{self, DerivedDelta};
use bvs_core::frontier::Frontier;
use bvs_core::hash::{DeltaContent, Hash32};
use bvs_core::log::HASH_SCHEME;
use bvs_core::merkle;
use bvs_core::receipt::{ProvenItem, Receipt, ReceiptProof, ReceiptVerification};
use bvs_core::types::{CustomerId, Env, Page, Period};
use bvs_core::LeafIndex;
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Headers, Request, Response};

use crate::app::App;
use crate::auth::{self, limit};
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ids;
use crate::ledger::{self, LogKey};
use crate::routes::balance::{ledger_id, ring};
use crate::store::ledger as store;
use crate::views::{self, CheckpointView};

/// A receipt lists at most this many deltas; beyond, ask per period.
pub const RECEIPT_DELTAS_MAX: u64 = 5_000;
/// Records per page of the public verify route.
pub const VERIFY_RECORDS_MAX: u64 = 1_000;
/// Public routes: per client address, 20 requests/s with a burst of 60.
pub const PUBLIC_RATE: limit::Rate = limit::Rate {
    rate_per_sec: 20.0,
    burst: 60.0,
};

fn origin(req: &Request) -> ApiResult<String> {
    let url = req.url()?;
    Ok(url.origin().ascii_serialization())
}

fn period_bounds(p: &Period) -> (u64, u64) {
    let start = u64::try_from(p.start_ms()).unwrap_or(0);
    let end = u64::try_from(p.end_ms()).unwrap_or(u64::MAX);
    (start, end)
}

// ------------------------------------------------------------------ checkpoints

/// `POST /api/v1/balance/checkpoint`: fixes the covered deltas and their
/// root now (202, QUEUED); the sequencer commits the root to the log.
pub async fn checkpoint_create(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}".to_vec()
    } else {
        bytes
    };
    let mut f = Fields::from_bytes(&bytes)?;
    let customer_t = f.string("customerId", false);
    let customer = f.parse("customerId", customer_t, CustomerId::parse);
    let period_t = f.string("period", false);
    let now = i64::try_from(app.now_ms).unwrap_or(i64::MAX);
    let period = f.parse("period", period_t, |t| Period::parse_not_in_future(t, now));
    f.finish()?;
    let period = period.unwrap_or_else(|| Period::containing(now));
    let db = ledger::db(app, ctx.env)?;
    if let Some(c) = &customer {
        ledger::require_ledger(&db, &ctx.tenant_id, c).await?;
    }
    // The covered deltas' root, count and span were kept up to date by the
    // sequencer (bvs_core::frontier): O(log n) here, at any history size.
    let period_text = period.to_string();
    let covered = match &customer {
        Some(c) => store::window(&db, &ctx.tenant_id, c.as_str(), &period_text)
            .await?
            .map(|w| -> ApiResult<(String, u64, Amount, u64, u64)> {
                let net = views::amount(&w.balance_after)?
                    .checked_sub(views::amount(&w.balance_before)?)
                    .map_err(|e| ApiError::internal(format!("net delta: {e}")))?;
                Ok((
                    w.frontier,
                    w.last_seq + 1 - w.first_seq,
                    net,
                    w.first_leaf,
                    w.last_leaf,
                ))
            })
            .transpose()?,
        None => store::tenant_window(&db, &ctx.tenant_id, &period_text)
            .await?
            .map(|w| -> ApiResult<(String, u64, Amount, u64, u64)> {
                Ok((
                    w.frontier,
                    w.deltas_count,
                    views::amount(&w.net_delta)?,
                    w.first_leaf,
                    w.last_leaf,
                ))
            })
            .transpose()?,
    };
    let who = customer
        .as_ref()
        .map_or("all", CustomerId::as_str)
        .to_string();
    let Some((frontier, count, net, first, last)) = covered else {
        return Err(ApiError::Unprocessable(format!(
            "No verified deltas to checkpoint for customer {who} in period {period} (deltas belong to the \
             period in which they were verified)"
        )));
    };
    let frontier = Frontier::from_text(&frontier).map_err(ApiError::internal)?;
    if frontier.size() != count {
        return Err(ApiError::internal(format!(
            "window frontier covers {} deltas, aggregates say {count}",
            frontier.size()
        )));
    }
    let row = store::CheckpointRow {
        id: ids::new_id("chk")?,
        tenant_id: ctx.tenant_id.clone(),
        customer_id: who,
        period: period.to_string(),
        merkle_root: frontier.root().to_hex(),
        delta_count: count,
        net_delta: net.to_string(),
        from_index: first,
        to_index: last,
        status: "QUEUED".to_string(),
        created_at: app.now_ms,
        committed_at: None,
        leaf_index: None,
        tree_size: None,
    };
    store::insert_checkpoint(&db, &row).await?;
    ring(app, ctx.env).await;
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Created {
        #[serde(flatten)]
        checkpoint: CheckpointView,
        message: String,
    }
    http::balance(
        202,
        &Created {
            checkpoint: CheckpointView::from_row(&row, None),
            message: "Checkpoint queued: its merkleRoot is fixed over the deltas listed; a checkpoint.verified \
                      webhook follows when the root is committed to the signed log (status COMMITTED)."
                .to_string(),
        },
    )
}

/// `GET /api/v1/balance/checkpoints`.
pub async fn checkpoint_list(app: &App, req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let q = |n: &str| http::query_param(&req, n);
    let customer = q("customerId")?;
    if let Some(c) = &customer {
        if c != "all" {
            CustomerId::parse(c)?;
        }
    }
    let period = q("period")?;
    if let Some(p) = &period {
        Period::parse(p)?;
    }
    let page = Page::for_list(q("limit")?.as_deref(), q("offset")?.as_deref())?;
    let db = ledger::db(app, ctx.env)?;
    let (rows, total) = store::checkpoints_page(
        &db,
        &ctx.tenant_id,
        customer.as_deref(),
        period.as_deref(),
        page.limit(),
        page.offset(),
    )
    .await?;
    let env = ctx.env.as_str();
    let mut checkpoints = Vec::with_capacity(rows.len());
    for row in &rows {
        let tx = match row.tree_size {
            Some(size) => store::head_at(&db, size).await?.map(|h| h.note_hash),
            None => None,
        };
        let previous = match row.tree_size {
            Some(size) => store::previous_committed(&db, &ctx.tenant_id, &row.customer_id, row.created_at)
                .await?
                .and_then(|p| {
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
            checkpoint: CheckpointView::from_row(row, tx.as_deref()),
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

fn derived(row: &store::DeltaRow) -> ApiResult<DerivedDelta> {
    let verified_at = row
        .verified_at
        .ok_or_else(|| ApiError::internal("receipt delta is not verified"))?;
    let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Ok(DerivedDelta {
        anchor_id: row.anchor_id.clone(),
        item_hash: store::parse_hash(&row.item_hash)?,
        items_root: store::parse_hash(&row.items_root)?,
        receipt_id: store::parse_hash(&row.items_root)?,
        delta: views::amount(&row.delta)?,
        reason: row.reason.clone(),
        reference_id: row.reference_id.clone(),
        window: Period::containing(ms(verified_at)),
        declared_timestamp: ms(row.declared_at),
        block_timestamp: ms(verified_at),
        data_purged: row.data_purged != 0,
        verified: true,
        seq: row.ledger_seq.unwrap_or(0),
        balance_after: views::amount(row.balance_after.as_deref().unwrap_or("0"))?,
    })
}

fn raw_content(row: &store::DeltaRow) -> ApiResult<Option<DeltaContent>> {
    if row.data_purged != 0 {
        return Ok(None);
    }
    let Some(reason) = row.reason.clone() else {
        return Ok(None);
    };
    Ok(Some(DeltaContent {
        anchor_id: row.anchor_id.clone(),
        customer_id: row.customer_id.clone(),
        delta: views::amount(&row.delta)?,
        reason,
        reference_id: row.reference_id.clone(),
        metadata: row
            .metadata
            .as_deref()
            .map(bvs_core::json::parse)
            .transpose()
            .map_err(|e| ApiError::internal(format!("stored metadata: {e}")))?,
        declared_timestamp: views::iso(row.declared_at),
    }))
}

/// `GET /api/v1/balance/receipt/:customerId[?period=YYYY-MM]`.
pub async fn receipt(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let period = http::query_param(&req, "period")?
        .map(|p| Period::parse(&p))
        .transpose()?;
    let db = ledger::db(app, ctx.env)?;
    let l = ledger::require_ledger(&db, &ctx.tenant_id, &customer_id).await?;
    let range = match &period {
        Some(p) => store::window(&db, &ctx.tenant_id, customer_id.as_str(), &p.to_string())
            .await?
            .map(|w| (w.first_seq, w.last_seq, w.balance_before)),
        None => (l.verified_count > 0).then(|| (1, l.verified_count, "0".to_string())),
    };
    let Some((first_seq, last_seq, before)) = range else {
        return Err(ApiError::NotFound(format!(
            "No verified deltas for customer {}{}",
            customer_id.as_str(),
            period
                .map(|p| format!(" in period {p}"))
                .unwrap_or_default()
        )));
    };
    let count = last_seq + 1 - first_seq;
    if count > RECEIPT_DELTAS_MAX {
        return Err(ApiError::Unprocessable(format!(
            "This receipt would list {count} deltas; receipts list at most {RECEIPT_DELTAS_MAX}. \
             Ask for one period at a time with ?period=YYYY-MM"
        )));
    }
    let rows = store::ledger_deltas(
        &db,
        &ctx.tenant_id,
        customer_id.as_str(),
        first_seq,
        last_seq,
    )
    .await?;
    let head = store::latest_head(&db)
        .await?
        .ok_or_else(|| ApiError::internal("a ledger with verified deltas but no tree head"))?;
    let leaves: Vec<u64> = rows
        .iter()
        .map(|r| {
            r.leaf_index
                .ok_or_else(|| ApiError::internal("verified delta without leaf"))
        })
        .collect::<ApiResult<_>>()?;
    let proofs = ledger::inclusion_proofs(&db, &leaves, head.tree_size).await?;
    let mut deltas = Vec::with_capacity(rows.len());
    let mut items = Vec::with_capacity(rows.len());
    for ((row, proof), leaf) in rows.iter().zip(proofs).zip(&leaves) {
        let d = derived(row)?;
        items.push(ProvenItem {
            anchor_id: row.anchor_id.clone(),
            item_hash: d.item_hash,
            leaf_index: LeafIndex(*leaf),
            inclusion_proof: proof,
            delta: d.delta,
            raw: raw_content(row)?,
        });
        deltas.push(d);
    }
    let item_hashes: Vec<Hash32> = deltas.iter().map(|d| d.item_hash).collect();
    let root = merkle::root(&item_hashes);
    let starting = views::amount(&before)?;
    let final_balance = match rows.last() {
        Some(r) => views::amount(r.balance_after.as_deref().unwrap_or("0"))?,
        None => starting,
    };
    let window_summaries = derive::window_summaries(&deltas)
        .map_err(|e| ApiError::internal(format!("windows: {e}")))?;
    let verify_url = format!("{}/api/v1/verify/{}", origin(&req)?, root.to_hex());
    let receipt = Receipt {
        customer_id: customer_id.as_str().to_string(),
        period: period.map(|p| p.to_string()),
        generated_at: views::iso(app.now_ms),
        deltas_count: deltas.len() as u64,
        starting_balance: starting,
        final_balance,
        items_root: root,
        receipt_id: root,
        proof_root: root,
        latest_checkpoint: rows.last().map(|r| r.items_root.clone()),
        deltas,
        window_summaries,
        verification: ReceiptVerification {
            message: format!(
                "itemsRoot is the RFC 9162 Merkle root of itemHashes in ledger order. Each delta's inclusion \
                 proof (log leaves hashed as proof.hashScheme names) leads to the signed tree head in \
                 proof.treeHead; check it with the public key at \
                 /api/v1/log/{}/key, or anywhere at {verify_url}.",
                ctx.env.as_str()
            ),
            item_hashes,
            proof_root: root,
            verify_url,
        },
        proof: ReceiptProof {
            hash_scheme: HASH_SCHEME.name().to_string(),
            tree_head: head.note,
            public_key: LogKey::load(app, ctx.env)?.verifier_key()?,
            items,
        },
    };
    store::record_receipt(
        &db,
        &store::ReceiptRow {
            items_root: root.to_hex(),
            tenant_id: ctx.tenant_id.clone(),
            customer_id: customer_id.as_str().to_string(),
            period: receipt.period.clone(),
            from_seq: first_seq,
            to_seq: last_seq,
            delta_count: count,
            generated_at: app.now_ms,
        },
    )
    .await?;
    http::balance(200, &receipt)
}

// ------------------------------------------------------------------ public verify

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    anchor_id: String,
    item_hash: String,
    ledger_id: String,
    delta: Amount,
    leaf_index: Option<u64>,
    inclusion_proof: Vec<String>,
    block_timestamp: Option<String>,
    declared_timestamp: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    kind: &'static str,
    environment: &'static str,
    proof_root: String,
    item_count: u64,
    net_amount: Amount,
    period: Option<String>,
    ledger_id: Option<String>,
    first_verified_at: Option<String>,
    last_verified_at: Option<String>,
    status: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckpointLeaf {
    item_hash: String,
    leaf_index: u64,
    inclusion_proof: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Verification {
    public_ledger_url: String,
    hash_scheme: &'static str,
    tree_head: String,
    tree_size: u64,
    public_key: String,
    items_root: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_leaf: Option<CheckpointLeaf>,
    message: String,
}

#[derive(Serialize)]
struct PublicVerification {
    verified: bool,
    summary: Summary,
    records: Vec<Record>,
    verification: Verification,
    pagination: Value,
}

enum Found {
    Submission(store::SubmissionRow),
    Checkpoint(store::CheckpointRow),
    Receipt(store::ReceiptRow),
}

async fn find_root(db: &worker::D1Database, root: &str) -> ApiResult<Option<Found>> {
    if let Some(s) = store::submissions_by_root(db, root)
        .await?
        .into_iter()
        .next()
    {
        return Ok(Some(Found::Submission(s)));
    }
    if let Some(c) = store::checkpoints_by_root(db, root)
        .await?
        .into_iter()
        .next()
    {
        return Ok(Some(Found::Checkpoint(c)));
    }
    if let Some(r) = store::receipts_by_root(db, root).await?.into_iter().next() {
        return Ok(Some(Found::Receipt(r)));
    }
    Ok(None)
}

fn client_address(req: &Request) -> String {
    http::header(req, "cf-connecting-ip").unwrap_or_else(|| "unknown".to_string())
}

/// `GET /api/v1/verify/:proofRoot`: public; the proof root is the key.
pub async fn public_verify(app: &App, req: Request, root_text: &str) -> ApiResult<Response> {
    limit::take(app, &format!("ip:{}", client_address(&req)), PUBLIC_RATE).await?;
    let root = Hash32::parse(root_text)
        .map_err(|_| {
            ApiError::field(
                "proofRoot",
                "must be 64 hex characters (a SHA-256 Merkle root)",
            )
        })?
        .to_hex();
    let limit = match http::query_param(&req, "limit")? {
        None => VERIFY_RECORDS_MAX,
        Some(t) => t
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=VERIFY_RECORDS_MAX).contains(n))
            .ok_or_else(|| {
                ApiError::field(
                    "limit",
                    format!("must be a whole number from 1 to {VERIFY_RECORDS_MAX}"),
                )
            })?,
    };
    let offset = match http::query_param(&req, "offset")? {
        None => 0,
        Some(t) => t
            .parse::<u64>()
            .map_err(|_| ApiError::field("offset", "must be a whole number, 0 or more"))?,
    };
    let mut found = None;
    for env in [Env::Sandbox, Env::Production] {
        let db = ledger::db(app, env)?;
        if let Some(f) = find_root(&db, &root).await? {
            found = Some((env, db, f));
            break;
        }
    }
    let (env, db, found) = found.ok_or_else(|| {
        ApiError::NotFound(format!("No proof root {root} was issued by this service"))
    })?;
    let head = ledger::head_or_init(app, env).await?;
    let (kind, rows, period, status, total, net, checkpoint) = match &found {
        Found::Submission(s) => {
            let rows = store::deltas_of_submission(&db, &s.id).await?;
            let all_verified = rows.iter().all(|r| r.status == "VERIFIED");
            let net = sum(&rows)?;
            let n = rows.len() as u64;
            let status = if all_verified { "VERIFIED" } else { "QUEUED" };
            ("submission", rows, None, status.to_string(), n, net, None)
        }
        Found::Receipt(r) => {
            let rows =
                store::ledger_deltas(&db, &r.tenant_id, &r.customer_id, r.from_seq, r.to_seq)
                    .await?;
            let net = sum(&rows)?;
            (
                "receipt",
                rows,
                r.period.clone(),
                "VERIFIED".to_string(),
                r.delta_count,
                net,
                None,
            )
        }
        Found::Checkpoint(c) => {
            let p = Period::parse(&c.period)?;
            let (from_ms, to_ms) = period_bounds(&p);
            let rows = store::deltas_in_leaf_range(&db, c, from_ms, to_ms, offset, limit).await?;
            let net = views::amount(&c.net_delta)?;
            (
                "checkpoint",
                rows,
                Some(c.period.clone()),
                c.status.clone(),
                c.delta_count,
                net,
                Some(c.clone()),
            )
        }
    };
    let leaves: Vec<u64> = rows.iter().filter_map(|r| r.leaf_index).collect();
    let proofs = ledger::inclusion_proofs(&db, &leaves, head.tree_size).await?;
    let mut proofs = proofs.into_iter();
    let mut records = Vec::with_capacity(rows.len());
    for r in &rows {
        let proof = match r.leaf_index {
            Some(_) => proofs.next().unwrap_or_default(),
            None => Vec::new(),
        };
        records.push(Record {
            anchor_id: r.anchor_id.clone(),
            item_hash: r.item_hash.clone(),
            ledger_id: ledger_id(&r.tenant_id, &r.customer_id),
            delta: views::amount(&r.delta)?,
            leaf_index: r.leaf_index,
            inclusion_proof: proof.iter().map(Hash32::to_hex).collect(),
            block_timestamp: r.verified_at.map(views::iso),
            declared_timestamp: views::iso(r.declared_at),
        });
    }
    let item_hashes: Vec<Hash32> = rows
        .iter()
        .map(|r| store::parse_hash(&r.item_hash))
        .collect::<ApiResult<_>>()?;
    let checkpoint_leaf = match checkpoint
        .as_ref()
        .and_then(|c| c.leaf_index.map(|l| (c, l)))
    {
        Some((c, leaf)) => {
            let proof = ledger::inclusion_proofs(&db, &[leaf], head.tree_size).await?;
            Some(CheckpointLeaf {
                item_hash: c.merkle_root.clone(),
                leaf_index: leaf,
                inclusion_proof: proof
                    .first()
                    .map(|p| p.iter().map(Hash32::to_hex).collect())
                    .unwrap_or_default(),
            })
        }
        None => None,
    };
    let mut ledger_ids: Vec<&str> = records.iter().map(|r| r.ledger_id.as_str()).collect();
    ledger_ids.sort_unstable();
    ledger_ids.dedup();
    let verified = match &checkpoint {
        Some(c) => c.status == "COMMITTED" && checkpoint_leaf.is_some(),
        None => !records.is_empty() && records.iter().all(|r| r.leaf_index.is_some()),
    };
    let base = origin(&req)?;
    let data = PublicVerification {
        verified,
        summary: Summary {
            kind,
            environment: env.as_str(),
            proof_root: root.clone(),
            item_count: total,
            net_amount: net,
            period,
            ledger_id: (ledger_ids.len() == 1).then(|| ledger_ids[0].to_string()),
            first_verified_at: rows.iter().filter_map(|r| r.verified_at).min().map(views::iso),
            last_verified_at: rows.iter().filter_map(|r| r.verified_at).max().map(views::iso),
            status,
        },
        records,
        verification: Verification {
            public_ledger_url: format!("{base}/api/v1/log/{}/checkpoint", env.as_str()),
            hash_scheme: HASH_SCHEME.name(),
            tree_head: head.note.clone(),
            tree_size: head.tree_size,
            public_key: LogKey::load(app, env)?.verifier_key()?,
            items_root: merkle::root(&item_hashes).to_hex(),
            checkpoint_leaf,
            message: "Check the tree head's signature with publicKey, each record's inclusion proof against \
                      the head's root (log leaves hashed as hashScheme names), and that the RFC 9162 root of the records' itemHashes is the proof root \
                      (for a checkpoint: checkpointLeaf.itemHash, itself proven into the head)."
                .to_string(),
        },
        pagination: json!({ "total": total, "limit": limit, "offset": offset }),
    };
    http::balance(200, &data)
}

fn sum(rows: &[store::DeltaRow]) -> ApiResult<Amount> {
    rows.iter().try_fold(Amount::ZERO, |acc, r| {
        acc.checked_add(views::amount(&r.delta)?)
            .map_err(|e| ApiError::internal(format!("net amount: {e}")))
    })
}

// ------------------------------------------------------------------ the log

fn text_response(body: String, cache: &str) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", "text/plain; charset=utf-8")?;
    headers.set("cache-control", cache)?;
    Ok(Response::ok(body)?.with_headers(headers))
}

/// `GET /api/v1/log/:env/checkpoint`: the latest signed tree head.
pub async fn log_checkpoint(app: &App, env: &str) -> ApiResult<Response> {
    let env = ledger::env_from_path(env)?;
    let head = ledger::head_or_init(app, env).await?;
    text_response(head.note, "public, max-age=5")
}

/// `GET /api/v1/log/:env/key`: the verifier key of the log.
pub async fn log_key(app: &App, env: &str) -> ApiResult<Response> {
    let env = ledger::env_from_path(env)?;
    let key = LogKey::load(app, env)?;
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

async fn head_sized(db: &worker::D1Database, size: u64, field: &str) -> ApiResult<store::HeadRow> {
    store::head_at(db, size).await?.ok_or_else(|| {
        ApiError::NotFound(format!(
            "{field}: no signed tree head of size {size}; see /api/v1/log/.../heads"
        ))
    })
}

/// `GET /api/v1/log/:env/heads?from=&limit=`.
pub async fn log_heads(app: &App, req: Request, env: &str) -> ApiResult<Response> {
    let env = ledger::env_from_path(env)?;
    let db = ledger::db(app, env)?;
    let from = size_param(&req, "from")?.unwrap_or(0);
    let page = Page::for_list(http::query_param(&req, "limit")?.as_deref(), None)?;
    let heads: Vec<Value> = store::heads_from(&db, from, page.limit())
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
    let env = ledger::env_from_path(env)?;
    let db = ledger::db(app, env)?;
    let item = http::query_param(&req, "itemHash")?
        .ok_or_else(|| ApiError::field("itemHash", "is required"))?;
    let item = Hash32::parse_field("itemHash", &item)?.to_hex();
    let head = match size_param(&req, "treeSize")? {
        Some(size) => head_sized(&db, size, "treeSize").await?,
        None => ledger::head_or_init(app, env).await?,
    };
    let leaf = store::leaf_by_item(&db, &item).await?.ok_or_else(|| {
        ApiError::NotFound(format!(
            "itemHash {item} is not in the {} log",
            env.as_str()
        ))
    })?;
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
    let env = ledger::env_from_path(env)?;
    let db = ledger::db(app, env)?;
    let from = size_param(&req, "from")?.ok_or_else(|| ApiError::field("from", "is required"))?;
    let to = match size_param(&req, "to")? {
        Some(t) => t,
        None => ledger::head_or_init(app, env).await?.tree_size,
    };
    if from > to {
        return Err(ApiError::field("from", "must not be larger than to"));
    }
    let old = head_sized(&db, from, "from").await?;
    let new = head_sized(&db, to, "to").await?;
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
