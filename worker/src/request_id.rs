//! `Request-Id`: one id per request, on every response, in error bodies
//! (`requestId`) and in the request log line.
//!
//! A well-formed incoming `Request-Id` (or, failing that, `X-Request-Id`) is
//! honoured so a caller can correlate its own logs with ours: 1 to 64
//! characters from `A-Z a-z 0-9 . _ : -`. Anything else is ignored and a new
//! `req_<20 base62>` id is made.

use worker::{Headers, Request, Response};

use crate::ids;

pub const HEADER: &str = "request-id";
const MAX_LEN: usize = 64;

/// Whether a caller-supplied id is safe to echo in headers, bodies and logs.
pub fn well_formed(id: &str) -> bool {
    (1..=MAX_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// The caller's well-formed id, or a fresh one.
pub fn for_request(req: &Request) -> String {
    for name in [HEADER, "x-request-id"] {
        if let Some(id) = req.headers().get(name).ok().flatten() {
            let id = id.trim();
            if well_formed(id) {
                return id.to_string();
            }
        }
    }
    ids::new_id("req").unwrap_or_else(|_| "req_unavailable".to_string())
}

/// Sets `Request-Id` on a response. Responses passed through from Workers
/// assets have immutable headers, so the headers are copied into a fresh set.
pub fn stamp(response: Response, request_id: &str) -> worker::Result<Response> {
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        headers.append(&name, &value)?;
    }
    headers.set(HEADER, request_id)?;
    Ok(response.with_headers(headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_ids_are_honoured() {
        assert!(well_formed("abc-123_x.y:z"));
        assert!(!well_formed(""));
        assert!(!well_formed("a b"));
        assert!(!well_formed("a\r\nSet-Cookie: x"));
        assert!(!well_formed(&"a".repeat(65)));
    }
}
