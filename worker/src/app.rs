//! Per-request context: the bindings and the one clock.

use std::cell::RefCell;

use worker::{Context, Date, Env};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::TenantId;

pub struct App {
    pub env: Env,
    /// "Now", read once per request or event. Everything downstream takes it
    /// from here so that time has one entry point.
    pub now_ms: u64,
    /// The tenant of the authenticated caller, once known; only for the
    /// request log line.
    tenant_id: RefCell<Option<TenantId>>,
    /// The API key of the caller, once its secret checked out; for the
    /// request log (`request_log`).
    key_caller: RefCell<Option<KeyCaller>>,
    /// The API key's rate-limit bucket after this request, for the
    /// `RateLimit-*` headers.
    rate_limit: RefCell<Option<RateLimitState>>,
    /// The fetch event's context, for work that may finish after the
    /// response (`after_response`).
    ctx: Option<Context>,
}

/// A request's API key: which, and the environment and shard it reaches.
#[derive(Debug, Clone)]
pub struct KeyCaller {
    pub key_id: crate::ids::KeyId,
    pub env: bvs_core::types::Env,
    pub shard: u32,
    /// The tenant's plan (`Plan::as_str`), as read with the key.
    pub plan: &'static str,
}

/// What `RateLimit-Limit`, `-Remaining` and `-Reset` report.
#[derive(Debug, Clone, Copy)]
pub struct RateLimitState {
    pub limit: u64,
    pub remaining: u64,
    pub reset_secs: u64,
}

/// The clock: the one place the service reads the time (`Date::now()`).
/// `App::now_ms` is its reading at the start of a request or event; work
/// that runs on (a sequencer round, a delivery attempt's duration, the
/// request log's elapsed time, the rate limiter's refill) reads it here again.
pub fn clock_ms() -> u64 {
    Date::now().as_millis()
}

impl App {
    pub fn new(env: Env) -> Self {
        Self::with_now(env, clock_ms())
    }

    pub fn with_now(env: Env, now_ms: u64) -> Self {
        let app = Self {
            env,
            now_ms,
            tenant_id: RefCell::new(None),
            key_caller: RefCell::new(None),
            rate_limit: RefCell::new(None),
            ctx: None,
        };
        crate::roundtrips::set_modeled_latency(app.modeled_latency_ms());
        crate::limits::hold(app.held_limits());
        app
    }

    /// DEV_MODE (issue 42): every invocation held to a deployed Worker's
    /// published limits (`crate::limits`), `LIMIT_D1_QUERIES` lowering the
    /// queries per invocation for a test; `None` outside DEV_MODE.
    pub fn held_limits(&self) -> Option<crate::limits::Held> {
        if !self.dev_mode() {
            return None;
        }
        let queries = self
            .var("LIMIT_D1_QUERIES")
            .and_then(|v| v.trim().parse().ok());
        Some(crate::limits::published(queries))
    }

    /// DEV_MODE `DEPLOYED_LATENCY_MS` (issue 42): the latency the
    /// deployed-shape model adds to every crossing of the network
    /// (`roundtrips::crossing`); 0 outside DEV_MODE or unset.
    pub fn modeled_latency_ms(&self) -> u64 {
        if !self.dev_mode() {
            return 0;
        }
        self.var("DEPLOYED_LATENCY_MS")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// A request's App: work handed to `after_response` does not delay the
    /// response.
    pub fn for_request(env: Env, ctx: Context) -> Self {
        let mut app = Self::new(env);
        app.ctx = Some(ctx);
        app
    }

    /// Runs `work` after the response has been sent (`waitUntil`) when
    /// serving a request, else now.
    pub async fn after_response(&self, work: impl std::future::Future<Output = ()> + 'static) {
        match &self.ctx {
            Some(ctx) => ctx.wait_until(crate::roundtrips::continued(work)),
            None => work.await,
        }
    }

    /// Records who is calling, for the request log line.
    pub fn set_tenant(&self, tenant_id: &TenantId) {
        *self.tenant_id.borrow_mut() = Some(tenant_id.clone());
    }

    /// Records the caller's API key (and its tenant), for the request log.
    pub fn set_key_caller(&self, tenant_id: &TenantId, key: KeyCaller) {
        self.set_tenant(tenant_id);
        *self.key_caller.borrow_mut() = Some(key);
    }

    /// The caller's API key, if the request came with one that checked out.
    pub fn key_caller(&self) -> Option<KeyCaller> {
        self.key_caller.borrow().clone()
    }

    pub fn set_rate_limit(&self, state: RateLimitState) {
        *self.rate_limit.borrow_mut() = Some(state);
    }

    pub fn rate_limit(&self) -> Option<RateLimitState> {
        *self.rate_limit.borrow()
    }

    /// The authenticated tenant, if any.
    pub fn tenant(&self) -> Option<TenantId> {
        self.tenant_id.borrow().clone()
    }

    /// `DEV_MODE` is on only in local runs: it opens the dev mailbox and
    /// diagnostics routes.
    pub fn dev_mode(&self) -> bool {
        self.var("DEV_MODE").as_deref() == Some("true")
    }

    pub fn var(&self, name: &str) -> Option<String> {
        self.env.var(name).ok().map(|v| v.to_string())
    }

    pub fn secret(&self, name: &str) -> ApiResult<String> {
        self.env
            .secret(name)
            .map(|v| v.to_string())
            .map_err(|_| ApiError::internal(format!("secret {name} is not configured")))
    }

    pub fn control_db(&self) -> ApiResult<worker::D1Database> {
        Ok(self.env.d1("DB")?)
    }

    pub fn require_dev_mode(&self) -> ApiResult<()> {
        if self.dev_mode() {
            Ok(())
        } else {
            Err(ApiError::coded(ErrorCode::RouteNotFound, "Not found"))
        }
    }
}
