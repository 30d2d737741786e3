//! The Cloudflare Worker: translates between HTTP / D1 / Queues / Cron and
//! `bvs_core`. Entry points: `fetch`, `queue`, `scheduled`.

mod agreement;
mod app;
mod auth;
mod consumer;
mod cron;
mod emit;
mod error;
mod facts;
mod fields;
mod http;
mod idempotency;
mod ids;
mod ledger;
mod ledgers;
mod liabilities;
mod limiter;
mod limits;
mod mail;
mod meter;
mod owned;
mod ping;
mod plan;
mod profile;
mod proofs;
mod quota;
mod request_id;
mod request_log;
mod retention;
mod roundtrips;
mod router;
mod routes;
mod search;
mod secret;
mod sequencer;
mod store;
mod tenant;
mod views;
mod webhooks;
mod witness;

pub mod jobs;

use worker::{
    event, Context, Env, MessageBatch, Request, Response, ScheduleContext, ScheduledEvent,
};

use crate::app::App;

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    // The request's storage round trips are its own, however many
    // requests the isolate interleaves with it.
    roundtrips::scoped(respond(req, env, ctx)).await
}

async fn respond(req: Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let app = App::for_request(env, ctx);
    let method = req.method();
    let path = req.path();
    let request_id = request_id::for_request(&req);
    let public = path.starts_with("/api/v1/verify/")
        || path.starts_with("/api/v1/log/")
        || path.starts_with("/log/");
    let capture = request_log::begin(&req, &method, &path);
    let (pattern, result) = if public && method == worker::Method::Options {
        // CORS preflight for the public proof routes.
        ("(preflight)", preflight())
    } else {
        match router::resolve(&method, &path) {
            Ok((route, params)) => (
                route.pattern,
                router::dispatch(&app, req, route, params).await,
            ),
            Err(e) => ("(none)", Err(e)),
        }
    };
    let mut code = None;
    let response = match result {
        Ok(r) => r,
        Err(e) => {
            if let error::ApiError::Internal(cause) = &e {
                worker::console_error!("internal error on {method} {pattern}: {cause}");
            }
            code = Some(e.code().as_str());
            http::error_response(&e, Some(&request_id))?
        }
    };
    // Every response, asset pass-throughs included, names its request and
    // carries the pages' security headers (`http::SECURITY_HEADERS`; static
    // assets served without the Worker get them from public/_headers).
    let response = request_id::stamp(response, &request_id)?;
    set_headers(&app, &response, public)?;
    log_line(&app, &method, pattern, &response, &request_id);
    // After the response: the request log (best effort, batched).
    request_log::finish(
        &app,
        capture,
        request_log::Outcome {
            route: pattern,
            status: response.status_code(),
            code,
            request_id: &request_id,
            response: &response,
        },
    )
    .await;
    Ok(response)
}

/// The headers every response carries: the pages' security headers, a
/// keyed request's rate limit, and on the public proof routes the CORS grant.
fn set_headers(app: &App, response: &Response, public: bool) -> worker::Result<()> {
    for (name, value) in http::SECURITY_HEADERS {
        response.headers().set(name, value)?;
    }
    // Keyed requests report their bucket (draft-ietf-httpapi-ratelimit-headers-07
    // fields: quota units, whole tokens left, delta-seconds until full).
    if let Some(rl) = app.rate_limit() {
        response
            .headers()
            .set("ratelimit-limit", &rl.limit.to_string())?;
        response
            .headers()
            .set("ratelimit-remaining", &rl.remaining.to_string())?;
        response
            .headers()
            .set("ratelimit-reset", &rl.reset_secs.to_string())?;
    }
    // The public proof routes are readable from any origin (the verify
    // page, auditors' tools); nothing else is.
    if public {
        response.headers().set("access-control-allow-origin", "*")?;
        response.headers().set(
            "access-control-expose-headers",
            "Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset",
        )?;
    }
    Ok(())
}

/// The request's one structured console line (never secrets, never bodies),
/// with its storage round trips under DEV_MODE.
fn log_line(
    app: &App,
    method: &worker::Method,
    pattern: &str,
    response: &Response,
    request_id: &str,
) {
    // One structured line per request; never secrets, never bodies.
    let elapsed = crate::app::clock_ms().saturating_sub(app.now_ms);
    let mut line = serde_json::json!({
        "method": method.to_string(),
        "route": pattern,
        "status": response.status_code(),
        "durationMs": elapsed,
        "tenantId": app.tenant(),
        "requestId": request_id,
    });
    // DEV_MODE: the storage round trips this request made (issue 16).
    if app.dev_mode() {
        let used = roundtrips::used();
        line["d1Calls"] = used.d1.into();
        line["d1Trips"] = used.d1_sequential.into();
        line["doCalls"] = used.durable_object.into();
        line["kdfCalls"] = used.kdf.into();
        line["d1Queries"] = used.queries.into();
        line["subrequests"] = used.subrequests.into();
    }
    worker::console_log!("{line}");
}

/// DEV_MODE: what a queue batch or cron run used of a deployed Worker's
/// limits (issue 42; `limits`), one log line per invocation.
fn invocation_line(app: &App, kind: &str, name: &str) {
    if app.dev_mode() {
        let used = roundtrips::used();
        let line = serde_json::json!({
            "invocation": kind,
            "name": name,
            "d1Queries": used.queries,
            "subrequests": used.subrequests,
        });
        worker::console_log!("{line}");
    }
}

/// `OPTIONS` on a public route: 204 with the CORS grant.
fn preflight() -> error::ApiResult<Response> {
    let headers = worker::Headers::new();
    headers.set("access-control-allow-methods", "GET, OPTIONS")?;
    headers.set(
        "access-control-allow-headers",
        "Content-Type, Request-Id, X-Request-Id",
    )?;
    headers.set("access-control-max-age", "86400")?;
    Ok(Response::empty()?.with_status(204).with_headers(headers))
}

#[event(queue)]
async fn queue(
    batch: MessageBatch<serde_json::Value>,
    env: Env,
    _ctx: Context,
) -> worker::Result<()> {
    let app = App::new(env);
    let queue = batch.queue();
    // One invocation: its queries and subrequests held to the limits.
    roundtrips::scoped(async {
        consumer::handle_batch(&app, batch).await;
        invocation_line(&app, "queue", &queue);
    })
    .await;
    Ok(())
}

#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    // The scheduled time is "now" for cron work, so tests can move it.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let now_ms = event.schedule() as u64;
    let app = App::with_now(env, now_ms);
    let cron = event.cron();
    roundtrips::scoped(async {
        cron::run(&app, &cron).await;
        invocation_line(&app, "cron", &cron);
    })
    .await;
}
