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
    /// key's lease: `auth::authenticate_api_key_indexing`).
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

/// The emit handler's profiling stops, kept out of its body: each point
/// is one call that answers `Some(202 {})` when the run stops there.
/// Outside DEV_MODE, or without `EMIT_PROFILE_STOP`, every point passes.
#[derive(Clone, Copy)]
pub struct EmitStops(Option<Stop>);

impl EmitStops {
    pub fn of(app: &App) -> Self {
        EmitStops(stop(app))
    }

    /// Where the run stops, for the points past the handler (`ledger::submit`).
    pub fn stop(self) -> Option<Stop> {
        self.0
    }

    /// Before anything: [`Stop::Route`].
    pub fn at_route(self) -> Option<ApiResult<Response>> {
        (self.0 == Some(Stop::Route)).then(stopped)
    }

    /// After the key is authenticated: [`Stop::Auth`], or
    /// [`Stop::ControlRead`] after its one control-database read.
    pub async fn after_auth(self, app: &App) -> Option<ApiResult<Response>> {
        match self.0 {
            Some(Stop::Auth) => Some(stopped()),
            Some(Stop::ControlRead) => Some(match control_read(app).await {
                Ok(()) => stopped(),
                Err(e) => Err(e),
            }),
            _ => None,
        }
    }
}
