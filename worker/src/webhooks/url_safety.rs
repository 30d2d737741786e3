//! Which urls a webhook may point at. Production: `https://` only, and never
//! a host that names this side of the network (private, loopback,
//! link-local, shared, metadata, reserved). DEV_MODE additionally allows
//! loopback hosts, over `http://` too, so local tests can run a receiver.

use std::net::{Ipv4Addr, Ipv6Addr};

use worker::url::{Host, Url};

/// Longest webhook url, in bytes. // spec: silent
pub const URL_BYTES_MAX: usize = 2048;

/// Host names that resolve to internal or metadata services.
const BLOCKED_NAMES: &[&str] = &[
    "localhost",
    "metadata",
    "metadata.google.internal",
    "instance-data",
];
/// Name suffixes that are never public.
const BLOCKED_SUFFIXES: &[&str] = &[
    ".localhost",
    ".local",
    ".internal",
    ".localdomain",
    ".home.arpa",
];

/// Checks `text` as a webhook url; `Err(reason)` for a 400 on `url`.
pub fn check(text: &str, dev_mode: bool) -> Result<Url, String> {
    if text.len() > URL_BYTES_MAX {
        return Err(format!("must be at most {URL_BYTES_MAX} bytes"));
    }
    let url = Url::parse(text.trim()).map_err(|e| format!("is not a valid absolute url: {e}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials (user:password@)".into());
    }
    let host = url.host().ok_or("must have a host")?;
    let loopback = is_loopback(&host);
    match url.scheme() {
        "https" => {}
        "http" if dev_mode && loopback => {}
        "http" => {
            return Err(
                "must use https:// (http:// is allowed only to loopback in DEV_MODE)".into(),
            )
        }
        other => return Err(format!("must use https://, not {other}://")),
    }
    if dev_mode && loopback {
        return Ok(url);
    }
    if let Some(why) = internal(&host) {
        return Err(format!("must not point at a {why} address"));
    }
    Ok(url)
}

fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Why a host is not public, or `None` when it may be used.
fn internal(host: &Host<&str>) -> Option<&'static str> {
    match host {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") {
                Some("loopback")
            } else if BLOCKED_NAMES.contains(&d.as_str())
                || BLOCKED_SUFFIXES.iter().any(|s| d.ends_with(s))
                || !d.contains('.')
            {
                Some("private or metadata")
            } else {
                None
            }
        }
        Host::Ipv4(ip) => ipv4_internal(*ip),
        Host::Ipv6(ip) => ipv6_internal(ip),
    }
}

fn ipv4_internal(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_link_local() {
        // 169.254.0.0/16, which includes 169.254.169.254 (cloud metadata).
        Some("link-local or metadata")
    } else if ip.is_private() {
        Some("private")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if a == 0
        || ip.is_broadcast()
        || ip.is_multicast()
        || a >= 240
        || (a == 192 && b == 0 && c == 0)
        || ip.is_documentation()
        || (a == 198 && (b & 0xfe) == 18)
    {
        Some("reserved")
    } else {
        None
    }
}

fn ipv6_internal(ip: &Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return ipv4_internal(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("reserved")
    } else if (first & 0xffc0) == 0xfe80 {
        Some("link-local")
    } else if (first & 0xfe00) == 0xfc00 {
        Some("private (unique local)")
    } else if first == 0x64 && ip.segments()[1] == 0xff9b {
        // NAT64 maps IPv4 addresses, private ones included.
        Some("NAT64")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("reserved")
    } else if ip.segments()[..6] == [0; 6] {
        // IPv4-compatible (deprecated) ::a.b.c.d.
        Some("reserved")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_accepts_only_public_https_urls() {
        assert!(check("https://hooks.example.com/bvs", false).is_ok());
        assert!(check("https://93.184.216.34:8443/x", false).is_ok());
        for bad in [
            "http://hooks.example.com/bvs",
            "ftp://hooks.example.com/",
            "https://localhost/x",
            "https://127.0.0.1/x",
            "https://2130706433/x",
            "https://0x7f000001/x",
            "https://10.1.2.3/x",
            "https://172.16.0.1/x",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/x",
            "https://0.0.0.0/x",
            "https://[::1]/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://metadata.google.internal/x",
            "https://printer.local/x",
            "https://intranet/x",
            "https://user:pass@hooks.example.com/x",
            "not a url",
        ] {
            assert!(check(bad, false).is_err(), "{bad} must be refused");
        }
    }

    #[test]
    fn dev_mode_also_allows_loopback_over_http_and_nothing_else_private() {
        assert!(check("http://127.0.0.1:8787/hook", true).is_ok());
        assert!(check("http://localhost:9000/hook", true).is_ok());
        assert!(check("http://[::1]:9000/hook", true).is_ok());
        assert!(check("http://10.0.0.1/hook", true).is_err());
        assert!(check("http://hooks.example.com/hook", true).is_err());
        assert!(check("https://192.168.0.1/hook", true).is_err());
    }
}
