//! DEV_MODE-only profiling of the emit path (issue 16): the var
//! `EMIT_PROFILE_STOP`, set for a whole `wrangler dev` by
//! `bench/profile.sh` (`PROFILE_VARS=EMIT_PROFILE_STOP=auth`), makes every
//! single emit stop at one point and answer 202 `{}` (a batch emit too,
//! from [`Stop::Prepare`] on), so the
//! CPU cost of each step is the difference between two stops
//! (docs/performance.md, "Where an emit's time goes"). Without DEV_MODE,
//! or without the var, nothing stops.

use worker::Response;

use crate::app::App;
use crate::error::ApiResult;
use crate::http;

/// Where an emit stops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stop {
    /// Before anything: the route alone.
    Route,
    /// After the API key is authenticated (with the proof-root index row,
    /// in the same control-database batch, when the isolate holds the
    /// key's lease: `auth::authenticate_emit`).
    Auth,
    /// After authentication and one trivial read of the control database
    /// (what a bare D1 call costs).
    ControlRead,
    /// After the body is read, the deltas prepared (ids, hashes) and the
    /// answer built: everything but storage.
    Prepare,
    /// After the write batch on the shard, without the proof-root index
    /// row (unless the key's read wrote it) or the doorbell.
    Write,
    /// After the write and the proof-root index row, without the doorbell.
    Index,
    /// The whole emit, doorbell included; the verification queue's consumer
    /// acks doorbells without running the sequencer (the deltas stay
    /// QUEUED).
    SequencerOff,
    /// The whole emit and the sequencer, without the webhook dispatcher
    /// that follows the sequencer in the consumer.
    DispatchOff,
}

impl Stop {
    fn parse(text: &str) -> Option<Stop> {
        Some(match text.trim() {
            "route" => Stop::Route,
            "auth" => Stop::Auth,
            "control-read" => Stop::ControlRead,
            "prepare" => Stop::Prepare,
            "write" => Stop::Write,
            "index" => Stop::Index,
            "sequencer-off" => Stop::SequencerOff,
            "dispatch-off" => Stop::DispatchOff,
            _ => return None,
        })
    }
}

/// The emit's stop point: none outside DEV_MODE.
pub fn stop(app: &App) -> Option<Stop> {
    if !app.dev_mode() {
        return None;
    }
    app.var("EMIT_PROFILE_STOP")
        .as_deref()
        .and_then(Stop::parse)
}

/// The answer of an emit that stopped.
///
/// # Errors
/// Internal error if the response cannot be built.
pub fn stopped() -> ApiResult<Response> {
    http::raw_json(202, "{}".to_string())
}

/// Runs the control read of [`Stop::ControlRead`].
///
/// # Errors
/// D1 errors.
pub async fn control_read(app: &App) -> ApiResult<()> {
    crate::store::dev::one(&app.control_db()?).await
}

/// How long a fault point holds its request: long enough for a test to
/// kill the server.
const FAULT_HOLD_SECS: u64 = 120;

/// A DEV_MODE-only fault-injection point on the emit routes, named by the
/// `X-Bvs-Fault` header: a request under an Idempotency-Key stops there
/// and hangs, so a test can kill the server in that window
/// (tests/tests/idempotency_crash.rs).
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
    fn parse(text: &str) -> Option<Fault> {
        match text {
            "after-quota" => Some(Fault::AfterQuota),
            "after-write" => Some(Fault::AfterWrite),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Fault::AfterQuota => "after-quota",
            Fault::AfterWrite => "after-write",
        }
    }
}

/// Every DEV_MODE point of one emit (profiling stops and fault points),
/// kept out of the emit path's body: read once per request
/// ([`EmitProbe::of`]); the handler's first steps run inside
/// [`EmitProbe::around_auth`] (the stops before and after the key), and
/// the write's points are reached through `emit::Submitter`.
/// Outside DEV_MODE, or without `EMIT_PROFILE_STOP` and `X-Bvs-Fault`,
/// every point passes.
#[derive(Clone, Copy, Default)]
pub struct EmitProbe {
    stop: Option<Stop>,
    fault: Option<Fault>,
}

impl EmitProbe {
    /// The request's stop (the var) and fault point (the header).
    pub fn of(app: &App, req: &worker::Request) -> Self {
        if !app.dev_mode() {
            return EmitProbe::default();
        }
        EmitProbe {
            stop: stop(app),
            fault: http::header(req, "x-bvs-fault").and_then(|f| Fault::parse(&f)),
        }
    }

    /// Runs an emit's first steps (`steps`: up to its key's
    /// authentication) between the stops around them: `Err(answer)` when
    /// the run stops before them ([`Stop::Route`]) or after them
    /// ([`Stop::Auth`], or [`Stop::ControlRead`] after its one
    /// control-database read).
    ///
    /// # Errors
    /// The steps' errors; D1 errors of the control read.
    pub async fn around_auth<T>(
        self,
        app: &App,
        steps: impl std::future::Future<Output = ApiResult<T>>,
    ) -> ApiResult<Result<T, Response>> {
        if self.stop == Some(Stop::Route) {
            return stopped().map(Err);
        }
        let done = steps.await?;
        match self.stop {
            Some(Stop::Auth) => stopped().map(Err),
            Some(Stop::ControlRead) => {
                control_read(app).await?;
                stopped().map(Err)
            }
            _ => Ok(Ok(done)),
        }
    }

    /// [`Stop::Prepare`]: the submission answers what it built, unwritten.
    pub fn answers_unwritten(self) -> bool {
        self.stop == Some(Stop::Prepare)
    }

    /// Whether the write indexes its proof roots (not under [`Stop::Write`]).
    pub fn indexes(self) -> bool {
        self.stop != Some(Stop::Write)
    }

    /// Whether the write rings the sequencer (not under [`Stop::Write`] or
    /// [`Stop::Index`]).
    pub fn rings(self) -> bool {
        !matches!(self.stop, Some(Stop::Write | Stop::Index))
    }

    /// Whether a claimed write leaves its claim in flight
    /// ([`Fault::AfterWrite`]: the fault point that follows it).
    pub fn holds_claim(self) -> bool {
        self.fault == Some(Fault::AfterWrite)
    }

    /// Stops here and hangs when the request, `claimed` under an
    /// Idempotency-Key, asked for fault point `at`.
    ///
    /// # Errors
    /// Always, once the hold is over, when the fault point was hit.
    pub async fn fault_point(self, at: Fault, claimed: bool) -> ApiResult<()> {
        if !claimed || self.fault != Some(at) {
            return Ok(());
        }
        worker::console_log!("fault point {} reached", at.as_str());
        worker::Delay::from(std::time::Duration::from_secs(FAULT_HOLD_SECS)).await;
        Err(crate::error::ApiError::internal(format!(
            "fault point {} held",
            at.as_str()
        )))
    }
}
