//! DEV_MODE-only diagnostics: 404 unless `DEV_MODE` is "true".

use serde::Serialize;
use worker::Response;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::{http, ids, ledger, ping};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PingView {
    id: String,
    note: String,
    created_at: u64,
    consumed_at: Option<u64>,
}

/// `POST /dev/ping` `{"note": "..."}`: writes a row to D1 and rings the queue;
/// the consumer stamps `consumedAt`.
pub async fn ping_create(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let mut f = Fields::read(&mut req).await?;
    let note = f
        .string("note", false)
        .ok_or_else(|| ApiError::field("note", "is required and must be a string"))?;
    let id = ping::create(app, &note).await?;
    let view = PingView {
        id,
        note,
        created_at: app.now_ms,
        consumed_at: None,
    };
    http::dashboard(201, &view, None)
}

/// `GET /dev/ping/:id`.
pub async fn ping_get(app: &App, id: &str) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let row = ping::get(app, id).await?;
    let view = PingView {
        id: row.id,
        note: row.note,
        created_at: row.created_at,
        consumed_at: row.consumed_at,
    };
    http::dashboard(200, &view, None)
}

/// `POST /dev/bench/hash {"n": N}`: the in-Worker SHA-256 limit for a
/// Merkle root over N leaves (N leaf + N−1 node hashes), timed by the
/// benchmark from outside (a Worker's clock does not advance while it
/// computes).
pub async fn bench_hash(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let n = bench_n(&mut req).await?;
    let items: Vec<bvs_core::Hash32> = (0..n)
        .map(|i| bvs_core::Hash32::digest(&i.to_le_bytes()))
        .collect();
    let root = bvs_core::merkle::root(&items);
    http::dashboard(
        200,
        &serde_json::json!({ "n": n, "root": root.to_hex() }),
        None,
    )
}

/// `POST /dev/log/grow {"n": N, "env": "sandbox", "legacy": false}`:
/// appends N synthetic leaves to a log (benchmark fixture for proof
/// latency on large logs); `"legacy": true` writes them as a log was kept
/// before tiles (the tiles migration's test fixture).
pub async fn log_grow(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let mut f = Fields::read(&mut req).await?;
    let n = n_field(&f)?;
    let env_text = f.string("env", false);
    // A log's path name: `sandbox`, `production-1`, ...
    let env = crate::ledger::LogId::from_path(app, env_text.as_deref().unwrap_or("sandbox"))?;
    let legacy = f.raw("legacy") == Some("true");
    let seed = ids::random_token(8)?;
    let added = crate::ledger::grow_synthetic(app, env, n, &seed, legacy).await?;
    http::dashboard(200, &serde_json::json!({ "added": added }), None)
}

/// `POST /dev/witness/fork {"env": "sandbox"}` (DEV_MODE fault, issue
/// 28): the log signs a head that does not extend its latest and submits
/// it to every witness; each one's answer (422 `refused` expected) and the
/// forked head itself (`forkedHead`, for a test to hand the verifiers).
/// The forked head is never stored or published.
pub async fn witness_fork(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let mut f = Fields::read(&mut req).await?;
    let env_text = f.string("env", false);
    let log = crate::ledger::LogId::from_path(app, env_text.as_deref().unwrap_or("sandbox"))?;
    let (forked, answers) = crate::witness::fork(app, log).await?;
    http::dashboard(
        200,
        &serde_json::json!({
            "treeSize": forked.tree_size,
            "forkedHead": forked.note,
            "witnesses": answers,
        }),
        None,
    )
}

/// Upper bound of the benchmark routes' `n`.
pub const BENCH_N_MAX: u64 = 2_000_000;

async fn bench_n(req: &mut worker::Request) -> ApiResult<u64> {
    n_field(&Fields::read(req).await?)
}

/// The benchmark routes' `n`: a whole number from 1 to `BENCH_N_MAX`.
fn n_field(f: &Fields) -> ApiResult<u64> {
    f.raw("n")
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|n| (1..=BENCH_N_MAX).contains(n))
        .ok_or_else(|| {
            ApiError::field(
                "n",
                format!("must be a whole number from 1 to {BENCH_N_MAX}"),
            )
        })
}

