//! Fresh tenants for black-box tests: register, read the dev mailbox,
//! verify, log in, create keys, change plans, provision production; and
//! the dashboard calls tests make with a tenant's JWT (keys, webhooks).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{Api, Reply};
use crate::{dev_var, eventually};

/// A verified tenant with a logged-in owner and a sandbox (`test`) key.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub email: String,
    pub password: String,
    pub jwt: String,
    pub tenant_id: String,
    pub test_key: String,
}

/// The password every test account gets (meets the spec's rules).
pub const TEST_PASSWORD: &str = "Correct-Horse-9";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A unique e-mail address for this process and call.
pub fn unique_email(label: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{label}-{}-{nanos}-{n}@example.com", std::process::id())
}

/// Adds `Authorization: Bearer <jwt>`.
pub fn with_jwt(
    api: &Api,
    method: reqwest::Method,
    path: &str,
    jwt: &str,
) -> reqwest::blocking::RequestBuilder {
    api.req(method, path).bearer_auth(jwt)
}

pub fn get_jwt(api: &Api, path: &str, jwt: &str) -> Reply {
    api.send(with_jwt(api, reqwest::Method::GET, path, jwt))
}

pub fn post_jwt(api: &Api, path: &str, jwt: &str, body: &Value) -> Reply {
    api.send(with_jwt(api, reqwest::Method::POST, path, jwt).json(body))
}

pub fn patch_jwt(api: &Api, path: &str, jwt: &str, body: &Value) -> Reply {
    api.send(with_jwt(api, reqwest::Method::PATCH, path, jwt).json(body))
}

pub fn delete_jwt(api: &Api, path: &str, jwt: &str) -> Reply {
    api.send(with_jwt(api, reqwest::Method::DELETE, path, jwt))
}

/// `POST /dashboard/auth/register` with test names.
pub fn register(api: &Api, email: &str, password: &str) -> Reply {
    api.post(
        "/dashboard/auth/register",
        &json!({
            "email": email,
            "password": password,
            "firstName": "Ada",
            "lastName": "Lovelace",
            "companyName": "Analytical Engines Ltd",
        }),
    )
}

/// The dev outbox for `to`, newest first.
pub fn mailbox(api: &Api, to: &str) -> Vec<Value> {
    let r = api.get(&format!("/dev/mail?to={}", to.replace('+', "%2B")));
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].as_array().cloned().unwrap_or_default()
}

/// How long a mail may take through the queue (resend-verification and
/// request-password-reset send from the queue consumer).
pub const MAIL_WAIT: Duration = Duration::from_secs(20);

/// The token of the newest mail of `kind` (`verify_email`, `reset_password`),
/// once there is one (queued mails arrive a moment after their request).
pub fn latest_token(api: &Api, to: &str, kind: &str) -> String {
    eventually(MAIL_WAIT, &format!("a {kind} mail for {to}"), || {
        newest_token(api, to, kind)
    })
}

/// The token of the newest mail of `kind`, if any, now.
pub fn newest_token(api: &Api, to: &str, kind: &str) -> Option<String> {
    mailbox(api, to)
        .iter()
        .find(|m| m["kind"] == kind)
        .and_then(|m| m["token"].as_str())
        .map(str::to_string)
}

/// The token of a mail of `kind` newer than the one carrying `previous`,
/// once it arrives.
pub fn next_token(api: &Api, to: &str, kind: &str, previous: &str) -> String {
    eventually(MAIL_WAIT, &format!("a new {kind} mail for {to}"), || {
        newest_token(api, to, kind).filter(|t| t != previous)
    })
}

