//! Attack-minded tests through `wrangler dev`: another tenant's ids, forged
//! JWTs, keys of the wrong environment, secrets after creation, oversized,
//! deeply nested and non-UTF-8 bodies, SQL metacharacters.
//!
//! This binary runs its own `wrangler dev` (not `shared()`) so that it can
//! read that server's log file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bvs_tests::client::Api;
use bvs_tests::dev_var;
use bvs_tests::jwt::{b64url, claims, hs256, now_secs, sign};
use bvs_tests::ledger::{Delta, BATCH, CHECKPOINT, COMPARE, CUSTOMERS, DELTA, FACTS};
use bvs_tests::tenant::{
    create_webhook, delete_jwt, get_jwt, key_id, key_secret, new_tenant, new_tenant_on_plan,
    patch_jwt, post_jwt, provision_production, toggle_key, toggle_webhook, Tenant,
};
use reqwest::Method;
use serde_json::{json, Value};

bvs_tests::own_server!("attacks");

fn unique(label: &str) -> String {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{label}_{n}")
}

fn delta(customer: &str, amount: f64) -> Delta {
    Delta::new(customer, amount, "attack test")
}

/// A webhook of `t` with `description`; returns `data`.
fn webhook(api: &Api, t: &Tenant, description: &str) -> Value {
    let r = create_webhook(
        api,
        &t.jwt,
        "https://example.com/hooks/bvs",
        &["delta.verified"],
        description,
    );
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["data"].clone()
}

// ------------------------------------------------------------------ BOLA

#[test]
fn every_route_that_takes_an_object_id_answers_404_for_another_tenants_id() {
    let api = api();
    // Enterprise keys: this test makes many requests back to back, and rate limits are not its subject.
    let a = new_tenant_on_plan(&api, "enterprise");
    let b = new_tenant_on_plan(&api, "enterprise");
    let (ka, kb) = (api.keyed(&a.test_key), api.keyed(&b.test_key));
    let customer = unique("bola_cust");
    let d = ka.emit_anchored(&delta(&customer, 5.0));
    let anchor = d["anchorId"].as_str().unwrap().to_string();
    let cp = ka.checkpoint(&json!({"customerId": customer}));
    assert_eq!(cp.status, 202, "{}", cp.text);
    let fact = ka.submit_fact(&json!({"content": unique("a fact of tenant a")}));
    assert_eq!(fact.status, 202, "{}", fact.text);
    let hash = fact.body["data"]["contentHash"]
        .as_str()
        .unwrap()
        .to_string();
    let receipt = ka.receipt(&customer, "");
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let a_key_id = key_id(&a.test_key);
    let webhook = webhook(&api, &a, "tenant a's hook");
    let hook = webhook["id"].as_str().unwrap().to_string();

    // Tenant B, with its own valid credentials, names A's objects.
    let balance_gets = [
        format!("/api/v1/balance/delta/{anchor}"),
        format!("/api/v1/balance/derive/{customer}"),
        format!("/api/v1/balance/customers/{customer}"),
        format!("/api/v1/balance/receipt/{customer}"),
        format!("/api/v1/facts/{hash}"),
        format!("/api/v1/facts/{hash}/verify"),
    ];
    for path in &balance_gets {
        let r = kb.get(path);
        assert_eq!(r.status, 404, "GET {path}: {}", r.text);
        assert!(!r.text.contains(&a.tenant_id), "{path} leaks the tenant");
    }
    for (path, body) in [
        (
            COMPARE,
            json!({"customerId": customer, "yourBalance": 5, "theirBalance": 5}),
        ),
        (CHECKPOINT, json!({"customerId": customer})),
    ] {
        let r = kb.post(path, &body);
        assert_eq!(r.status, 404, "POST {path}: {}", r.text);
    }
    // Lists filter by tenant: B sees none of A's.
    let list = kb.checkpoints(&format!("customerId={customer}"));
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(list.body["data"]["checkpoints"], json!([]), "{}", list.text);
    assert_eq!(list.body["data"]["pagination"]["total"], 0);
    let all = kb.checkpoints("customerId=all");
    assert!(!all.text.contains(&customer), "{}", all.text);
    let customers = kb.get(CUSTOMERS);
    assert_eq!(customers.status, 200);
    assert!(!customers.text.contains(&customer), "{}", customers.text);

    // Dashboard routes with B's JWT.
    let r = toggle_key(&api, &b.jwt, &a_key_id);
    assert_eq!(r.status, 404, "toggle A's key: {}", r.text);
    let r = delete_jwt(&api, &format!("/dashboard/api-keys/{a_key_id}"), &b.jwt);
    assert_eq!(r.status, 404, "delete A's key: {}", r.text);
    let r = get_jwt(
        &api,
        &format!("/dashboard/contracts/{}/status", a.tenant_id),
        &b.jwt,
    );
    assert_eq!(r.status, 404, "A's contract status: {}", r.text);
    for path in [
        format!("/dashboard/webhooks/{hook}"),
        format!("/dashboard/webhooks/{hook}/deliveries"),
    ] {
        let r = get_jwt(&api, &path, &b.jwt);
        assert_eq!(r.status, 404, "GET {path}: {}", r.text);
    }
    for path in [
        format!("/dashboard/webhooks/{hook}/toggle"),
        format!("/dashboard/webhooks/{hook}/test"),
    ] {
        let r = post_jwt(&api, &path, &b.jwt, &json!({}));
        assert_eq!(r.status, 404, "POST {path}: {}", r.text);
    }
    let r = delete_jwt(&api, &format!("/dashboard/webhooks/{hook}"), &b.jwt);
    assert_eq!(r.status, 404, "delete A's webhook: {}", r.text);
    let hooks = get_jwt(&api, "/dashboard/webhooks", &b.jwt);
    assert!(!hooks.text.contains(&hook), "{}", hooks.text);

    // Nothing B tried changed A's objects.
    let still = ka.derive(&customer, "");
    assert_eq!(still.status, 200, "A's key still works: {}", still.text);
    let hook_now = get_jwt(&api, &format!("/dashboard/webhooks/{hook}"), &a.jwt);
    assert_eq!(hook_now.status, 200, "{}", hook_now.text);
    assert_eq!(hook_now.body["data"]["active"], true);
}

