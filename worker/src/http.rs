//! Request parsing and response envelopes shared by every route.

use bvs_core::types::{Env, Period};
use bvs_core::FieldError;
use serde::Serialize;
use worker::{Headers, Request, Response};

use crate::error::{ApiError, ApiResult, ErrorCode};

/// Largest JSON body any route accepts. A full batch of 100 deltas with
/// reasons and metadata fits well below this.
pub const BODY_BYTES_MAX: usize = 1024 * 1024;

/// Largest body of `POST /api/v1/balance/compare`: room for its
/// `deltas` list at the pinpoint limit (10,000 entries of ~150 bytes each
/// with long referenceIds). // spec: silent; issue 19 "documented limit"
pub const COMPARE_BODY_BYTES_MAX: usize = 4 * 1024 * 1024;

/// The headers every response carries (issue 25): a strict Content
/// Security Policy (scripts and styles from this origin only, no inline
/// script or style attribute, WebAssembly compiled for the verifier
/// (`'wasm-unsafe-eval'`), nothing may frame a page), no MIME sniffing and
/// no referrer. The same lines are in `public/_headers` for the static
/// assets Workers serves without running the Worker; a unit test holds the
/// two to one text (docs/security.md, "Pages").
pub const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
];

/// Reads the raw body, refusing anything over `max` bytes with 413.
pub async fn body_bytes(req: &mut Request, max: usize) -> ApiResult<Vec<u8>> {
    if let Some(len) = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<usize>().ok())
    {
        if len > max {
            return Err(too_large(max));
        }
    }
    let bytes = req
        .bytes()
        .await
        .map_err(|e| ApiError::BadRequest(format!("Unreadable request body: {e}")))?;
    if bytes.len() > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

fn too_large(max: usize) -> ApiError {
    ApiError::PayloadTooLarge(format!(
        "Request body is larger than the {max} bytes this route accepts"
    ))
}

/// A body's text, refusing non-UTF-8 and empty input with a clear 400. The
/// JSON itself is read (once) by `crate::fields::Fields`.
///
/// # Errors
/// 400 for a body that is not UTF-8, or only whitespace.
pub fn body_text(bytes: &[u8]) -> ApiResult<&str> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        ApiError::coded(ErrorCode::MalformedJson, "Request body is not valid UTF-8")
    })?;
    if text.trim().is_empty() {
        return Err(ApiError::coded(
            ErrorCode::MalformedJson,
            "Request body is empty; send a JSON object with Content-Type: application/json",
        ));
    }
    Ok(text)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DashboardEnvelope<'a, T: Serialize> {
    status_code: u16,
    data: &'a T,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BalanceEnvelope<'a, T: Serialize> {
    success: bool,
    status_code: u16,
    data: &'a T,
}

/// Dashboard and facts success: `{statusCode, data, message?}`.
pub fn dashboard<T: Serialize>(
    status: u16,
    data: &T,
    message: Option<&str>,
) -> ApiResult<Response> {
    json(
        status,
        &DashboardEnvelope {
            status_code: status,
            data,
            message,
        },
    )
}

/// Balance API success: `{success: true, statusCode, data}`.
pub fn balance<T: Serialize>(status: u16, data: &T) -> ApiResult<Response> {
    json(
        status,
        &BalanceEnvelope {
            success: true,
            status_code: status,
            data,
        },
    )
}

/// The dashboard envelope as text, for routes that store their answer
/// (idempotent replays).
pub fn dashboard_text<T: Serialize>(
    status: u16,
    data: &T,
    message: Option<&str>,
) -> ApiResult<String> {
    Ok(serde_json::to_string(&DashboardEnvelope {
        status_code: status,
        data,
        message,
    })?)
}

/// The balance envelope as text, for routes that store their answer
/// (idempotent replays).
pub fn balance_text<T: Serialize>(status: u16, data: &T) -> ApiResult<String> {
    Ok(serde_json::to_string(&BalanceEnvelope {
        success: true,
        status_code: status,
        data,
    })?)
}

pub fn json<T: Serialize>(status: u16, body: &T) -> ApiResult<Response> {
    raw_json(status, serde_json::to_string(body)?)
}