/// `POST /dashboard/auth/login`; returns the JWT.
pub fn login(api: &Api, email: &str, password: &str) -> String {
    let r = api.post(
        "/dashboard/auth/login",
        &json!({"email": email, "password": password}),
    );
    assert_eq!(r.status, 200, "login: {}", r.text);
    r.body["data"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Registers and logs in without verifying the e-mail.
pub fn new_unverified(api: &Api) -> (String, String) {
    let email = unique_email("unverified");
    let r = register(api, &email, TEST_PASSWORD);
    assert_eq!(r.status, 201, "register: {}", r.text);
    let jwt = login(api, &email, TEST_PASSWORD);
    (email, jwt)
}

/// `POST /dashboard/api-keys` for a key in `env`.
pub fn request_key(api: &Api, jwt: &str, env: &str) -> Reply {
    post_jwt(
        api,
        "/dashboard/api-keys",
        jwt,
        &json!({"environment": env}),
    )
}

/// `POST /dashboard/api-keys/:id/toggle`.
pub fn toggle_key(api: &Api, jwt: &str, key_id: &str) -> Reply {
    post_jwt(
        api,
        &format!("/dashboard/api-keys/{key_id}/toggle"),
        jwt,
        &json!({}),
    )
}

/// Creates a key in `env` (`test` or `live`); returns the full key.
pub fn create_key(api: &Api, jwt: &str, env: &str) -> String {
    let r = request_key(api, jwt, env);
    assert_eq!(r.status, 201, "create key: {}", r.text);
    r.body["data"]["key"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Register, read the verification mail, verify, log in, create a test key.
pub fn new_tenant(api: &Api) -> Tenant {
    let email = unique_email("tenant");
    let r = register(api, &email, TEST_PASSWORD);
    assert_eq!(r.status, 201, "register: {}", r.text);
    let token = latest_token(api, &email, "verify_email");
    let v = api.get(&format!("/dashboard/auth/verify?token={token}"));
    assert_eq!(v.status, 200, "verify: {}", v.text);
    let jwt = login(api, &email, TEST_PASSWORD);
    let profile = get_jwt(api, "/dashboard/auth/profile", &jwt);
    assert_eq!(profile.status, 200, "profile: {}", profile.text);
    let tenant_id = profile.body["data"]["tenantId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let test_key = create_key(api, &jwt, "test");
    Tenant {
        email,
        password: TEST_PASSWORD.to_string(),
        jwt,
        tenant_id,
        test_key,
    }
}

/// `POST /admin/tenants/:tenantId/plan` with the operator token.
pub fn set_plan(api: &Api, tenant_id: &str, plan: &str) -> Reply {
    api.send(
        api.req(
            reqwest::Method::POST,
            &format!("/admin/tenants/{tenant_id}/plan"),
        )
        .bearer_auth(dev_var("ADMIN_TOKEN"))
        .json(&json!({"plan": plan})),
    )
}

/// A new tenant moved to `plan` by the operator.
pub fn new_tenant_on_plan(api: &Api, plan: &str) -> Tenant {
    let t = new_tenant(api);
    let r = set_plan(api, &t.tenant_id, plan);
    assert_eq!(r.status, 200, "set plan: {}", r.text);
    t
}

/// `POST /dashboard/contracts/provision` for `env` (`testnet`, `mainnet`).
pub fn provision(api: &Api, jwt: &str, env: &str) -> Reply {
    post_jwt(
        api,
        "/dashboard/contracts/provision",
        jwt,
        &json!({"environment": env}),
    )
}

/// Provisions mainnet (the plan must allow it), waits until it is active
/// and returns a live key.
pub fn provision_production(api: &Api, t: &Tenant) -> String {
    let r = provision(api, &t.jwt, "mainnet");
    assert_eq!(r.status, 201, "provision: {}", r.text);
    eventually(Duration::from_secs(60), "mainnet to become active", || {
        let s = get_jwt(
            api,
            &format!("/dashboard/contracts/{}/status", t.tenant_id),
            &t.jwt,
        );
        let envs = s.body["data"]["environments"].as_array()?.clone();
        let status = envs
            .iter()
            .find(|e| e["environment"] == "mainnet")?
            .get("status")?
            .as_str()?
            .to_string();
        assert_ne!(status, "error", "provisioning failed: {}", s.text);
        (status == "active").then_some(())
    });
    create_key(api, &t.jwt, "live")
}

/// The id of a full key `pk_<env>_<id>.<secret>`.
pub fn key_id(full_key: &str) -> String {
    full_key
        .split_once('.')
        .map(|(p, _)| {
            p.trim_start_matches("pk_test_")
                .trim_start_matches("pk_live_")
        })
        .unwrap_or_else(|| panic!("not a full key: {full_key}"))
        .to_string()
}

/// The secret half of a full key `pk_<env>_<id>.<secret>`.
pub fn key_secret(full_key: &str) -> String {
    full_key
        .split_once('.')
        .map(|(_, s)| s.to_string())
        .unwrap_or_else(|| panic!("not a full key: {full_key}"))
}

/// `POST /dashboard/webhooks/:id/toggle`.
pub fn toggle_webhook(api: &Api, jwt: &str, id: &str) -> Reply {
    post_jwt(
        api,
        &format!("/dashboard/webhooks/{id}/toggle"),
        jwt,
        &json!({}),
    )
}

/// `POST /dashboard/webhooks/:id/test`.
pub fn test_webhook(api: &Api, jwt: &str, id: &str) -> Reply {
    post_jwt(
        api,
        &format!("/dashboard/webhooks/{id}/test"),
        jwt,
        &json!({}),
    )
}

/// `POST /dashboard/webhooks`.
pub fn create_webhook(
    api: &Api,
    jwt: &str,
    url: &str,
    events: &[&str],
    description: &str,
) -> Reply {
    post_jwt(
        api,
        "/dashboard/webhooks",
        jwt,
        &json!({"url": url, "events": events, "description": description}),
    )
}

/// This month's Sandbox deltas as the usage route reports them.
pub fn sandbox_used(api: &Api, jwt: &str) -> u64 {
    let r = get_jwt(api, "/dashboard/usage", jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["environment"] == "sandbox")
        .unwrap()["used"]
        .as_u64()
        .unwrap()
}

/// A webhook for the agreement events (`checkpoint.cosigned`,
/// `checkpoint.disputed`) at `url`; asserts it was created and returns
/// its answer (the secret is in `data.secret`).
pub fn agreement_webhook(api: &Api, jwt: &str, url: &str, description: &str) -> Reply {
    let hook = create_webhook(
        api,
        jwt,
        url,
        &["checkpoint.cosigned", "checkpoint.disputed"],
        description,
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    hook
}
