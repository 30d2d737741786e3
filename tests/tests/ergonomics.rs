//! Issue 18, API ergonomics: every error has a stable `code` (and `field` /
//! `errors` for validation), every response a `Request-Id` that error bodies
//! echo and the request log line records.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use bvs_tests::client::{Api, Reply};
use bvs_tests::jwt;
use bvs_tests::tenant::{self, new_tenant};
use bvs_tests::{dev_var, fresh_state_dir, Wrangler};
use serde_json::json;

/// This file's own server, so the request log (wrangler's output) is ours to read.
fn server() -> &'static Wrangler {
    static SERVER: OnceLock<Wrangler> = OnceLock::new();
    SERVER.get_or_init(|| Wrangler::start(&fresh_state_dir("ergonomics")))
}

fn api() -> Api {
    Api::new(server().base_url.clone())
}

fn request_id(r: &Reply) -> String {
    r.headers
        .get("request-id")
        .unwrap_or_else(|| panic!("no Request-Id header: {}", r.text))
        .to_str()
        .unwrap()
        .to_string()
}

/// The error envelope keeps the spec's fields and adds `code` and the
/// response's `requestId`.
fn assert_error(r: &Reply, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.body["statusCode"], status, "{}", r.text);
    assert!(r.body["error"].is_string(), "{}", r.text);
    assert!(r.body["message"].is_string(), "{}", r.text);
    assert_eq!(r.body["code"], code, "{}", r.text);
    assert_eq!(r.body["requestId"], request_id(r), "{}", r.text);
}

#[test]
fn a_success_carries_a_request_id_that_the_log_line_records() {
    let r = api().get("/health");
    assert_eq!(r.status, 200);
    let id = request_id(&r);
    assert!(id.starts_with("req_") && id.len() == 24, "{id}");
    let log_path = server().log_path.clone();
    bvs_tests::eventually(std::time::Duration::from_secs(10), "log line", || {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        log.lines()
            .any(|l| l.contains(&format!("\"requestId\":\"{id}\"")) && l.contains("/health"))
            .then_some(())
    });
}

#[test]
fn a_well_formed_incoming_request_id_is_honoured_and_a_bad_one_replaced() {
    let a = api();
    let r = a.send(
        a.req(reqwest::Method::GET, "/health")
            .header("Request-Id", "abc-123.x_y"),
    );
    assert_eq!(request_id(&r), "abc-123.x_y");
    let r = a.send(
        a.req(reqwest::Method::GET, "/health")
            .header("X-Request-Id", "trace:42"),
    );
    assert_eq!(request_id(&r), "trace:42");
    let r = a.send(
        a.req(reqwest::Method::GET, "/health")
            .header("Request-Id", "bad id!"),
    );
    assert!(request_id(&r).starts_with("req_"));
}

#[test]
fn route_method_and_body_errors_have_codes() {
    let a = api();
    assert_error(&a.get("/no/such/route"), 404, "route_not_found");
    assert_error(
        &a.send(a.req(reqwest::Method::DELETE, "/health")),
        405,
        "method_not_allowed",
    );
    assert_error(
        &a.post_raw("/dashboard/auth/login", "{\"email\": "),
        400,
        "malformed_json",
    );
}

#[test]
fn a_static_page_passed_through_carries_a_request_id() {
    let r = api().get("/verify/00");
    assert!(r.headers.get("request-id").is_some(), "{:?}", r.headers);
}

#[test]
fn validation_names_one_field_in_field_and_several_in_errors() {
    let a = api();
    let one = tenant::register(&a, "not-an-email", tenant::TEST_PASSWORD);
    assert_error(&one, 400, "validation_failed");
    assert_eq!(one.body["field"], "email", "{}", one.text);
    assert!(one.body.get("errors").is_none());

    let several = a.post("/dashboard/auth/register", &json!({}));
    assert_error(&several, 400, "validation_failed");
    let errors = several.body["errors"].as_array().expect("errors[]");
    assert!(errors.len() >= 2, "{}", several.text);
    assert!(errors
        .iter()
        .all(|e| e["field"].is_string() && e["reason"].is_string()));
    assert!(several.body.get("field").is_none());
}

