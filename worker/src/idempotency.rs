//! Idempotency-Key on the emit routes: a request is run at most once per
//! key, and a retry with the same body replays the stored answer.
//!
//! The claim lives next to the write (issue 16): on the tenant's ledger
//! shard, in the write's own atomic batch (`store::emit`), which claims the
//! key with this request's random token, counts the quota, writes the
//! submission and stores the answer (`idempotency_results`), each statement
//! conditional on the claim holding this token. So a committed write always
//! has its answer, a refused or failed one leaves no claim (the key stays
//! free), and there is no window in which a crash leaves a claim without
//! its write. A claim is in flight (under a lease of
//! [`IDEMPOTENCY_LEASE_MS`]) only under the DEV_MODE fault point that stops
//! a request between its write and its completion; a retry answers 202
//! "processing" under the lease and replays the stored answer after it. An
//! in-flight claim without an answer may be taken over after its lease.
//! No other route takes an Idempotency-Key (the control database keeps no
//! idempotency records any more).

use std::rc::Rc;

use bvs_core::hash::Hash32;
use bvs_core::types::{Env, IdempotencyKey};
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::ids;
use crate::store::emit::{self as emit_store, ClaimRow, NewClaim};

/// How long an Idempotency-Key is remembered after its first use.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;

/// How long an in-flight claim holds its key before a retry may take it
/// over (docs/balance.md). A request still running after it may lose its
/// claim, never its write: the stored answer's key admits one write.
pub const IDEMPOTENCY_LEASE_MS: u64 = 30 * 1000;

/// How long a fault point holds its request (DEV_MODE only): long enough
/// for a test to kill the server.
const FAULT_HOLD_SECS: u64 = 120;

/// A DEV_MODE-only fault-injection point on the emit routes, named by the
/// `X-Bvs-Fault` header: the request stops there and hangs, so a test can
/// kill the server in that window.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
    /// Before the write batch (which claims, counts the quota and writes
    /// at once): nothing of the request is stored yet.
    AfterQuota,
    /// After the write committed, before the claim is completed (the
    /// batch leaves the claim in flight under this fault point only).
    AfterWrite,
}

impl Fault {
    fn as_str(self) -> &'static str {
        match self {
            Fault::AfterQuota => "after-quota",
            Fault::AfterWrite => "after-write",
        }
    }
}

/// The request's fault point: none outside DEV_MODE.
pub fn fault(app: &App, req: &Request) -> Option<Fault> {
    if !app.dev_mode() {
        return None;
    }
    match http::header(req, "x-bvs-fault").as_deref() {
        Some("after-quota") => Some(Fault::AfterQuota),
        Some("after-write") => Some(Fault::AfterWrite),
        _ => None,
    }
}

/// A key this request tries to claim, handed to its write.
pub struct Claim {
    env: Env,
    key: String,
    request_hash: String,
    token: String,
    now_ms: u64,
    fault: Option<Fault>,
}

/// What a write under a claim did: answered (written now), or found the
/// key held by a request (this one's earlier run, or another body).
pub enum Submitted {
    Answer(u16, String),
    Claimed(ClaimRow),
}

impl Claim {
    /// The claim and the answer to store under it, for the write's batch.
    pub fn new_claim<'a>(&'a self, status: u16, body: &'a str) -> NewClaim<'a> {
        NewClaim {
            env: self.env.as_str(),
            key: &self.key,
            request_hash: &self.request_hash,
            token: &self.token,
            done: self.fault != Some(Fault::AfterWrite),
            now_ms: self.now_ms,
            lease_until: self.now_ms + IDEMPOTENCY_LEASE_MS,
            expires_at: self.now_ms + IDEMPOTENCY_WINDOW_MS,
            status,
            body,
        }
    }

    /// Stops here and hangs when the request asked for this fault point.
    ///
    /// # Errors
    /// Always, once the hold is over, when the fault point was hit.
    pub async fn fault_point(&self, at: Fault) -> ApiResult<()> {
        if self.fault != Some(at) {
            return Ok(());
        }
        worker::console_log!("fault point {} reached", at.as_str());
        worker::Delay::from(std::time::Duration::from_secs(FAULT_HOLD_SECS)).await;
        Err(ApiError::internal(format!(
            "fault point {} held",
            at.as_str()
        )))
    }
}