/// `GET /dev/log/leaf?env=&index=`: one leaf of a log (benchmark helper).
pub async fn log_leaf(app: &App, req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let env = crate::ledger::LogId::from_path(
        app,
        &http::query_param(&req, "env")?.unwrap_or_else(|| "sandbox".into()),
    )?;
    let index = http::query_param(&req, "index")?
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| ApiError::field("index", "must be a whole number"))?;
    let leaf = ledger::heads::leaf_at(&ledger::db(app, env)?, index).await?;
    http::dashboard(
        200,
        &serde_json::json!({ "leafIndex": leaf.leaf_index, "itemHash": leaf.item_hash }),
        None,
    )
}

/// `POST /dev/retention {"rowsMax": N, "time": ms}`: one retention run with
/// a chosen row budget at a chosen time (the fairness test's tiny budget;
/// the daily cron runs the same purge with `ROWS_PER_RUN_MAX`). Answers the
/// run's report.
pub async fn retention(app: &App, mut req: worker::Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let f = Fields::read(&mut req).await?;
    let whole = |name: &str| f.raw(name).and_then(|t| t.parse::<u64>().ok());
    let rows_max = whole("rowsMax")
        .filter(|n| (1..=crate::retention::ROWS_PER_RUN_MAX).contains(n))
        .ok_or_else(|| {
            ApiError::field(
                "rowsMax",
                format!(
                    "must be a whole number from 1 to {}",
                    crate::retention::ROWS_PER_RUN_MAX
                ),
            )
        })?;
    let time = whole("time").unwrap_or(app.now_ms);
    let report = crate::retention::purge(app, time, rows_max).await?;
    http::dashboard(200, &report, None)
}

/// Ledgers one seed request makes at most (`POST /dev/liabilities/seed`).
pub const LIABILITIES_SEED_MAX: u64 = 200_000;

/// `POST /dev/liabilities/seed` `{n, period}` (DEV_MODE, loopback, API
/// key): `n` ledgers `bench-<i>` with a balance at the end of `period`,
/// the liabilities benchmark's fixture (bench/README.md).
pub async fn liabilities_seed(
    app: &App,
    mut req: worker::Request,
    ctx: crate::auth::KeyContext,
) -> ApiResult<Response> {
    let f = Fields::read(&mut req).await?;
    let n = f
        .raw("n")
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|n| (1..=LIABILITIES_SEED_MAX).contains(n))
        .ok_or_else(|| {
            ApiError::field(
                "n",
                format!("must be a whole number from 1 to {LIABILITIES_SEED_MAX}"),
            )
        })?;
    let period = f
        .raw("period")
        .map(|p| p.trim_matches('"').to_owned())
        .ok_or_else(|| ApiError::field("period", "is required (YYYY-MM)"))?;
    let period = bvs_core::types::Period::parse(&period).map_err(ApiError::from)?;
    crate::liabilities::seed_bench(app, &ctx.tenant_id, ctx.log(), period, n).await?;
    http::dashboard(200, &serde_json::json!({ "seeded": n }), None)
}

/// `POST /dev/liabilities/start` `{period, time, asset?}` (DEV_MODE, API key):
/// starts a statement of `period` (`POST /api/v1/liabilities`) as if the
/// clock read `time` (ms): how a test starts a second statement of a
/// period the real clock has not closed yet, to see it supersede the first
/// (docs/liabilities.md §9). 202 with the statement.
pub async fn liabilities_start(
    app: &App,
    mut req: worker::Request,
    ctx: crate::auth::KeyContext,
) -> ApiResult<Response> {
    let f = Fields::read(&mut req).await?;
    let period = f
        .raw("period")
        .map(|p| p.trim_matches('"').to_owned())
        .ok_or_else(|| ApiError::field("period", "is required (YYYY-MM)"))?;
    let period = bvs_core::types::Period::parse(&period).map_err(ApiError::from)?;
    let time = f
        .raw("time")
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(|| ApiError::field("time", "is required (ms since the epoch)"))?;
    let asset = match f.raw("asset") {
        None => bvs_core::types::Asset::Default,
        Some(a) => bvs_core::types::Asset::parse("asset", a.trim_matches('"'))?,
    };
    let at = App::with_now(app.env.clone(), time);
    let (row, _) =
        crate::liabilities::request(&at, &ctx.tenant_id, ctx.log(), (period, &asset)).await?;
    http::dashboard(202, &crate::liabilities::StatementView::of(&row), None)
}