#[test]
fn the_named_key_and_plan_cases_have_their_codes() {
    let a = api();
    let t = new_tenant(&a);
    assert_error(
        &a.keyed("bvs_test_nope").get("/api/v1/balance/customers"),
        401,
        "invalid_api_key",
    );
    assert_error(
        &a.keyed(&t.test_key)
            .get("/api/v1/balance/delta/anc_missing"),
        404,
        "record_not_found",
    );
    assert_error(
        &a.keyed(&t.test_key)
            .get(&format!("/api/v1/facts/{}", "ab".repeat(32))),
        404,
        "fact_not_found",
    );
    // Free plan: no Production.
    assert_error(
        &tenant::provision(&a, &t.jwt, "mainnet"),
        403,
        "production_requires_plan",
    );
    assert_error(
        &tenant::request_key(&a, &t.jwt, "live"),
        403,
        "environment_not_provisioned",
    );
    let key_id = tenant::key_id(&t.test_key);
    assert_eq!(tenant::toggle_key(&a, &t.jwt, &key_id).status, 200);
    assert_error(
        &a.keyed(&t.test_key).get("/api/v1/balance/customers"),
        401,
        "api_key_disabled",
    );
}

#[test]
fn jwt_cases_have_their_codes() {
    let a = api();
    let t = new_tenant(&a);
    let mut claims = jwt::claims(&t.jwt);
    claims["exp"] = json!(jwt::now_secs() - 60);
    let expired = jwt::sign(
        &json!({"alg": "HS256", "typ": "JWT"}),
        &claims,
        dev_var("JWT_SECRET").as_bytes(),
    );
    assert_error(
        &tenant::get_jwt(&a, "/dashboard/auth/profile", &expired),
        401,
        "jwt_expired",
    );
    assert_error(
        &tenant::get_jwt(&a, "/dashboard/auth/profile", "x.y.z"),
        401,
        "invalid_jwt",
    );
    assert_error(
        &a.get("/dashboard/auth/profile"),
        401,
        "authentication_required",
    );
}

#[test]
fn a_spent_rate_limit_is_rate_limited_with_retry_after() {
    let a = api();
    let t = new_tenant(&a);
    // Eight clients at once until one is limited: together they outrun the
    // 10/s refill of the burst of 20 however slow each request is (a loaded
    // machine answers one in ~300 ms, so a fixed 48 requests can spread
    // over as long as the refill needs to keep up).
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let base = a.base.clone();
            let key = t.test_key.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                let api = Api::new(base);
                for _ in 0..150 {
                    if seen.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let r = api.keyed(&key).get("/api/v1/balance/customers");
                    if r.status == 429 {
                        seen.store(true, std::sync::atomic::Ordering::Relaxed);
                        return Some(r);
                    }
                }
                None
            })
        })
        .collect();
    let limited = handles
        .into_iter()
        .filter_map(|h| h.join().unwrap())
        .next()
        .expect("a sandbox key (10/s, burst 20) is limited by eight clients at once");
    assert_error(&limited, 429, "rate_limited");
    assert!(limited.headers.get("retry-after").is_some());
}

fn header_u64(r: &Reply, name: &str) -> u64 {
    r.headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name}: {:?}", r.headers))
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn keyed_responses_carry_rate_limit_headers_that_count_down_and_reset() {
    let a = api();
    let t = new_tenant(&a);
    let k = a.keyed(&t.test_key);
    let first = k.get("/api/v1/balance/customers");
    assert_eq!(first.status, 200, "{}", first.text);
    // Sandbox: 10/s, burst 20 (draft-07 fields: limit = burst).
    assert_eq!(header_u64(&first, "ratelimit-limit"), 20);
    let r1 = header_u64(&first, "ratelimit-remaining");
    assert!(r1 <= 19, "{r1}");
    assert!(header_u64(&first, "ratelimit-reset") >= 1);
    let second = k.get("/api/v1/balance/customers");
    let r2 = header_u64(&second, "ratelimit-remaining");
    // One token spent; at most a few refilled in between on a slow machine.
    assert!(r2 < 20, "{r2}");
    // Refilled to the full burst after the reset time.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let later = k.get("/api/v1/balance/customers");
    assert_eq!(
        header_u64(&later, "ratelimit-remaining"),
        19,
        "{:?}",
        later.headers
    );
    // Unkeyed responses have none.
    assert!(a.get("/health").headers.get("ratelimit-limit").is_none());
}