fn processing(key: &IdempotencyKey) -> ApiResult<Response> {
    http::balance(
        202,
        &json!({
            "idempotencyKey": key.as_str(),
            "status": "processing",
            "message": "A request with this Idempotency-Key is still being processed; retry shortly to get its result",
        }),
    )
}

fn replay(status: u16, text: String) -> ApiResult<Response> {
    let resp = http::raw_json(status, text)?;
    resp.headers().set("idempotent-replayed", "true")?;
    Ok(resp)
}

/// The request's `Idempotency-Key`, if any.
///
/// # Errors
/// 400 naming `Idempotency-Key` when it is malformed.
pub fn key(req: &Request) -> ApiResult<Option<IdempotencyKey>> {
    http::header(req, "idempotency-key")
        .map(|k: String| {
            IdempotencyKey::parse(&k).map_err(|mut e| {
                e.field = "Idempotency-Key".to_string();
                ApiError::from(e)
            })
        })
        .transpose()
}

/// Runs `f` at most once per Idempotency-Key: `f` gets the claim to put
/// into its write's batch ([`Claim::new_claim`]). The same key with the
/// same body replays the stored answer; while the first is in flight
/// (under its lease) → 202; the same key with another body → 409. A
/// request that fails or is refused before or in its write leaves the key
/// free.
#[allow(clippy::too_many_arguments)]
pub async fn once<F, Fut>(
    app: &App,
    ctx: &KeyContext,
    key: Option<IdempotencyKey>,
    fault: Option<Fault>,
    route: &str,
    body: &[u8],
    f: F,
) -> ApiResult<Response>
where
    F: FnOnce(Option<Rc<Claim>>) -> Fut,
    Fut: std::future::Future<Output = ApiResult<Submitted>>,
{
    let Some(key) = key else {
        return match f(None).await? {
            Submitted::Answer(status, text) => http::raw_json(status, text),
            Submitted::Claimed(_) => Err(ApiError::internal("claimed without a key")),
        };
    };
    let mut hashed = route.as_bytes().to_vec();
    hashed.push(b'\n');
    hashed.extend_from_slice(body);
    let claim = Rc::new(Claim {
        env: ctx.env,
        key: key.as_str().to_string(),
        request_hash: Hash32::digest(&hashed).to_hex(),
        token: ids::new_id("clm")?,
        now_ms: app.now_ms,
        fault,
    });
    match f(Some(Rc::clone(&claim))).await? {
        Submitted::Answer(status, text) => http::raw_json(status, text),
        Submitted::Claimed(held) => held_by(app, ctx, &key, &claim, held).await,
    }
}

/// The answer when the key is held: 409 for another body, the stored
/// answer once the write committed (completing an in-flight claim whose
/// lease passed), 202 "processing" while it is in flight under its lease.
async fn held_by(
    app: &App,
    ctx: &KeyContext,
    key: &IdempotencyKey,
    claim: &Claim,
    held: ClaimRow,
) -> ApiResult<Response> {
    if held.request_hash != claim.request_hash {
        return Err(ApiError::coded(
            ErrorCode::IdempotencyKeyReused,
            "Idempotency-Key was already used with a different request body; use a new key for a new request",
        ));
    }
    let done = held.state == "done";
    if !done && held.lease_until > app.now_ms {
        return processing(key);
    }
    let (Some(status), Some(text)) = (held.response_status, held.response_body) else {
        return processing(key);
    };
    if !done {
        let ledger = crate::ledger::db(app, ctx.log())?;
        let token = held.token;
        app.after_response(async move {
            if let Err(e) = emit_store::complete(&ledger, &token).await {
                worker::console_error!("idempotency key not completed: {e:?}");
            }
        })
        .await;
    }
    replay(status, text)
}
