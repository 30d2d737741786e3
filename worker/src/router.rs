//! Every route of the service, in one table (`table::ROUTES`, one entry a
//! route). It is the single source that dispatch, request logging (a
//! route's pattern) and the OpenAPI completeness test share.

use std::future::Future;
use std::pin::Pin;

use worker::{Method, Request, Response};

use crate::app::App;
use crate::auth::limit;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;

mod matching;
mod table;
use matching::match_pattern;
pub use matching::{is_loopback_host, Params};
pub use table::ROUTES;

/// What a handler returns: its answer, later (handlers borrow the app).
pub type RouteFuture<'a> = Pin<Box<dyn Future<Output = ApiResult<Response>> + 'a>>;

/// A route's handler: the app, the request and its path parameters.
pub type Handler = for<'a> fn(&'a App, Request, Params) -> RouteFuture<'a>;

/// Who may reach a route's handler, checked by `dispatch` before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Everything else: the handler checks its key or session (or none).
    Open,
    /// Anyone without a key or session, limited per network (`limit::PUBLIC_RATE`).
    Public,
    /// The `/dev/*` routes: DEV_MODE only (their handlers check it), and only
    /// when the request came to a loopback host.
    Dev,
}

pub struct Route {
    pub method: Method,
    /// Path pattern; `:name` segments capture one path segment, a last
    /// `*name` the rest of the path. The request log names a route by it.
    pub pattern: &'static str,
    pub family: Family,
    pub handler: Handler,
}

/// Finds the route for a request: `Ok((route, params))`, or 404 / 405.
pub fn resolve(method: &Method, path: &str) -> ApiResult<(&'static Route, Params)> {
    let mut path_matched = false;
    for route in ROUTES {
        if let Some(params) = match_pattern(route.pattern, path) {
            if &route.method == method {
                return Ok((route, params));
            }
            path_matched = true;
        }
    }
    if path_matched {
        Err(ApiError::MethodNotAllowed(format!(
            "{method} is not supported on {path}"
        )))
    } else {
        Err(ApiError::coded(
            ErrorCode::RouteNotFound,
            format!("No route for {method} {path}"),
        ))
    }
}

impl Family {
    /// Lets a request through to the handler, or answers it: a `/dev/*`
    /// route on another host is 404; a public read spends its network's token.
    async fn admit(self, app: &App, req: &Request) -> ApiResult<()> {
        match self {
            Family::Open => Ok(()),
            Family::Dev if is_loopback_host(req.url()?.host_str()) => Ok(()),
            Family::Dev => Err(ApiError::NotFound("Not found".to_string())),
            Family::Public => {
                let address = http::header(req, "cf-connecting-ip");
                let bucket = limit::client_network(address.as_deref());
                limit::take(app, &bucket, limit::public_rate(app)).await
            }
        }
    }
}

/// Runs a resolved route: its family's check, then its handler.
pub async fn dispatch(
    app: &App,
    req: Request,
    route: &Route,
    params: Params,
) -> ApiResult<Response> {
    route.family.admit(app, &req).await?;
    (route.handler)(app, req, params).await
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