/// A JSON response from text that is already JSON.
pub fn raw_json(status: u16, text: String) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", "application/json; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    Ok(Response::ok(text)?
        .with_status(status)
        .with_headers(headers))
}

/// The error envelope, with `Retry-After` on 429 and the request's id as
/// `requestId`.
pub fn error_response(err: &ApiError, request_id: Option<&str>) -> worker::Result<Response> {
    let mut body = err.body();
    body.request_id = request_id.map(str::to_string);
    let text = serde_json::to_string(&body).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    if let Some(secs) = err.retry_after_secs() {
        headers.set("retry-after", &secs.to_string())?;
    }
    Ok(Response::ok(text)?
        .with_status(body.status_code)
        .with_headers(headers))
}

/// A typed path parameter as the route table read it (`router::Params::parse`),
/// for a handler that raises the parse's 400 after a check of its own
/// (a tile's log name); the route's auth is checked before the table reads
/// any parameter.
pub type PathParam<T> = ApiResult<T>;

/// A request header, if present.
pub fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// A query parameter, if present.
pub fn query_param(req: &Request, name: &str) -> ApiResult<Option<String>> {
    let url = req.url()?;
    Ok(url
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned()))
}

/// A query parameter's trimmed text: absent or empty is `None` ("any",
/// for a list's text filters).
pub fn query_text(req: &Request, name: &str) -> ApiResult<Option<String>> {
    Ok(query_param(req, name)?
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty()))
}

/// `environment`: sandbox (the default) or production.
///
/// # Errors
/// 400 naming `environment` for any other text.
pub fn query_env(req: &Request) -> ApiResult<Env> {
    match query_text(req, "environment")? {
        None => Ok(Env::Sandbox),
        Some(e) => Ok(Env::parse("environment", &e)?),
    }
}

/// `limit`: 1 to `max`, `default` when absent. Present but empty is not
/// a number (400), unlike the text filters, where empty means "any".
///
/// # Errors
/// 400 naming `limit` when it is not a whole number from 1 to `max`.
pub fn query_limit(req: &Request, default: u64, max: u64) -> ApiResult<u64> {
    let Some(text) = query_param(req, "limit")? else {
        return Ok(default);
    };
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => {
            Err(FieldError::new("limit", format!("must be a whole number from 1 to {max}")).into())
        }
    }
}

/// The query's `period` (`YYYY-MM`), if any.
///
/// # Errors
/// 400 naming `period` when it is not a month.
pub fn query_period(req: &Request) -> ApiResult<Option<Period>> {
    Ok(query_param(req, "period")?
        .map(|p| Period::parse(&p))
        .transpose()?)
}

/// The `asset` query parameter (`CODE/p`, issue 43); the default asset
/// when absent.
///
/// # Errors
/// 400 naming `asset` when it does not parse.
pub fn query_asset(req: &Request) -> ApiResult<bvs_core::types::Asset> {
    Ok(query_param(req, "asset")?
        .map(|a| bvs_core::types::Asset::parse("asset", &a))
        .transpose()?
        .unwrap_or_default())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_a_bad_request() {
        let e = body_text(&[b'"', 0xff, b'"']).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.body().message.contains("UTF-8"));
    }

    #[test]
    fn an_empty_body_is_a_bad_request() {
        assert_eq!(body_text(b" \n").unwrap_err().status(), 400);
    }
}

#[cfg(test)]
mod security_header_tests {
    use super::SECURITY_HEADERS;

    /// `public/_headers` gives the static assets the Worker never sees the
    /// same headers as every Worker response.
    #[test]
    fn the_static_assets_headers_file_says_what_the_worker_sends() {
        let file = include_str!("../../public/_headers");
        for (name, value) in SECURITY_HEADERS {
            let line = file
                .lines()
                .map(str::trim)
                .find(|l| l.to_ascii_lowercase().starts_with(&format!("{name}:")))
                .unwrap_or_else(|| panic!("public/_headers has no {name}"));
            let got = line
                .split_once(':')
                .map(|(_, v)| v.trim())
                .unwrap_or_default();
            assert_eq!(got, value, "{name}");
        }
        assert!(
            file.lines().any(|l| l.trim() == "/*"),
            "the rules cover every path"
        );
    }
}
