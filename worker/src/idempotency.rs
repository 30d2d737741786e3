//! Idempotency-Key on the emit routes: a request is run at most once per
//! key, and a retry with the same body replays the stored answer.
//!
//! Crash safety: a claim (control database) is in flight under a lease of
//! [`IDEMPOTENCY_LEASE_MS`]; the write stores its answer under the key in
//! its own atomic batch (ledger database), so a committed write always has
//! its answer. A retry after the lease replays that answer if the write
//! committed, or takes the claim over and performs the write once (the
//! answer's primary key refuses a second one); the quota already counted
//! for the claim is recorded with the count and not counted again.

use std::cell::Cell;
use std::rc::Rc;

use bvs_core::hash::Hash32;
use bvs_core::types::{Env, IdempotencyKey};
use serde_json::json;
use worker::{D1Database, D1PreparedStatement, Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::store::idempotency as idem_store;

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
    /// After the claim and the quota count, before the write.
    AfterQuota,
    /// After the write committed, before the claim is completed.
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

/// A claimed key, handed to the request that holds it.
pub struct Claim {
    tenant_id: String,
    env: Env,
    key: String,
    request_hash: String,
    now_ms: u64,
    /// Deltas already counted against the quota under this claim (by a
    /// request that crashed before its write).
    pub charged: u64,
    fault: Option<Fault>,
    wrote: Cell<bool>,
}

impl Claim {
    pub fn scope(&self) -> idem_store::Scope<'_> {
        idem_store::Scope {
            tenant_id: &self.tenant_id,
            env: self.env.as_str(),
            key: &self.key,
        }
    }

    /// The statements that store the answer under the key; they go into
    /// the write's own batch. From here on a failure keeps the claim.
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn answer_statements(
        &self,
        ledger: &D1Database,
        status: u16,
        body: &str,
    ) -> ApiResult<Vec<D1PreparedStatement>> {
        self.wrote.set(true);
        idem_store::result_statements(
            ledger,
            &self.scope(),
            &idem_store::NewResult {
                request_hash: &self.request_hash,
                status,
                body,
                now_ms: self.now_ms,
                expires_at: self.now_ms + IDEMPOTENCY_WINDOW_MS,
            },
        )
    }

    /// The write was refused whole (nothing committed): a failure may
    /// release the key again.
    pub fn not_written(&self) {
        self.wrote.set(false);
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

/// Completes the claim with a committed write's stored answer and replays it.
async fn replay_stored(
    db: &D1Database,
    scope: &idem_store::Scope<'_>,
    stored: idem_store::StoredResult,
) -> ApiResult<Response> {
    if let Err(e) =
        idem_store::complete(db, scope, stored.response_status, &stored.response_body).await
    {
        worker::console_error!("idempotency key not completed: {e:?}");
    }
    replay(stored.response_status, stored.response_body)
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

/// Runs `f` at most once per Idempotency-Key: the same key with the same
/// body replays the stored answer; while the first is in flight (under its
/// lease) → 202; the same key with another body → 409. Requests that fail
/// before their write release the key. `f` gets the claim, and must put
/// [`Claim::answer_statements`] into its write's batch.
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
    Fut: std::future::Future<Output = ApiResult<(u16, String)>>,
{
    let Some(key) = key else {
        let (status, text) = f(None).await?;
        return http::raw_json(status, text);
    };
    let mut hashed = route.as_bytes().to_vec();
    hashed.push(b'\n');
    hashed.extend_from_slice(body);
    let request_hash = Hash32::digest(&hashed).to_hex();
    let db = app.control_db()?;
    let now = app.now_ms;
    let scope = idem_store::Scope {
        tenant_id: &ctx.tenant_id,
        env: ctx.env.as_str(),
        key: key.as_str(),
    };
    let existing = idem_store::claim(
        &db,
        &scope,
        &request_hash,
        now,
        now + IDEMPOTENCY_WINDOW_MS,
        now + IDEMPOTENCY_LEASE_MS,
    )
    .await?;
    let charged = match existing {
        None => 0,
        Some(record) => {
            if record.request_hash != request_hash {
                return Err(ApiError::coded(
                    ErrorCode::IdempotencyKeyReused,
                    "Idempotency-Key was already used with a different request body; use a new key for a new request",
                ));
            }
            if let ("done", Some(status), Some(text)) = (
                record.state.as_str(),
                record.response_status,
                record.response_body,
            ) {
                return replay(status, text);
            }
            if record.lease_until > now {
                return processing(&key);
            }
            // The lease passed: the holder died or is stuck. A committed
            // write has its answer stored; otherwise take the claim over.
            let ledger = crate::ledger::db(app, ctx.log())?;
            if let Some(stored) = idem_store::stored_result(&ledger, &scope, now).await? {
                return replay_stored(&db, &scope, stored).await;
            }
            if !idem_store::take_over(&db, &scope, record.lease_until, now + IDEMPOTENCY_LEASE_MS)
                .await?
            {
                return processing(&key);
            }
            record.quota_charged
        }
    };
    let claim = Rc::new(Claim {
        tenant_id: ctx.tenant_id.clone(),
        env: ctx.env,
        key: key.as_str().to_string(),
        request_hash: request_hash.clone(),
        now_ms: now,
        charged,
        fault,
        wrote: Cell::new(false),
    });
    match f(Some(Rc::clone(&claim))).await {
        Ok((status, text)) => {
            // The answer is stored with the write: a failed completion only
            // delays the replay until the lease passes.
            if let Err(e) = idem_store::complete(&db, &scope, status, &text).await {
                worker::console_error!("idempotency key not completed: {e:?}");
            }
            http::raw_json(status, text)
        }
        Err(e) if claim.wrote.get() => {
            // The write may have committed (or another holder's did): never
            // release the key then; answer from the stored result if any.
            let ledger = crate::ledger::db(app, ctx.log())?;
            if let Ok(Some(stored)) = idem_store::stored_result(&ledger, &scope, now).await {
                if stored.request_hash == request_hash {
                    return replay_stored(&db, &scope, stored).await;
                }
            }
            Err(e)
        }
        Err(e) => {
            if let Err(release) = idem_store::abandon(&db, &scope).await {
                worker::console_error!("idempotency key not released: {release:?}");
            }
            Err(e)
        }
    }
}
