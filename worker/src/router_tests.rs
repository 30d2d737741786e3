//! Tests of `router` (kept apart so router.rs stays under 600 lines).
#![allow(clippy::unwrap_used)]

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
fn a_tail_pattern_captures_the_rest_of_the_path() {
    let p = match_pattern(
        "/log/:name/tile/*tile",
        "/log/sandbox-1/tile/0/x001/234.p/7",
    )
    .unwrap();
    assert_eq!(p.get("name").unwrap(), "sandbox-1");
    assert_eq!(p.get("tile").unwrap(), "0/x001/234.p/7");
    assert!(match_pattern("/log/:name/tile/*tile", "/log/sandbox/tile").is_none());
    assert!(match_pattern("/log/:name/tile/*tile", "/log/sandbox/tile/0//000").is_none());
    assert!(match_pattern("/log/:name/tile/*tile", "/log/sandbox/checkpoint").is_none());
}

#[test]
fn only_loopback_hosts_are_local() {
    for h in ["localhost", "127.0.0.1", "[::1]", "127.0.0.2"] {
        assert!(is_loopback_host(Some(h)), "{h}");
    }
    for h in [
        "bvs.example.com",
        "balance-verification.acme.workers.dev",
        "10.0.0.1",
        "[2001:db8::1]",
    ] {
        assert!(!is_loopback_host(Some(h)), "{h}");
    }
    assert!(!is_loopback_host(None));
}

#[test]
fn an_unknown_path_is_404_and_a_wrong_method_is_405() {
    assert_eq!(resolve(&Method::Get, "/nope").err().unwrap().status(), 404);
    assert_eq!(
        resolve(&Method::Delete, "/health").err().unwrap().status(),
        405
    );
}

#[test]
fn every_route_is_declared_once_and_a_typed_parameter_names_its_field() {
    let mut seen = std::collections::BTreeSet::new();
    for r in ROUTES {
        assert!(
            seen.insert((r.method.to_string(), r.pattern)),
            "{}",
            r.pattern
        );
    }
    let (route, p) = resolve(&Method::Get, "/api/v1/balance/derive/a%20b").unwrap();
    assert_eq!(route.pattern, "/api/v1/balance/derive/:customerId");
    let e = p
        .parse("customerId", bvs_core::types::CustomerId::parse)
        .err()
        .unwrap();
    assert_eq!(e.status(), 400);
    assert!(format!("{e:?}").contains("customerId"), "{e:?}");
    let (route, _) = resolve(&Method::Get, "/dev/ping/1").unwrap();
    assert_eq!(route.auth, Auth::Dev);
}

#[test]
fn every_route_declares_who_may_call_it() {
    // The account routes that come before a session check their own token.
    let account = [
        "/dashboard/auth/register",
        "/dashboard/auth/login",
        "/dashboard/auth/verify",
        "/dashboard/auth/resend-verification-email",
        "/dashboard/auth/request-password-reset",
        "/dashboard/auth/reset-password",
    ];
    for r in ROUTES {
        let p = r.pattern;
        let want = if p == "/api/v1/balance/delta" || p == "/api/v1/balance/delta/batch" {
            Auth::KeyEmit
        } else if p.starts_with("/admin/") {
            Auth::Operator
        } else if p.starts_with("/dashboard/") && !account.contains(&p) {
            Auth::Session
        } else if p.starts_with("/api/v1/balance/")
            || p.starts_with("/api/v1/facts")
            || p.starts_with("/api/v1/liabilities")
        {
            Auth::Key
        } else {
            continue;
        };
        assert_eq!(r.auth, want, "{} {p}", r.method);
    }
    let (route, _) = resolve(&Method::Post, "/dev/liabilities/seed").unwrap();
    assert_eq!(route.auth, Auth::DevKey);
}
