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
//! The other writes the SDKs send (issue 29: checkpoints, facts,
//! invitations, key registrations, statements) take the same key through
//! [`Guard`]: generic, a strict claim and the stored answer in the write's
//! own batch (or right after a write that is idempotent by itself). The
//! control database keeps no idempotency records any more.

use std::rc::Rc;

use bvs_core::hash::Hash32;
use bvs_core::types::{Env, IdempotencyKey};
use serde_json::json;
use worker::{Request, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::ids::{ClaimToken, TenantId};
use crate::store::emit::{self as emit_store, NewClaim};
use crate::store::idempotency::{self as idem_store, ClaimKey, ClaimRow, ClaimState, KeyClaim};

/// How long an Idempotency-Key is remembered after its first use.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;

/// How long an in-flight claim holds its key before a retry may take it
/// over (docs/balance.md). A request still running after it may lose its
/// claim, never its write: the stored answer's key admits one write.
pub const IDEMPOTENCY_LEASE_MS: u64 = 30 * 1000;

/// A key this request tries to claim, handed to its write.
pub struct Claim {
    attempt: Attempt,
    /// The claim stays in flight after its write (DEV_MODE fault point
    /// `profile::Fault::AfterWrite`, which follows the write).
    hold: bool,
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
            claim: self.attempt.claim_key(),
            done: !self.hold,
            lease_until: self.attempt.now_ms + IDEMPOTENCY_LEASE_MS,
            status,
            body,
        }
    }
}

