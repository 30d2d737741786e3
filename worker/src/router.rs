//! Every route of the service, in one table (`table::ROUTES`, one entry a
//! route). It is the single source that dispatch, request logging (a
//! route's pattern) and the OpenAPI completeness test share.

use std::future::Future;
use std::pin::Pin;

use worker::{Method, Request, Response};

use crate::app::App;
use crate::auth::{self, limit, KeyContext, Session};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;

mod matching;
mod table;
use matching::match_pattern;
pub use matching::{is_loopback_host, Params};
pub use table::ROUTES;

/// What a handler returns: its answer, later (handlers borrow the app).
pub type RouteFuture<'a> = Pin<Box<dyn Future<Output = ApiResult<Response>> + 'a>>;

/// A route's handler: the app, the request, its path parameters and who
/// its route's [`Auth`] found calling.
pub type Handler = for<'a> fn(&'a App, Request, Params, Caller) -> RouteFuture<'a>;

/// Who may reach a route's handler: checked once, by `dispatch`, before
/// the handler runs (after the route is found: an unknown route is 404,
/// a wrong method 405, whoever asks), and the handler is given what the
/// check found ([`Caller`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// No check here: anyone (health, the OpenAPI document, registration,
    /// login and the other account routes that check their own token).
    None,
    /// Anyone without a key or session, limited per network (`limit::PUBLIC_RATE`).
    Public,
    /// The `/dev/*` routes: DEV_MODE only (their handlers check it), and only
    /// when the request came to a loopback host.
    Dev,
    /// A `/dev/*` route (as [`Auth::Dev`], DEV_MODE checked here) for an
    /// API key of the balance API: [`Caller::Key`].
    DevKey,
    /// An API key of the balance API (`X-Api-Key`): [`Caller::Key`].
    Key,
    /// An API key of the balance API that the handler authenticates
    /// itself: the emit routes, which under a lease of the key's rate
    /// limit read their body before the key (`auth::authenticate_emit`).
    KeyEmit,
    /// A dashboard session (`Authorization: Bearer <JWT>`): [`Caller::Session`].
    Session,
    /// The operator (`Authorization: Bearer <ADMIN_TOKEN>`).
    Operator,
}

/// Who a route's [`Auth`] found calling, handed to its handler.
pub enum Caller {
    /// No one in particular (or checked by the handler).
    Anyone,
    Key(KeyContext),
    Session(Session),
}

impl Caller {
    /// The API key's context of a [`Auth::Key`] route.
    ///
    /// # Errors
    /// Internal error for a route declared with another auth.
    pub fn key(self) -> ApiResult<KeyContext> {
        match self {
            Caller::Key(ctx) => Ok(ctx),
            _ => Err(ApiError::internal("route declares no API key")),
        }
    }

    /// The session of a [`Auth::Session`] route.
    ///
    /// # Errors
    /// Internal error for a route declared with another auth.
    pub fn session(self) -> ApiResult<Session> {
        match self {
            Caller::Session(s) => Ok(s),
            _ => Err(ApiError::internal("route declares no session")),
        }
    }
}

pub struct Route {
    pub method: Method,
    /// Path pattern; `:name` segments capture one path segment, a last
    /// `*name` the rest of the path. The request log names a route by it.
    pub pattern: &'static str,
    pub auth: Auth,
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

impl Auth {
    /// Lets a request through to the handler with who is calling, or
    /// answers it: a `/dev/*` route on another host is 404; a public read
    /// spends its network's token; a key, session or operator route
    /// authenticates its caller.
    async fn admit(self, app: &App, req: &Request) -> ApiResult<Caller> {
        Ok(match self {
            Auth::None | Auth::KeyEmit => Caller::Anyone,
            Auth::Dev | Auth::DevKey if !is_loopback_host(req.url()?.host_str()) => {
                return Err(ApiError::NotFound("Not found".to_string()))
            }
            Auth::Dev => Caller::Anyone,
            Auth::DevKey => {
                app.require_dev_mode()?;
                Caller::Key(auth::authenticate_api_key(app, req).await?)
            }
            Auth::Public => {
                let address = http::header(req, "cf-connecting-ip");
                let bucket = limit::client_network(address.as_deref());
                limit::take(app, &bucket, limit::public_rate(app)).await?;
                Caller::Anyone
            }
            Auth::Key => Caller::Key(auth::authenticate_api_key(app, req).await?),
            Auth::Session => Caller::Session(auth::session(app, req).await?),
            Auth::Operator => {
                auth::require_admin(app, req)?;
                Caller::Anyone
            }
        })
    }
}

/// Runs a resolved route: its auth's check, then its handler with the caller.
pub async fn dispatch(
    app: &App,
    req: Request,
    route: &Route,
    params: Params,
) -> ApiResult<Response> {
    let caller = route.auth.admit(app, &req).await?;
    (route.handler)(app, req, params, caller).await
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
