//! How a request's path meets a route's pattern: `:name` segments capture
//! one percent-decoded path segment, and a last `*name` segment captures
//! the rest of the path (one or more segments, `/`-joined; the tlog-tiles
//! routes' `tile/<L>/<N>[.p/<W>]`). And the `/dev/*` routes' host guard.

use crate::error::{ApiError, ApiResult};

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

    /// An id parameter, typed as it is read (nothing to check: an unknown
    /// id finds nothing).
    pub fn id<T>(&self, name: &str, typed: fn(String) -> T) -> ApiResult<T> {
        self.get(name).map(|text| typed(text.to_owned()))
    }

    /// A typed parameter, read once at the route's edge with the parser
    /// that names the field in its 4xx.
    pub fn parse<T, E: Into<ApiError>>(
        &self,
        name: &str,
        parse: fn(&str) -> Result<T, E>,
    ) -> ApiResult<T> {
        parse(self.get(name)?).map_err(Into::into)
    }
}

pub(super) fn match_pattern(pattern: &'static str, path: &str) -> Option<Params> {
    let mut params = Vec::new();
    let mut want = pattern.trim_matches('/').split('/');
    let mut have = path.trim_matches('/').split('/');
    loop {
        match (want.next(), have.next()) {
            (None, None) => return Some(Params(params)),
            (Some(w), Some(h)) => {
                if let Some(name) = w.strip_prefix('*') {
                    let rest: Vec<&str> = std::iter::once(h).chain(have.by_ref()).collect();
                    if rest.iter().any(|s| s.is_empty()) {
                        return None;
                    }
                    let decoded: Option<Vec<String>> =
                        rest.iter().map(|s| percent_decode(s)).collect();
                    params.push((name, decoded?.join("/")));
                    return Some(Params(params));
                }
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

/// Whether `host` is this machine (a deployed Worker is never reached so): the
/// `/dev/*` routes' second guard after `DEV_MODE`, for a DEV_MODE build published by mistake.
pub fn is_loopback_host(host: Option<&str>) -> bool {
    match host {
        Some("localhost") => true,
        Some(h) => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}