fn processing(key: &IdempotencyKey) -> ApiResult<Response> {
    processing_text(key.as_str())
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

/// Whose emit keys and where their claims live: the API key's environment
/// and its ledger shard's database (the caller resolves both).
pub struct Owner {
    pub env: Env,
    pub ledger: worker::D1Database,
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
    owner: Owner,
    key: Option<IdempotencyKey>,
    hold: bool,
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
    let claim = Rc::new(Claim {
        attempt: Attempt::new(app, owner.env, &key, fingerprint(route, body))?,
        hold,
    });
    match f(Some(Rc::clone(&claim))).await? {
        Submitted::Answer(status, text) => http::raw_json(status, text),
        Submitted::Claimed(held) => held_by(app, owner.ledger, &key, &claim, held).await,
    }
}

/// The answer when the key is held: 409 for another body, the stored
/// answer once the write committed (completing an in-flight claim whose
/// lease passed), 202 "processing" while it is in flight under its lease.
async fn held_by(
    app: &App,
    ledger: worker::D1Database,
    key: &IdempotencyKey,
    claim: &Claim,
    held: ClaimRow,
) -> ApiResult<Response> {
    if held.request_hash != claim.attempt.request_hash {
        return Err(ApiError::coded(
            ErrorCode::IdempotencyKeyReused,
            "Idempotency-Key was already used with a different request body; use a new key for a new request",
        ));
    }
    let done = held.state == ClaimState::Done;
    if !done && held.lease_until > app.now_ms {
        return processing(key);
    }
    let (Some(status), Some(text)) = (held.response_status, held.response_body) else {
        return processing(key);
    };
    if !done {
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

// ------------------------------------------------------------------ other writes

/// Whose keys: a tenant in one environment, or a public route's scope
/// ([`public_owner`]).
pub struct Scope<'a> {
    pub tenant_id: &'a TenantId,
    pub env: Env,
}

/// An Idempotency-Key on a write other than emit (issue 29: checkpoints,
/// facts, invitations, key registrations, statements): generic, a strict
/// claim and the stored answer, put into the write's own batch
/// ([`Guard::statements`]) where the write makes a new object, or recorded
/// right after it ([`Guard::record`]) where the write is idempotent by
/// itself (content-addressed facts and statements, a single-use
/// invitation token).
pub struct Guard {
    tenant_id: TenantId,
    attempt: Attempt,
}

/// What [`check`] found: the key's answer (the write must not run), or
/// the go-ahead with the guard to write under (none without a key).
pub enum Checked {
    Answered(Response),
    Go(Option<Guard>),
}

/// Before a write: a key already held is answered here (the stored
/// answer; 409 for another body; 202 while in flight) and the write is not
/// run. `route` and `body` make the request's fingerprint.
///
/// # Errors
/// D1 errors.
pub async fn check(
    app: &App,
    db: &worker::D1Database,
    scope: &Scope<'_>,
    key: Option<IdempotencyKey>,
    route: &str,
    body: &[u8],
) -> ApiResult<Checked> {
    let Some(key) = key else {
        return Ok(Checked::Go(None));
    };
    let guard = Guard {
        tenant_id: scope.tenant_id.clone(),
        attempt: Attempt::new(app, scope.env, &key, fingerprint(route, body))?,
    };
    Ok(match guard.held(app, db).await? {
        Some(answer) => Checked::Answered(answer),
        None => Checked::Go(Some(guard)),
    })
}

/// One request's attempt at a key: the key in its environment, the
/// request's body hash, its claim token and its time. Shared by the emit's
/// claim ([`Claim`]) and the other writes' guard ([`Guard`]).
struct Attempt {
    env: Env,
    key: String,
    request_hash: Hash32,
    token: ClaimToken,
    now_ms: u64,
}

impl Attempt {
    fn new(app: &App, env: Env, key: &IdempotencyKey, request_hash: Hash32) -> ApiResult<Self> {
        Ok(Attempt {
            env,
            key: key.as_str().to_string(),
            request_hash,
            token: ClaimToken::new()?,
            now_ms: app.now_ms,
        })
    }

    /// The claim of the key by this request, held for the key's window.
    fn claim_key(&self) -> ClaimKey<'_> {
        ClaimKey {
            env: self.env,
            key: &self.key,
            request_hash: &self.request_hash,
            token: &self.token,
            now_ms: self.now_ms,
            expires_at: self.now_ms + IDEMPOTENCY_WINDOW_MS,
        }
    }
}

fn fingerprint(route: &str, body: &[u8]) -> Hash32 {
    let mut hashed = route.as_bytes().to_vec();
    hashed.push(b'\n');
    hashed.extend_from_slice(body);
    Hash32::digest(&hashed)
}

impl Guard {
    fn claim(&self) -> KeyClaim<'_> {
        KeyClaim {
            tenant_id: &self.tenant_id,
            claim: self.attempt.claim_key(),
        }
    }

    /// The claim and the answer (`status`, `body`: the exact text the
    /// response carries), for the write's own batch: the claim fails when
    /// another request took the key since [`check`], and D1 rolls the
    /// whole batch back, the write included.
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn statements(&self, status: u16, body: String) -> ApiResult<Vec<crate::store::Query<'_>>> {
        idem_store::claim_and_answer(&self.claim(), status, body)
    }

    /// After a write that is idempotent by itself: stores its answer under
    /// the key. If another request took the key meanwhile, its answer
    /// stands and this one is logged only.
    pub async fn record(&self, db: &worker::D1Database, status: u16, body: &str) {
        let stored = match self.statements(status, body.to_owned()) {
            Ok(statements) => crate::store::batch(db, statements).await.map(drop),
            Err(e) => Err(e),
        };
        if let Err(e) = stored {
            worker::console_warn!("idempotency answer not stored: {e:?}");
        }
    }

    /// The key's answer if another request holds it; `None` when it is
    /// free (so a failed write's own error stands).
    ///
    /// # Errors
    /// D1 errors.
    pub async fn held(&self, app: &App, db: &worker::D1Database) -> ApiResult<Option<Response>> {
        let held = idem_store::held(
            db,
            &self.tenant_id,
            self.attempt.env,
            &self.attempt.key,
            app.now_ms,
        )
        .await?;
        let Some(held) = held else {
            return Ok(None);
        };
        if held.token == self.attempt.token {
            return Ok(None);
        }
        if held.request_hash != self.attempt.request_hash {
            return Err(ApiError::coded(
                ErrorCode::IdempotencyKeyReused,
                "Idempotency-Key was already used with a different request body; use a new key for a new request",
            ));
        }
        match (held.response_status, held.response_body) {
            (Some(status), Some(text)) => replay(status, text).map(Some),
            _ => processing_text(&self.attempt.key).map(Some),
        }
    }

    /// Runs `write` under the guard: on failure, another request that
    /// took the key meanwhile answers instead of the failure.
    ///
    /// # Errors
    /// The write's error when the key is still free.
    pub async fn or_held<T>(
        guard: Option<&Guard>,
        app: &App,
        db: &worker::D1Database,
        result: ApiResult<T>,
    ) -> ApiResult<Result<T, Response>> {
        match (result, guard) {
            (Ok(v), _) => Ok(Ok(v)),
            (Err(e), Some(g)) => match g.held(app, db).await? {
                Some(answer) => Ok(Err(answer)),
                None => Err(e),
            },
            (Err(e), None) => Err(e),
        }
    }
}

fn processing_text(key: &str) -> ApiResult<Response> {
    http::balance(
        202,
        &json!({
            "idempotencyKey": key,
            "status": "processing",
            "message": "A request with this Idempotency-Key is still being processed; retry shortly to get its result",
        }),
    )
}

/// [`check`] with the key read from the request: `Err(answer)` when the
/// key is held, else the database to write in and the guard to write
/// under.
///
/// # Errors
/// 400 for a malformed key; D1 errors.
pub async fn checked(
    app: &App,
    db: worker::D1Database,
    scope: &Scope<'_>,
    req: &Request,
    route: &str,
    body: &[u8],
) -> ApiResult<Result<(worker::D1Database, Option<Guard>), Response>> {
    Ok(
        match check(app, &db, scope, key(req)?, route, body).await? {
            Checked::Answered(answer) => Err(answer),
            Checked::Go(guard) => Ok((db, guard)),
        },
    )
}

/// Whose keys a public route's are (key registrations, statements): none
/// of a tenant; each is scoped further by what the request names (an
/// invitation token's hash, a ledger), so they never meet a vendor's own.
const PUBLIC_TENANT: &str = "public";

/// The owner a public route's keys are held under, for `scope` (e.g.
/// `ledger:<id>`).
pub fn public_owner(scope: &str) -> TenantId {
    TenantId::from_text(format!("{PUBLIC_TENANT}:{scope}"))
}
