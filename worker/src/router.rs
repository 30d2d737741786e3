//! Every route of the service, in one table. `ROUTES` is the single source
//! that dispatch, request logging and the OpenAPI completeness test share.

use worker::{Method, Request, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::routes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteId {
    Health,
    DevPingCreate,
    DevPingGet,
}

pub struct Route {
    pub method: Method,
    /// Path pattern; `:name` segments capture one path segment.
    pub pattern: &'static str,
    pub id: RouteId,
}

pub const ROUTES: &[Route] = &[
    Route {
        method: Method::Get,
        pattern: "/health",
        id: RouteId::Health,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/ping",
        id: RouteId::DevPingCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/dev/ping/:id",
        id: RouteId::DevPingGet,
    },
];

/// Path parameters captured by a pattern, in order.
pub struct Params(Vec<(&'static str, String)>);

impl Params {
    pub fn get(&self, name: &str) -> ApiResult<&str> {
        self.0
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| ApiError::internal(format!("route has no parameter {name}")))
    }
}

fn match_pattern(pattern: &'static str, path: &str) -> Option<Params> {
    let mut params = Vec::new();
    let mut want = pattern.trim_matches('/').split('/');
    let mut have = path.trim_matches('/').split('/');
    loop {
        match (want.next(), have.next()) {
            (None, None) => return Some(Params(params)),
            (Some(w), Some(h)) => {
                if let Some(name) = w.strip_prefix(':') {
                    if h.is_empty() {
                        return None;
                    }
                    let decoded = percent_decode(h)?;
                    params.push((name, decoded));
                } else if w != h {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
        Err(ApiError::NotFound(format!("No route for {method} {path}")))
    }
}

pub async fn dispatch(app: &App, req: Request, id: RouteId, params: Params) -> ApiResult<Response> {
    match id {
        RouteId::Health => routes::health::get(),
        RouteId::DevPingCreate => routes::dev::ping_create(app, req).await,
        RouteId::DevPingGet => routes::dev::ping_get(app, params.get("id")?).await,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_captures_its_parameters() {
        let p = match_pattern(
            "/api/v1/balance/derive/:customerId",
            "/api/v1/balance/derive/cus%3A1",
        )
        .unwrap();
        assert_eq!(p.get("customerId").unwrap(), "cus:1");
    }

    #[test]
    fn an_unknown_path_is_404_and_a_wrong_method_is_405() {
        assert_eq!(resolve(&Method::Get, "/nope").err().unwrap().status(), 404);
        assert_eq!(
            resolve(&Method::Delete, "/health").err().unwrap().status(),
            405
        );
    }
}