// ------------------------------------------------------------------ JWTs

#[test]
fn forged_expired_and_unsigned_jwts_are_401() {
    let api = api();
    let t = new_tenant(&api);
    let claims = claims(&t.jwt);
    assert!(
        claims["sub"].is_string() && claims["exp"].is_u64(),
        "{claims}"
    );
    let secret = dev_var("JWT_SECRET");
    let hs = json!({"alg": "HS256", "typ": "JWT"});
    let now = now_secs();

    // Control: a token crafted here with the real key is accepted, so the
    // rejections below are about what was changed, not how it was built.
    let genuine = sign(&hs, &claims, secret.as_bytes());
    let r = get_jwt(&api, "/dashboard/auth/profile", &genuine);
    assert_eq!(r.status, 200, "hand-made genuine token: {}", r.text);

    let mut expired = claims.clone();
    expired["iat"] = json!(now - 7200);
    expired["exp"] = json!(now - 3600);
    let mut other_tenant = claims.clone();
    other_tenant["tid"] = json!("ten_someone_else");
    let unsigned = format!(
        "{}.{}.",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes())
    );
    let none_with_sig = format!(
        "{}.{}.{}",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes()),
        hs256(secret.as_bytes(), "x")
    );
    let tampered = {
        let mut parts: Vec<String> = t.jwt.split('.').map(str::to_string).collect();
        let mut c = claims.clone();
        c["sub"] = json!("usr_somebody_else");
        parts[1] = b64url(c.to_string().as_bytes());
        parts.join(".")
    };
    let cases = [
        ("alg none, no signature", unsigned),
        ("alg none with a signature", none_with_sig),
        (
            "wrong key",
            sign(&hs, &claims, b"not-the-secret-of-this-service"),
        ),
        ("expired exp", sign(&hs, &expired, secret.as_bytes())),
        ("claims changed after signing", tampered),
        (
            "HS512 header",
            sign(
                &json!({"alg": "HS512", "typ": "JWT"}),
                &claims,
                secret.as_bytes(),
            ),
        ),
        (
            "tenant swapped under the real key",
            sign(&hs, &other_tenant, secret.as_bytes()),
        ),
        ("garbage", "not.a.jwt".to_string()),
        ("empty", String::new()),
    ];
    for (what, jwt) in cases {
        for path in ["/dashboard/auth/profile", "/dashboard/api-keys"] {
            let r = get_jwt(&api, path, &jwt);
            assert_eq!(r.status, 401, "{what} on {path}: {}", r.text);
            assert_eq!(r.body["error"], "Unauthorized");
        }
    }
}