#[test]
fn a_public_route_answers_a_cors_preflight() {
    let a = api();
    let r = a.send(
        a.req(reqwest::Method::OPTIONS, "/api/v1/log/sandbox/checkpoint")
            .header("Origin", "https://auditor.example")
            .header("Access-Control-Request-Method", "GET"),
    );
    assert_eq!(r.status, 204, "{}", r.text);
    let h = |n: &str| {
        r.headers
            .get(n)
            .unwrap_or_else(|| panic!("no {n}"))
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(h("access-control-allow-origin"), "*");
    assert!(h("access-control-allow-methods").contains("GET"));
    assert!(h("access-control-allow-headers").contains("Request-Id"));
    assert_eq!(h("access-control-max-age"), "86400");
    let expose = h("access-control-expose-headers");
    for name in ["Retry-After", "Request-Id", "RateLimit-Remaining"] {
        assert!(expose.contains(name), "{expose}");
    }
    assert!(r.headers.get("request-id").is_some());
}

#[test]
fn the_usage_route_counts_what_emits_consumed() {
    use bvs_tests::ledger::Delta;
    let a = api();
    let t = new_tenant(&a);
    let before = tenant::get_jwt(&a, "/dashboard/usage", &t.jwt);
    assert_eq!(before.status, 200, "{}", before.text);
    let sandbox = |r: &Reply| {
        r.body["data"]["environments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["environment"] == "sandbox")
            .cloned()
            .unwrap()
    };
    let s = sandbox(&before);
    assert_eq!(s["plan"], "free");
    assert_eq!(s["quota"], 10);
    assert_eq!(s["used"], 0);
    assert_eq!(s["remaining"], 10);
    let resets = s["resetsAt"].as_str().unwrap();
    assert!(
        resets.ends_with("-01T00:00:00.000Z") || resets.ends_with("-01T00:00:00Z"),
        "{resets}"
    );

    let k = a.keyed(&t.test_key);
    for i in 0..3 {
        k.emit(&Delta::new(&format!("cust_{i}"), 5, "usage test"));
    }
    let after = sandbox(&tenant::get_jwt(&a, "/dashboard/usage", &t.jwt));
    assert_eq!(after["used"], 3, "{after}");
    assert_eq!(after["remaining"], 7, "{after}");
    assert_error(&a.get("/dashboard/usage"), 401, "authentication_required");
}

#[test]
fn the_plan_limit_case_has_its_code() {
    let a = api();
    let t = new_tenant(&a);
    let k = a.keyed(&t.test_key);
    let items: Vec<serde_json::Value> = (0..10)
        .map(|i| json!({"customerId": "cus_quota", "delta": 1, "reason": format!("item {i}")}))
        .collect();
    let ok = k.batch(&items);
    assert!((200..300).contains(&ok.status), "{}", ok.text);
    let over = k.post(
        "/api/v1/balance/delta",
        &json!({"customerId": "cus_quota", "delta": 1, "reason": "one too many"}),
    );
    assert_error(&over, 402, "plan_limit_exceeded");
}

#[test]
fn a_balance_validation_error_names_its_field() {
    let a = api();
    let t = new_tenant(&a);
    let bad = a.keyed(&t.test_key).post(
        "/api/v1/balance/delta",
        &json!({"customerId": "cus_v", "delta": 0, "reason": "zero"}),
    );
    assert_error(&bad, 400, "validation_failed");
    assert_eq!(bad.body["field"], "delta", "{}", bad.text);
}

/// Log paths take the environment's other names as aliases
/// (docs/glossary.md): `test`/`testnet` read the sandbox log,
/// `live`/`mainnet` the production one; anything else is 404.
#[test]
fn log_paths_accept_the_other_environment_names_as_aliases() {
    let a = api();
    for (canonical, aliases) in [
        ("sandbox", ["test", "testnet"]),
        ("production", ["live", "mainnet"]),
    ] {
        let key = a.get(&format!("/api/v1/log/{canonical}/key"));
        assert_eq!(key.status, 200, "{}", key.text);
        for alias in aliases {
            let same = a.get(&format!("/api/v1/log/{alias}/key"));
            assert_eq!(same.status, 200, "{alias}: {}", same.text);
            assert_eq!(same.body["data"], key.body["data"], "{alias}");
            let head = a.get(&format!("/api/v1/log/{alias}/checkpoint"));
            assert_eq!(head.status, 200, "{alias}: {}", head.text);
        }
    }
    let unknown = a.get("/api/v1/log/staging/key");
    assert_error(&unknown, 404, "record_not_found");
    assert!(
        unknown.body["message"].as_str().unwrap().contains("live"),
        "{}",
        unknown.text
    );
}
