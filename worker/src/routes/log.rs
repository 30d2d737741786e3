//! The log's public face (docs/proofs-api.md): the log list, each log's
//! latest signed tree head, its verifier key, its heads by size, and
//! inclusion and consistency proofs. Its tiles are `routes::tiles`.

use bvs_core::hash::Hash32;
use bvs_core::log::HASH_SCHEME;
use bvs_core::types::{Env, Page};
use serde_json::{json, Value};
use worker::{Headers, Request, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::http;
use crate::ledger::{self, heads, LogId, LogKey};
use crate::views;
use crate::{proofs, witness};

fn text_response(body: String, cache: &str) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", "text/plain; charset=utf-8")?;
    headers.set("cache-control", cache)?;
    Ok(Response::ok(body)?.with_headers(headers))
}

/// `GET /api/v1/logs`: the log list, one entry per shard of each
/// environment (like the Certificate Transparency log list): its
/// environment, shard, name in paths, origin, verifier key and URLs.
pub async fn list(app: &App, req: &Request) -> ApiResult<Response> {
    let service = req.url()?.origin().ascii_serialization();
    let mut logs = Vec::new();
    let sandbox = witness::policy(app, Env::Sandbox)?;
    let production = witness::policy(app, Env::Production)?;
    for at in ledger::shard::all(app) {
        let key = LogKey::load(app, at)?;
        let mut entry = json!(proofs::log_ref(at, &key.origin, &service));
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
        let (threshold, text) = witness::published(policy, &key.verifier_key()?)?;
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
pub async fn checkpoint(app: &App, env: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, env)?;
    let (head, _) = witness::latest_published(app, log).await?;
    text_response(head.note, "public, max-age=5")
}

/// `GET /api/v1/log/:env/key`: the verifier key of the log.
pub async fn key(app: &App, env: &str) -> ApiResult<Response> {
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
pub async fn heads(app: &App, req: Request, env: &str) -> ApiResult<Response> {
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
pub async fn inclusion(app: &App, req: Request, env: &str) -> ApiResult<Response> {
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
pub async fn consistency(app: &App, req: Request, env: &str) -> ApiResult<Response> {
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