// ------------------------------------------------------------------ environments

#[test]
fn a_test_key_never_reaches_production_data_nor_a_live_key_sandbox_data() {
    let api = api();
    let t = new_tenant_on_plan(&api, "pilot");
    let live = provision_production(&api, &t);
    assert!(live.starts_with("pk_live_"));
    let prod_customer = unique("prod_only");
    let sandbox_customer = unique("sandbox_only");
    let (sandbox, production) = (api.keyed(&t.test_key), api.keyed(&live));
    let prod = production.emit(&delta(&prod_customer, 7.0));
    let sand = sandbox.emit(&delta(&sandbox_customer, 3.0));
    let prod_anchor = prod["anchorId"].as_str().unwrap();
    let sand_anchor = sand["anchorId"].as_str().unwrap();
    production.wait_anchored(prod_anchor);
    sandbox.wait_anchored(sand_anchor);

    for (key, anchor, customer, what) in [
        (
            sandbox,
            prod_anchor,
            &prod_customer,
            "test key on production",
        ),
        (
            production,
            sand_anchor,
            &sandbox_customer,
            "live key on sandbox",
        ),
    ] {
        for path in [
            format!("/api/v1/balance/delta/{anchor}"),
            format!("/api/v1/balance/derive/{customer}"),
            format!("/api/v1/balance/customers/{customer}"),
            format!("/api/v1/balance/receipt/{customer}"),
        ] {
            let r = key.get(&path);
            assert_eq!(r.status, 404, "{what}: GET {path}: {}", r.text);
        }
        let list = key.get(CUSTOMERS);
        assert_eq!(list.status, 200);
        assert!(
            !list.text.contains(customer.as_str()),
            "{what}: {}",
            list.text
        );
    }
    // The production contract named explicitly with a test key: 404.
    let contracts = get_jwt(&api, "/dashboard/contracts", &t.jwt);
    let prod_contract = contracts.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["environment"] == "mainnet")
        .and_then(|c| c["id"].as_str())
        .unwrap()
        .to_string();
    let r = sandbox.send(
        sandbox
            .req(Method::POST, DELTA)
            .header("x-credit-pool-id", &prod_contract)
            .json(&json!({"customerId": prod_customer, "delta": 1, "reason": "cross"})),
    );
    assert_eq!(
        r.status, 404,
        "test key with the production pool id: {}",
        r.text
    );
    // A live key's secret under a test prefix (and the reverse) is not a key.
    for swapped in [
        live.replacen("pk_live_", "pk_test_", 1),
        t.test_key.replacen("pk_test_", "pk_live_", 1),
    ] {
        let r = api.keyed(&swapped).get(CUSTOMERS);
        assert_eq!(r.status, 401, "{}", r.text);
    }
    // The production balance is untouched by the attempts.
    let d = production.derive(&prod_customer, "");
    assert_eq!(d.body["data"]["computedBalance"], json!(7), "{}", d.text);
}

// ------------------------------------------------------------------ secrets

#[test]
fn api_keys_and_webhook_secrets_appear_nowhere_after_creation() {
    let api = api();
    let t = new_tenant(&api);
    let key_secret = key_secret(&t.test_key);
    let hook = webhook(&api, &t, "secret check");
    let hook_secret = hook["secret"].as_str().unwrap().to_string();
    assert!(hook_secret.len() >= 16, "{hook}");
    let hook_id = hook["id"].as_str().unwrap();
    // Use the key, fail with it, list everything.
    api.keyed(&t.test_key)
        .emit(&delta(&unique("secret_cust"), 1.0));
    let wrong = format!("{}x", t.test_key);
    assert_eq!(api.keyed(&wrong).get(CUSTOMERS).status, 401);
    let mut seen = Vec::new();
    for path in [
        "/dashboard/api-keys".to_string(),
        "/dashboard/webhooks".to_string(),
        format!("/dashboard/webhooks/{hook_id}"),
        format!("/dashboard/webhooks/{hook_id}/deliveries"),
        "/dashboard/auth/profile".to_string(),
        "/dashboard/contracts".to_string(),
    ] {
        let r = get_jwt(&api, &path, &t.jwt);
        assert_eq!(r.status, 200, "{path}: {}", r.text);
        seen.push((path, r.text));
    }
    let r = toggle_key(&api, &t.jwt, &key_id(&t.test_key));
    seen.push(("toggle".into(), r.text));
    let r = toggle_webhook(&api, &t.jwt, hook_id);
    seen.push(("webhook toggle".into(), r.text));
    for (path, text) in &seen {
        assert!(!text.contains(&key_secret), "{path} shows the key secret");
        assert!(
            !text.contains(&hook_secret),
            "{path} shows the webhook secret"
        );
    }
    let listed = &seen[0].1;
    assert!(
        listed.contains(&key_id(&t.test_key)),
        "the key is listed: {listed}"
    );

    // The request log: one JSON line per request, never a secret or a JWT.
    std::thread::sleep(Duration::from_millis(500));
    let log = std::fs::read_to_string(&server().log_path).unwrap();
    assert!(
        !log.contains(&key_secret),
        "the log shows an API key secret"
    );
    assert!(
        !log.contains(&hook_secret),
        "the log shows a webhook secret"
    );
    assert!(!log.contains(&t.jwt), "the log shows a JWT");
    assert!(!log.contains(&t.password), "the log shows a password");
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &Value| v.get("route").is_some())
        .collect();
    let mine = lines
        .iter()
        .find(|v| v["route"] == "/api/v1/balance/delta" && v["tenantId"] == t.tenant_id.as_str())
        .unwrap_or_else(|| panic!("no request line for the emit with the tenant id in:\n{log}"));
    assert_eq!(mine["method"], "POST");
    assert_eq!(mine["status"], 202);
    assert!(mine["durationMs"].is_u64());
}

// ------------------------------------------------------------------ hostile bodies

#[test]
fn oversized_bodies_are_413() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let big = format!(
        r#"{{"customerId":"c1","delta":1,"reason":"{}"}}"#,
        "x".repeat(1024 * 1024 + 10)
    );
    for path in [DELTA, BATCH, CHECKPOINT, FACTS] {
        let r = k.post_raw(path, big.clone());
        assert_eq!(r.status, 413, "{path}: {}", r.text);
        assert_eq!(r.body["error"], "Payload Too Large");
    }
    // Compare takes a caller's list of up to 10,000 deltas: its documented
    // limit is 4 MiB (docs/balance.md), so 1 MiB passes the size check and
    // 4 MiB + 10 bytes does not.
    let r = k.post_raw(COMPARE, big.clone());
    assert_ne!(r.status, 413, "{COMPARE}: {}", r.text);
    let bigger = format!(
        r#"{{"customerId":"c1","yourBalance":1,"theirBalance":1,"reason":"{}"}}"#,
        "x".repeat(4 * 1024 * 1024 + 10)
    );
    let r = k.post_raw(COMPARE, bigger);
    assert_eq!(r.status, 413, "{COMPARE}: {}", r.text);
    assert_eq!(r.body["error"], "Payload Too Large");
    for path in ["/dashboard/auth/register", "/dashboard/auth/login"] {
        let r = api.post_raw(path, big.clone());
        assert_eq!(r.status, 413, "{path}: {}", r.text);
    }
    let r = api.send(
        api.req(Method::POST, "/dashboard/api-keys")
            .bearer_auth(&t.jwt)
            .header("content-type", "application/json")
            .body(big.clone()),
    );
    assert_eq!(r.status, 413, "api-keys: {}", r.text);
    // A fact whose content alone is over 64 KiB, in a body under the limit.
    let r = k.submit_fact(&json!({"content": "y".repeat(64 * 1024 + 1)}));
    assert_eq!(r.status, 413, "fact content: {}", r.text);
}

#[test]
fn deep_nesting_and_invalid_utf8_are_400() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let deep = format!(
        r#"{{"customerId":"c1","delta":1,"reason":"r","metadata":{}{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let moderately_deep = format!(
        r#"{{"customerId":"c1","delta":1,"reason":"r","metadata":{}1{}}}"#,
        r#"{"a":"#.repeat(40),
        "}".repeat(40)
    );
    let mut bad_utf8 = br#"{"customerId":"c1","delta":1,"reason":""#.to_vec();
    bad_utf8.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    bad_utf8.extend_from_slice(br#""}"#);
    for (what, body) in [
        ("5000 levels", deep.clone().into_bytes()),
        ("40 levels of metadata", moderately_deep.into_bytes()),
        ("invalid UTF-8", bad_utf8.clone()),
    ] {
        for path in [DELTA, COMPARE, FACTS] {
            let r = k.post_raw(path, body.clone());
            assert_eq!(r.status, 400, "{what} on {path}: {}", r.text);
            assert_eq!(r.body["error"], "Bad Request", "{what} on {path}");
        }
    }
    let batch_deep = format!(r#"{{"deltas":[{deep}]}}"#);
    for (path, body) in [
        (BATCH, batch_deep.into_bytes()),
        ("/dashboard/auth/register", deep.clone().into_bytes()),
        ("/dashboard/auth/register", bad_utf8.clone()),
        ("/dashboard/auth/login", bad_utf8),
    ] {
        let r = k.post_raw(path, body);
        assert_eq!(r.status, 400, "{path}: {}", r.text);
    }
}

// ------------------------------------------------------------------ SQL metacharacters

const NASTY: &[&str] = &[
    "Robert'); DROP TABLE deltas;--",
    "' OR '1'='1",
    "\" OR \"\"=\"",
    "50% off_100\\%",
    "/* comment */ SELECT * FROM api_keys; --",
    "`backtick` ?1 ?2 $1 :name @p",
    "semi;colon' -- \u{2603}",
];

#[test]
fn sql_metacharacters_in_every_string_field_are_stored_and_returned_verbatim() {
    let api = api();
    // Enterprise: dozens of keyed requests back to back; a sandbox key's 10/s would answer 429 (tested in dashboard.rs), which is not this test's subject.
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    for (i, nasty) in NASTY.iter().enumerate() {
        // Balance: reason, referenceId, metadata keys and values.
        let customer = format!("sql-{i}:x.y_z--{}", unique("c"));
        let r = k.post(
            DELTA,
            &json!({
                "customerId": customer,
                "delta": 1.5,
                "reason": nasty,
                "referenceId": nasty,
                "metadata": {*nasty: nasty, "nested": {"v": [nasty]}},
            }),
        );
        assert_eq!(r.status, 202, "{nasty}: {}", r.text);
        let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
        let s = k.delta_status(&anchor);
        assert_eq!(s.status, 200, "{}", s.text);
        let d = &s.body["data"];
        assert_eq!(d["customerId"], json!(customer));
        assert_eq!(d["reason"], json!(nasty));
        assert_eq!(d["referenceId"], json!(nasty));
        assert_eq!(d["metadata"][*nasty], json!(nasty));
        assert_eq!(d["metadata"]["nested"]["v"][0], json!(nasty));
        let c = k.customer(&customer);
        assert_eq!(c.status, 200, "{}", c.text);
        assert_eq!(c.body["data"]["customerId"], json!(customer));

        // Facts: content and metadata.
        let content = format!("{nasty} #{i} {}", unique("fact"));
        let f = k.submit_fact(&json!({"content": content, "metadata": {"note": nasty}}));
        assert_eq!(f.status, 202, "{}", f.text);
        let hash = f.body["data"]["contentHash"].as_str().unwrap();
        let g = k.fact(hash);
        assert_eq!(g.body["data"]["content"], json!(content), "{}", g.text);
        assert_eq!(g.body["data"]["metadata"]["note"], json!(nasty));

        // Dashboard: key name, webhook description.
        let k = post_jwt(
            &api,
            "/dashboard/api-keys",
            &t.jwt,
            &json!({"environment": "test", "name": nasty}),
        );
        assert_eq!(k.status, 201, "{}", k.text);
        assert_eq!(k.body["data"]["name"], json!(nasty));
        let id = k.body["data"]["id"].as_str().unwrap().to_string();
        let listed = get_jwt(&api, "/dashboard/api-keys", &t.jwt);
        let row = listed.item(&id);
        assert_eq!(row["name"], json!(nasty));
        let w = webhook(&api, &t, nasty);
        let got = get_jwt(
            &api,
            &format!("/dashboard/webhooks/{}", w["id"].as_str().unwrap()),
            &t.jwt,
        );
        assert_eq!(
            got.body["data"]["description"],
            json!(nasty),
            "{}",
            got.text
        );
        let del = delete_jwt(
            &api,
            &format!("/dashboard/webhooks/{}", w["id"].as_str().unwrap()),
            &t.jwt,
        );
        assert_eq!(del.status, 200);
    }
    // Names at registration.
    let email = bvs_tests::tenant::unique_email("sql");
    let nasty = NASTY[0];
    let r = api.post(
        "/dashboard/auth/register",
        &json!({"email": email, "password": bvs_tests::tenant::TEST_PASSWORD,
                "firstName": nasty, "lastName": NASTY[1], "companyName": NASTY[4]}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let jwt = bvs_tests::tenant::login(&api, &email, bvs_tests::tenant::TEST_PASSWORD);
    let p = get_jwt(&api, "/dashboard/auth/profile", &jwt);
    assert_eq!(p.body["data"]["firstName"], json!(nasty));
    assert_eq!(p.body["data"]["lastName"], json!(NASTY[1]));
    // An injection-shaped e-mail or id is just not found.
    let r = api.post(
        "/dashboard/auth/login",
        &json!({"email": "' OR 1=1 --@example.com", "password": "x"}),
    );
    assert_eq!(r.status, 401, "{}", r.text);
    let r = patch_jwt(
        &api,
        "/dashboard/auth/preferences",
        &jwt,
        &json!({"preferredEnvironment": "sandbox' OR '1'='1"}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    let r = k.delta_status("anc_x'%20OR%20'1'='1");
    assert_eq!(r.status, 404, "{}", r.text);
    for query in [
        "customerId=x'%20OR%20'1'='1",
        "period=2026-11'%20OR%20'1'='1",
        "limit=1;DROP%20TABLE%20checkpoints",
    ] {
        let r = k.checkpoints(query);
        assert_eq!(r.status, 400, "{query}: {}", r.text);
    }
    // An Idempotency-Key full of metacharacters is just a key: the repeat
    // replays the first answer.
    let idem = "k' OR '1'='1; DROP TABLE idempotency; --";
    let body = json!({"customerId": "idem-sql", "delta": 2, "reason": "idem"});
    let send = || {
        k.send(
            k.req(Method::POST, DELTA)
                .header("idempotency-key", idem)
                .json(&body),
        )
    };
    let first = send();
    assert_eq!(first.status, 202, "{}", first.text);
    let again = send();
    assert_eq!(again.status, 202, "{}", again.text);
    assert_eq!(
        again
            .headers
            .get("idempotent-replayed")
            .map(|v| v.as_bytes()),
        Some(&b"true"[..])
    );
    assert_eq!(
        again.body["data"]["anchorId"],
        first.body["data"]["anchorId"]
    );
}

// ------------------------------------------------------------------ empty strings

/// Found by schemathesis: an empty string where a required string goes
/// must be a 400 naming the field, never a 500.
#[test]
fn empty_required_strings_are_400_naming_the_field() {
    let api = api();
    let t = new_tenant(&api);
    let public = [
        (
            "/dashboard/auth/register",
            json!({"email": "", "password": "Abcdefg-123", "firstName": "a", "lastName": "b", "companyName": "c"}),
            "email",
        ),
        (
            "/dashboard/auth/register",
            json!({"email": bvs_tests::tenant::unique_email("empty"), "password": "", "firstName": "a", "lastName": "b", "companyName": "c"}),
            "password",
        ),
        (
            "/dashboard/auth/request-password-reset",
            json!({"email": ""}),
            "email",
        ),
        (
            "/dashboard/auth/resend-verification-email",
            json!({"email": ""}),
            "email",
        ),
        (
            "/dashboard/auth/reset-password",
            json!({"token": "abc", "newPassword": ""}),
            "newPassword",
        ),
    ];
    for (path, body, field) in public {
        let r = api.post(path, &body);
        assert_eq!(r.status, 400, "{path} {body}: {}", r.text);
        assert!(r.message().contains(field), "{}", r.text);
    }
    for (path, body, field) in [
        (
            "/dashboard/auth/change-password",
            json!({"currentPassword": "x", "newPassword": ""}),
            "newPassword",
        ),
        (
            "/dashboard/webhooks",
            json!({"url": "", "events": ["test"], "description": ""}),
            "url",
        ),
    ] {
        let r = post_jwt(&api, path, &t.jwt, &body);
        assert_eq!(r.status, 400, "{path} {body}: {}", r.text);
        assert!(r.message().contains(field), "{}", r.text);
    }
}

// ------------------------------------------------------------------ account-level limits (issue 25)

fn register_from(api: &Api, address: &str, email: &str) -> u16 {
    api.send(
        api.req(Method::POST, "/dashboard/auth/register")
            .header("cf-connecting-ip", address)
            .json(&json!({
                "email": email,
                "password": bvs_tests::tenant::TEST_PASSWORD,
                "firstName": "Mass",
                "lastName": "Signup",
                "companyName": "Sybil Ltd",
            })),
    )
    .status
}

#[test]
fn registrations_are_limited_per_client_network() {
    let api = api();
    let statuses: Vec<u16> = (0..7)
        .map(|i| {
            let email = format!(
                "{}@example.com",
                unique(&format!("mass{i}")).replace('_', "-")
            );
            register_from(&api, "198.51.100.7", &email)
        })
        .collect();
    assert_eq!(statuses[..5], [201; 5], "{statuses:?}");
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    // Another network still registers; a taken address is still 409.
    let email = format!("{}@example.com", unique("other-net").replace('_', "-"));
    assert_eq!(register_from(&api, "198.51.100.8", &email), 201);
    assert_eq!(register_from(&api, "198.51.100.9", &email), 409);
}

#[test]
fn api_key_create_delete_cycles_cannot_pass_the_monthly_creations() {
    let api = api();
    let t = new_tenant(&api);
    // The tenant's first key counts: 39 more this month on Free (twice
    // the 20 keys it may hold).
    let mut created = 1;
    loop {
        let r = post_jwt(
            &api,
            "/dashboard/api-keys",
            &t.jwt,
            &json!({"environment": "test"}),
        );
        if r.status == 402 {
            assert_eq!(r.body["code"], "plan_limit_exceeded", "{}", r.text);
            assert!(r.message().contains("per month"), "{}", r.text);
            break;
        }
        assert_eq!(r.status, 201, "{}", r.text);
        created += 1;
        assert!(created <= 40, "more than 40 keys created this month");
        let id = key_id(r.body["data"]["key"].as_str().unwrap());
        let d = delete_jwt(&api, &format!("/dashboard/api-keys/{id}"), &t.jwt);
        assert_eq!(d.status, 200, "{}", d.text);
    }
    assert_eq!(created, 40);
    // The tenant's key still works.
    let k = api.keyed(&t.test_key);
    assert_eq!(k.get(CUSTOMERS).status, 200);
}

#[test]
fn a_stranger_cannot_lock_the_owner_out_by_failing_logins() {
    let api = api();
    let t = new_tenant(&api);
    let login_from = |address: &str, password: &str| {
        api.send(
            api.req(Method::POST, "/dashboard/auth/login")
                .header("cf-connecting-ip", address)
                .json(&json!({"email": t.email, "password": password})),
        )
    };
    let statuses: Vec<u16> = (0..12)
        .map(|_| login_from("203.0.113.66", "Wrong-Password-1").status)
        .collect();
    assert!(
        statuses.contains(&429),
        "the stranger is throttled: {statuses:?}"
    );
    // The owner, from its own network, logs in.
    let owner = login_from("203.0.113.77", &t.password);
    assert_eq!(owner.status, 200, "{}", owner.text);
}

/// Issue 40: guesses spread over many networks meet a per-account limit
/// (60 guesses from 6 /64s drew no 429 before), and a browser that logged
/// in before (OWASP's device cookie, set by a successful login) keeps its
/// own allowance: the owner still logs in from it while every client
/// without the cookie is refused.
#[test]
fn guesses_from_many_networks_meet_a_per_account_limit_but_not_a_known_device() {
    let api = api();
    let t = new_tenant(&api);
    let login_from = |address: &str, password: &str, cookie: Option<&str>| {
        let mut rb = api
            .req(Method::POST, "/dashboard/auth/login")
            .header("cf-connecting-ip", address)
            .json(&json!({"email": t.email, "password": password}));
        if let Some(c) = cookie {
            rb = rb.header("cookie", c);
        }
        api.send(rb)
    };
    // The owner's browser logs in once and keeps its device cookie.
    let owner_net = "2001:db8:40:1::1";
    let first = login_from(owner_net, &t.password, None);
    assert_eq!(first.status, 200, "{}", first.text);
    let set_cookie = first.headers["set-cookie"].to_str().unwrap().to_string();
    for attribute in [
        "HttpOnly",
        "Secure",
        "SameSite=Strict",
        "Path=/dashboard/auth/login",
    ] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    let cookie = set_cookie.split(';').next().unwrap().to_string();
    assert!(cookie.starts_with("bvs_device="), "{cookie}");
    // 60 guesses, 10 from each of 6 networks (each under its own limit).
    let mut statuses = Vec::new();
    for net in 0..6 {
        for _ in 0..10 {
            let address = format!("2001:db8:40:{:x}::{net}", 0x100 + net);
            statuses.push(login_from(&address, "Wrong-Password-1", None).status);
        }
    }
    let first_429 = statuses.iter().position(|s| *s == 429);
    assert!(
        first_429.is_some_and(|i| i <= 20),
        "the 21st guess at the latest is refused: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 401 || *s == 429),
        "{statuses:?}"
    );
    // Without the cookie, even the right password waits now...
    let untrusted = login_from("2001:db8:40:999::1", &t.password, None);
    assert_eq!(untrusted.status, 429, "{}", untrusted.text);
    // ...but the owner's known browser logs in, from any network.
    let owner = login_from("2001:db8:40:777::1", &t.password, Some(&cookie));
    assert_eq!(owner.status, 200, "{}", owner.text);
    // A forged cookie, or another account's, is no known device.
    let forged = format!("bvs_device={}.{}", "00".repeat(16), "ab".repeat(32));
    let r = login_from("2001:db8:40:998::1", &t.password, Some(&forged));
    assert_eq!(r.status, 429, "{}", r.text);
}

#[test]
fn a_password_change_retires_open_reset_links_and_logout_ends_sessions() {
    let api = api();
    let t = new_tenant(&api);
    let r = api.post(
        "/dashboard/auth/request-password-reset",
        &json!({"email": t.email}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let token = bvs_tests::tenant::latest_token(&api, &t.email, "reset_password");
    let changed = post_jwt(
        &api,
        "/dashboard/auth/change-password",
        &t.jwt,
        &json!({"currentPassword": t.password, "newPassword": "Another-Pass-7"}),
    );
    assert_eq!(changed.status, 200, "{}", changed.text);
    let reset = api.post(
        "/dashboard/auth/reset-password",
        &json!({"token": token, "newPassword": "Attacker-Pass-8"}),
    );
    assert_eq!(
        reset.status, 400,
        "an old reset link undid the change: {}",
        reset.text
    );

    let jwt = bvs_tests::tenant::login(&api, &t.email, "Another-Pass-7");
    assert_eq!(get_jwt(&api, "/dashboard/auth/profile", &jwt).status, 200);
    let out = post_jwt(&api, "/dashboard/auth/logout", &jwt, &json!({}));
    assert_eq!(out.status, 200, "{}", out.text);
    let after = get_jwt(&api, "/dashboard/auth/profile", &jwt);
    assert_eq!(after.status, 401, "{}", after.text);
}

#[test]
fn invitations_are_metered_per_plan() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    k.emit(&delta("cus_invited", 1.0));
    let path = "/api/v1/balance/customers/cus_invited/invitations";
    let mut issued = 0;
    loop {
        let r = k.post(path, &json!({}));
        if r.status == 402 {
            assert_eq!(r.body["code"], "plan_limit_exceeded", "{}", r.text);
            assert!(r.message().contains("invitations"), "{}", r.text);
            break;
        }
        assert_eq!(r.status, 201, "{}", r.text);
        issued += 1;
        assert!(issued <= 20, "more than 20 invitations on Free");
        std::thread::sleep(Duration::from_millis(120));
    }
    assert_eq!(issued, 20);
}

#[test]
fn the_checkpoint_list_reads_in_one_round_trip_whatever_its_length() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let mut last = Value::Null;
    for c in 0..6 {
        last = k.emit(&delta(&format!("cus_list_{c}"), 1.0));
    }
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let mut ids = Vec::new();
    for c in 0..6 {
        let r = k.checkpoint(&json!({"customerId": format!("cus_list_{c}")}));
        assert_eq!(r.status, 202, "{}", r.text);
        ids.push(r.body["data"]["checkpointId"].as_str().unwrap().to_string());
    }
    for id in &ids {
        k.wait_committed(id);
    }
    let request_id = unique("req_list");
    let r = k.send(
        k.req(Method::GET, "/api/v1/balance/checkpoints?limit=100")
            .header("request-id", &request_id),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["data"]["checkpoints"].as_array().unwrap().len() >= 6);
    let trips = bvs_tests::eventually(Duration::from_secs(10), "the request's log line", || {
        bvs_tests::trips::of_request(&server().log_path, &request_id)
    });
    assert!(
        trips.d1_trips <= 2,
        "the list took {} sequential D1 round trips: {trips:?}",
        trips.d1_trips
    );
}
