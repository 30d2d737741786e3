//! The dashboard API through `wrangler dev`: accounts and e-mail
//! verification, passwords and JWTs, environments and plans, API keys and
//! their authentication, rate limits, quotas, retention, tenant isolation,
//! and no secret in clear anywhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use bvs_tests::client::{Api, Reply};
use bvs_tests::jwt::{b64url, claims, now_secs, sign};
use bvs_tests::ledger::{CUSTOMERS, DELTA};
use bvs_tests::tenant::{
    create_key, delete_jwt, get_jwt, key_id, latest_token, login, mailbox, new_tenant,
    new_tenant_on_plan, new_unverified, patch_jwt, post_jwt, provision, provision_production,
    register, request_key, set_plan, toggle_key, unique_email, TEST_PASSWORD,
};
use bvs_tests::{api, dev_var, state_base};
use serde_json::{json, Value};

fn assert_error(r: &Reply, status: u16) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.body["statusCode"], status, "{}", r.text);
    assert!(r.body["error"].is_string(), "{}", r.text);
    assert!(!r.message().is_empty(), "{}", r.text);
}

fn customers(api: &Api, key: &str) -> Reply {
    api.keyed(key).get(CUSTOMERS)
}

// ------------------------------------------------------------------- journey

#[test]
fn the_journey_from_registration_to_a_balance_call_works() {
    let api = api();
    let email = unique_email("journey");

    let r = register(&api, &email, TEST_PASSWORD);
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(!r.text.contains(TEST_PASSWORD));
    assert_eq!(r.body["statusCode"], 201);
    assert!(!r.message().is_empty());
    let data = &r.body["data"];
    assert!(data["id"].is_string());
    assert_eq!(data["email"], email.as_str());
    assert_eq!(data["name"], "Ada Lovelace");
    assert_eq!(data["isVerified"], false);

    let mails = mailbox(&api, &email);
    assert_eq!(mails.len(), 1);
    assert!(mails[0]["subject"].as_str().unwrap().contains("Verify"));
    let token = mails[0]["token"].as_str().unwrap().to_string();
    assert!(mails[0]["body"].as_str().unwrap().contains(&token));

    let v = api.get(&format!("/dashboard/auth/verify?token={token}"));
    assert_eq!(v.status, 200, "{}", v.text);
    assert!(!v.message().is_empty());

    let l = api.post(
        "/dashboard/auth/login",
        &json!({"email": email, "password": TEST_PASSWORD}),
    );
    assert_eq!(l.status, 200, "{}", l.text);
    assert!(!l.text.contains(TEST_PASSWORD));
    assert!(!l.text.contains(&token));
    let d = &l.body["data"];
    assert_eq!(d["email"], email.as_str());
    assert_eq!(d["role"], "owner");
    assert_eq!(d["isVerified"], true);
    assert_eq!(d["name"], "Ada Lovelace");
    assert!(d["id"].is_string());
    let jwt = d["token"].as_str().unwrap().to_string();
    let c = claims(&jwt);
    assert!(c["exp"].as_u64().unwrap() > now_secs());

    let key = create_key(&api, &jwt, "test");
    assert!(key.starts_with("pk_test_"), "{key}");
    let b = customers(&api, &key);
    assert_eq!(b.status, 200, "{}", b.text);
    assert_eq!(b.body["success"], true);
}

#[test]
fn a_new_account_is_on_the_free_plan_with_sandbox_active() {
    let api = api();
    let t = new_tenant(&api);
    let list = get_jwt(&api, "/dashboard/contracts", &t.jwt);
    assert_eq!(list.status, 200, "{}", list.text);
    let items = list.body["data"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["environment"], "testnet");
    assert_eq!(items[0]["status"], "active");
    assert_eq!(items[0]["tenantId"], t.tenant_id.as_str());
    assert!(items[0]["id"].is_string());
    assert!(items[0]["provisionedAt"].as_str().unwrap().ends_with('Z'));

    let s = get_jwt(
        &api,
        &format!("/dashboard/contracts/{}/status", t.tenant_id),
        &t.jwt,
    );
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body["data"]["tenantId"], t.tenant_id.as_str());
    let envs = s.body["data"]["environments"].as_array().unwrap();
    let testnet = envs.iter().find(|e| e["environment"] == "testnet").unwrap();
    assert_eq!(testnet["status"], "active");
    let mainnet = envs.iter().find(|e| e["environment"] == "mainnet").unwrap();
    assert_eq!(mainnet["status"], "not_provisioned");

    // Free plan: production is refused.
    let p = provision(&api, &t.jwt, "mainnet");
    assert_error(&p, 403);
    assert!(p.message().contains("Pilot"), "{}", p.text);
}

// -------------------------------------------------------------- registration

#[test]
fn registration_names_every_invalid_field() {
    let api = api();
    let r = api.post(
        "/dashboard/auth/register",
        &json!({"email": "not-an-email", "password": "short", "lastName": ""}),
    );
    assert_error(&r, 400);
    let m = r.message();
    for field in ["email", "password", "firstName", "lastName", "companyName"] {
        assert!(m.contains(field), "{field} missing from {m}");
    }
}

#[test]
fn registering_an_existing_email_is_a_conflict() {
    let api = api();
    let email = unique_email("dup");
    assert_eq!(register(&api, &email, TEST_PASSWORD).status, 201);
    let again = register(&api, &email.to_uppercase(), TEST_PASSWORD);
    assert_error(&again, 409);
}

// --------------------------------------------------------------------- login

#[test]
fn a_wrong_password_and_an_unknown_email_get_the_same_401() {
    let api = api();
    let t = new_tenant(&api);
    let wrong = api.post(
        "/dashboard/auth/login",
        &json!({"email": t.email, "password": "Wrong-Pass-1"}),
    );
    let unknown = api.post(
        "/dashboard/auth/login",
        &json!({"email": unique_email("nobody"), "password": "Wrong-Pass-1"}),
    );
    assert_error(&wrong, 401);
    // Identical apart from the per-request id (issue 18).
    let (mut w, mut u) = (wrong.body.clone(), unknown.body.clone());
    assert!(w["requestId"].is_string() && u["requestId"].is_string());
    w.as_object_mut().unwrap().remove("requestId");
    u.as_object_mut().unwrap().remove("requestId");
    assert_eq!(w, u);
}

#[test]
fn repeated_failed_logins_are_rate_limited_with_retry_after() {
    let api = api();
    let t = new_tenant(&api);
    let mut limited = None;
    // 10 at once; a very slow machine may see one more refilled (1 per 30 s).
    for _ in 0..15 {
        let r = api.post(
            "/dashboard/auth/login",
            &json!({"email": t.email, "password": "Wrong-Pass-1"}),
        );
        if r.status == 429 {
            limited = Some(r);
            break;
        }
        assert_eq!(r.status, 401, "{}", r.text);
    }
    let r = limited.expect("the 11th failed login is refused");
    assert_error(&r, 429);
    let secs: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(secs >= 1);
    // Even the right password waits.
    let right = api.post(
        "/dashboard/auth/login",
        &json!({"email": t.email, "password": TEST_PASSWORD}),
    );
    assert_eq!(right.status, 429);
}

// ----------------------------------------------------------- e-mail checking

#[test]
fn a_verification_token_works_once() {
    let api = api();
    let email = unique_email("once");
    assert_eq!(register(&api, &email, TEST_PASSWORD).status, 201);
    let token = latest_token(&api, &email, "verify_email");
    assert_eq!(
        api.get(&format!("/dashboard/auth/verify?token={token}"))
            .status,
        200
    );
    let again = api.get(&format!("/dashboard/auth/verify?token={token}"));
    assert_error(&again, 400);
    assert!(again.message().contains("token"));
    assert_error(&api.get("/dashboard/auth/verify?token=bogus123"), 400);
    assert_error(&api.get("/dashboard/auth/verify"), 400);
}

#[test]
fn an_unverified_account_can_log_in_but_not_create() {
    let api = api();
    let (email, jwt) = new_unverified(&api);
    let l = api.post(
        "/dashboard/auth/login",
        &json!({"email": email, "password": TEST_PASSWORD}),
    );
    assert_eq!(l.body["data"]["isVerified"], false);

    let key = request_key(&api, &jwt, "test");
    assert_error(&key, 403);
    assert!(
        key.message().to_lowercase().contains("verify"),
        "{}",
        key.text
    );
    let prov = provision(&api, &jwt, "testnet");
    assert_error(&prov, 403);
    assert!(prov.message().to_lowercase().contains("verify"));

    let profile = get_jwt(&api, "/dashboard/auth/profile", &jwt);
    assert_eq!(profile.body["data"]["emailVerified"], false);
}

#[test]
fn resending_the_verification_mail_replaces_the_old_link() {
    let api = api();
    let email = unique_email("resend");
    assert_eq!(register(&api, &email, TEST_PASSWORD).status, 201);
    let first = latest_token(&api, &email, "verify_email");
    let known = api.post(
        "/dashboard/auth/resend-verification-email",
        &json!({"email": email}),
    );
    let unknown = api.post(
        "/dashboard/auth/resend-verification-email",
        &json!({"email": unique_email("ghost")}),
    );
    assert_eq!(known.status, 200, "{}", known.text);
    assert_eq!(known.body, unknown.body);
    // The new mail comes from the queue consumer: wait for it.
    let second = bvs_tests::tenant::next_token(&api, &email, "verify_email", &first);
    assert_ne!(first, second);
    assert_error(
        &api.get(&format!("/dashboard/auth/verify?token={first}")),
        400,
    );
    assert_eq!(
        api.get(&format!("/dashboard/auth/verify?token={second}"))
            .status,
        200
    );
    assert_error(
        &api.post("/dashboard/auth/resend-verification-email", &json!({})),
        400,
    );
}

#[test]
fn the_dev_mailbox_needs_an_address() {
    let r = api().get("/dev/mail");
    assert_error(&r, 400);
    assert!(r.message().contains("to"));
}

// ----------------------------------------------------------------- passwords

#[test]
fn a_password_reset_does_not_reveal_whether_the_email_exists() {
    let api = api();
    let t = new_tenant(&api);
    let known = api.post(
        "/dashboard/auth/request-password-reset",
        &json!({"email": t.email}),
    );
    let unknown = api.post(
        "/dashboard/auth/request-password-reset",
        &json!({"email": unique_email("ghost")}),
    );
    assert_eq!(known.status, 200, "{}", known.text);
    assert_eq!(known.status, unknown.status);
    assert_eq!(known.body, unknown.body);
    assert_eq!(known.text, unknown.text);
}

#[test]
fn a_reset_token_sets_a_new_password_once_and_signs_out_old_sessions() {
    let api = api();
    let t = new_tenant(&api);
    api.post(
        "/dashboard/auth/request-password-reset",
        &json!({"email": t.email}),
    );
    let token = latest_token(&api, &t.email, "reset_password");

    let weak = api.post(
        "/dashboard/auth/reset-password",
        &json!({"token": token, "newPassword": "alllowercase"}),
    );
    assert_error(&weak, 400);
    assert!(weak.message().contains("newPassword"));

    let ok = api.post(
        "/dashboard/auth/reset-password",
        &json!({"token": token, "newPassword": "Brand-New-Pass-7"}),
    );
    assert_eq!(ok.status, 200, "{}", ok.text);
    let reuse = api.post(
        "/dashboard/auth/reset-password",
        &json!({"token": token, "newPassword": "Other-New-Pass-8"}),
    );
    assert_error(&reuse, 400);

    let old = api.post(
        "/dashboard/auth/login",
        &json!({"email": t.email, "password": TEST_PASSWORD}),
    );
    assert_error(&old, 401);
    login(&api, &t.email, "Brand-New-Pass-7");
    assert_error(&get_jwt(&api, "/dashboard/auth/profile", &t.jwt), 401);
}

#[test]
fn change_password_enforces_the_spec_rules() {
    let api = api();
    let t = new_tenant(&api);
    let path = "/dashboard/auth/change-password";
    let wrong = post_jwt(
        &api,
        path,
        &t.jwt,
        &json!({"currentPassword": "Not-The-One-1", "newPassword": "Another-Pass-2"}),
    );
    assert_error(&wrong, 400);
    assert!(wrong.message().contains("currentPassword"));
    let same = post_jwt(
        &api,
        path,
        &t.jwt,
        &json!({"currentPassword": TEST_PASSWORD, "newPassword": TEST_PASSWORD}),
    );
    assert_error(&same, 400);
    assert!(same.message().contains("different"));
    for weak in [
        "Sh0rt",
        "no-upper-1234",
        "NO-LOWER-1234",
        "No-Digits-Here",
        "Way-Too-Long-Password-1234567890x",
    ] {
        let r = post_jwt(
            &api,
            path,
            &t.jwt,
            &json!({"currentPassword": TEST_PASSWORD, "newPassword": weak}),
        );
        assert_error(&r, 400);
        assert!(r.message().contains("newPassword"), "{weak}: {}", r.text);
    }
    let none = api.post(
        path,
        &json!({"currentPassword": TEST_PASSWORD, "newPassword": "Another-Pass-2"}),
    );
    assert_error(&none, 401);

    let ok = post_jwt(
        &api,
        path,
        &t.jwt,
        &json!({"currentPassword": TEST_PASSWORD, "newPassword": "Another-Pass-2"}),
    );
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert!(!ok.message().is_empty());
    let fresh = login(&api, &t.email, "Another-Pass-2");
    assert_eq!(get_jwt(&api, "/dashboard/auth/profile", &fresh).status, 200);
}

// ---------------------------------------------------------------------- JWTs

#[test]
fn missing_tampered_foreign_none_and_expired_jwts_are_401() {
    let api = api();
    let t = new_tenant(&api);
    let profile = |jwt: &str| get_jwt(&api, "/dashboard/auth/profile", jwt);
    assert_eq!(profile(&t.jwt).status, 200);

    assert_error(&api.get("/dashboard/auth/profile"), 401);
    assert_error(&profile("not-a-jwt"), 401);

    let claims = claims(&t.jwt);
    let header = json!({"alg": "HS256", "typ": "JWT"});
    let secret = dev_var("JWT_SECRET");

    // Payload changed, signature kept.
    let mut other = claims.clone();
    other["exp"] = json!(now_secs() + 999_999);
    let parts: Vec<&str> = t.jwt.split('.').collect();
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64url(other.to_string().as_bytes()),
        parts[2]
    );
    assert_error(&profile(&tampered), 401);

    // Signed with another secret.
    assert_error(&profile(&sign(&header, &claims, b"some-other-secret")), 401);

    // alg none, with and without a signature.
    let none_header = b64url(json!({"alg": "none", "typ": "JWT"}).to_string().as_bytes());
    let body = b64url(claims.to_string().as_bytes());
    assert_error(&profile(&format!("{none_header}.{body}.")), 401);
    assert_error(&profile(&format!("{none_header}.{body}.{}", parts[2])), 401);

    // HS512 header signed with HS256: refused on the algorithm.
    assert_error(
        &profile(&sign(
            &json!({"alg": "HS512", "typ": "JWT"}),
            &claims,
            secret.as_bytes(),
        )),
        401,
    );

    // Expired, properly signed with the real secret.
    let mut expired = claims.clone();
    expired["iat"] = json!(now_secs() - 7200);
    expired["exp"] = json!(now_secs() - 60);
    let r = profile(&sign(&header, &expired, secret.as_bytes()));
    assert_error(&r, 401);
    assert!(r.message().to_lowercase().contains("expired"), "{}", r.text);

    // The forging helper itself is right: a fresh token it signs works.
    let mut fresh = claims;
    fresh["exp"] = json!(now_secs() + 600);
    assert_eq!(
        profile(&sign(&header, &fresh, secret.as_bytes())).status,
        200
    );
}

// ---------------------------------------------------- profile & preferences

#[test]
fn the_profile_and_preferences_round_trip() {
    let api = api();
    let t = new_tenant(&api);
    let p = get_jwt(&api, "/dashboard/auth/profile", &t.jwt);
    assert_eq!(p.status, 200, "{}", p.text);
    let d = &p.body["data"];
    assert_eq!(d["email"], t.email.as_str());
    assert_eq!(d["firstName"], "Ada");
    assert_eq!(d["lastName"], "Lovelace");
    assert_eq!(d["tenantId"], t.tenant_id.as_str());
    assert_eq!(d["emailVerified"], true);
    assert!(d["id"].is_string());
    assert!(d["createdAt"].as_str().unwrap().ends_with('Z'));

    let r = patch_jwt(
        &api,
        "/dashboard/auth/preferences",
        &t.jwt,
        &json!({"preferredEnvironment": "production"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["preferredEnvironment"], "production");
    assert!(!r.message().is_empty());
    let bad = patch_jwt(
        &api,
        "/dashboard/auth/preferences",
        &t.jwt,
        &json!({"preferredEnvironment": "mainnet"}),
    );
    assert_error(&bad, 400);
    assert!(bad.message().contains("preferredEnvironment"));
}

// -------------------------------------------------------- environments, plans

#[test]
fn provisioning_validates_and_reprovisions_the_sandbox() {
    let api = api();
    let t = new_tenant(&api);
    let bad = provision(&api, &t.jwt, "moon");
    assert_error(&bad, 400);
    assert!(bad.message().contains("environment"));
    let r = provision(&api, &t.jwt, "testnet");
    assert_eq!(r.status, 201, "{}", r.text);
    let d = &r.body["data"];
    assert_eq!(d["tenantId"], t.tenant_id.as_str());
    assert_eq!(d["environment"], "testnet");
    assert_eq!(d["status"], "provisioning");
    assert!(d["message"].is_string());
    assert_eq!(customers(&api, &t.test_key).status, 200);
}

#[test]
fn the_operator_plan_route_needs_the_admin_token() {
    let api = api();
    let t = new_tenant(&api);
    let path = format!("/admin/tenants/{}/plan", t.tenant_id);
    let none = api.post(&path, &json!({"plan": "pilot"}));
    assert_error(&none, 401);
    let wrong = api.send(
        api.req(reqwest::Method::POST, &path)
            .bearer_auth("0".repeat(64))
            .json(&json!({"plan": "pilot"})),
    );
    assert_error(&wrong, 401);
    // A tenant's own JWT is not an operator token.
    assert_error(
        &post_jwt(&api, &path, &t.jwt, &json!({"plan": "pilot"})),
        401,
    );
    let bad = set_plan(&api, &t.tenant_id, "platinum");
    assert_error(&bad, 400);
    assert!(bad.message().contains("plan"));
    assert_error(&set_plan(&api, "ten_doesnotexist", "pilot"), 404);
    let ok = set_plan(&api, &t.tenant_id, "pilot");
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.body["data"]["plan"], "pilot");
}

#[test]
fn a_pilot_tenant_provisions_production_and_its_live_key_works_there_only() {
    let api = api();
    let t = new_tenant_on_plan(&api, "pilot");
    // Before provisioning, a live key cannot be created.
    let early = request_key(&api, &t.jwt, "live");
    assert_error(&early, 403);

    let live = provision_production(&api, &t);
    assert!(live.starts_with("pk_live_"), "{live}");
    let s = get_jwt(
        &api,
        &format!("/dashboard/contracts/{}/status", t.tenant_id),
        &t.jwt,
    );
    let mainnet = s.body["data"]["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["environment"] == "mainnet")
        .unwrap()
        .clone();
    assert_eq!(mainnet["status"], "active");
    assert!(mainnet["provisionedAt"].is_string());
    assert_eq!(customers(&api, &live).status, 200);

    // Back on Free, the production key stops working (no subscription).
    assert_eq!(set_plan(&api, &t.tenant_id, "free").status, 200);
    let unpaid = customers(&api, &live);
    assert_error(&unpaid, 402);
    assert!(unpaid.message().contains("subscription"), "{}", unpaid.text);
    assert_eq!(
        customers(&api, &t.test_key).status,
        200,
        "sandbox still works"
    );
    assert_eq!(set_plan(&api, &t.tenant_id, "pilot").status, 200);
    assert_eq!(customers(&api, &live).status, 200);

    // A live key whose id is presented as a test key is unknown there.
    let (_, rest) = live.split_at("pk_live_".len());
    let as_test = format!("pk_test_{rest}");
    assert_error(&customers(&api, &as_test), 401);
}

#[test]
fn a_live_key_needs_an_active_production_environment() {
    let api = api();
    let t = new_tenant(&api);
    let r = request_key(&api, &t.jwt, "live");
    assert_error(&r, 403);
    assert!(r.message().contains("Production"), "{}", r.text);
    let bad = request_key(&api, &t.jwt, "prod");
    assert_error(&bad, 400);
    assert!(bad.message().contains("environment"));
}

// ------------------------------------------------------------------ API keys

#[test]
fn keys_are_listed_without_their_secret_and_can_be_toggled_and_deleted() {
    let api = api();
    let t = new_tenant(&api);
    let created = post_jwt(
        &api,
        "/dashboard/api-keys",
        &t.jwt,
        &json!({"environment": "test", "name": "ci"}),
    );
    assert_eq!(created.status, 201, "{}", created.text);
    let key = created.body["data"]["key"].as_str().unwrap().to_string();
    let id = created.body["data"]["id"].as_str().unwrap().to_string();
    let secret = key.split_once('.').unwrap().1.to_string();
    assert_eq!(created.body["data"]["name"], "ci");
    assert_eq!(created.body["data"]["environment"], "test");

    assert_eq!(customers(&api, &key).status, 200);
    let list = get_jwt(&api, "/dashboard/api-keys", &t.jwt);
    assert_eq!(list.status, 200);
    assert!(!list.text.contains(&secret), "the list leaks a secret");
    let entry = list.item(&id);
    assert_eq!(entry["name"], "ci");
    assert_eq!(entry["environment"], "test");
    assert_eq!(entry["active"], true);
    assert_eq!(entry["prefix"], format!("pk_test_{id}"));
    assert!(entry["createdAt"].is_string());
    assert!(entry["lastUsedAt"].is_string(), "{entry}");
    assert!(entry.get("key").is_none());

    let off = toggle_key(&api, &t.jwt, &id);
    assert_eq!(off.status, 200, "{}", off.text);
    assert_eq!(off.body["data"]["active"], false);
    let disabled = customers(&api, &key);
    assert_error(&disabled, 401);
    assert!(disabled.message().contains("disabled"));
    let on = toggle_key(&api, &t.jwt, &id);
    assert_eq!(on.body["data"]["active"], true);
    assert_eq!(customers(&api, &key).status, 200);

    let del = delete_jwt(&api, &format!("/dashboard/api-keys/{id}"), &t.jwt);
    assert_eq!(del.status, 200, "{}", del.text);
    assert_error(&customers(&api, &key), 401);
    assert_error(
        &delete_jwt(&api, &format!("/dashboard/api-keys/{id}"), &t.jwt),
        404,
    );
    let list = get_jwt(&api, "/dashboard/api-keys", &t.jwt);
    assert!(!list.text.contains(&id));
}

#[test]
fn a_pilot_tenant_holds_at_most_100_keys() {
    let api = api();
    // Keys per tenant are per plan (docs/security.md): Pilot holds 100.
    let t = new_tenant_on_plan(&api, "pilot");
    // new_tenant made one; deleted keys do not count.
    let extra = create_key(&api, &t.jwt, "test");
    let extra_id = key_id(&extra);
    for _ in 2..100 {
        create_key(&api, &t.jwt, "test");
    }
    let over = request_key(&api, &t.jwt, "test");
    assert_error(&over, 402);
    assert_eq!(over.body["code"], "plan_limit_exceeded", "{}", over.text);
    assert!(over.message().contains("100"), "{}", over.text);
    assert_eq!(
        delete_jwt(&api, &format!("/dashboard/api-keys/{extra_id}"), &t.jwt).status,
        200
    );
    create_key(&api, &t.jwt, "test");
}

#[test]
fn a_missing_malformed_unknown_or_wrong_key_is_401() {
    let api = api();
    let t = new_tenant(&api);
    assert_error(&api.get("/api/v1/balance/customers"), 401);
    for bad in [
        "nonsense",
        "pk_prod_abcd1234.abcdefghijklmnopqrstuvwxyz",
        "pk_test_abcd1234",
        "pk_test_unknownkeyid0.abcdefghijklmnopqrstuvwxyz012345",
    ] {
        assert_error(&customers(&api, bad), 401);
    }
    let (prefix, _) = t.test_key.split_once('.').unwrap();
    let wrong_secret = format!("{prefix}.abcdefghijklmnopqrstuvwxyz012345");
    let r = customers(&api, &wrong_secret);
    assert_error(&r, 401);
}

#[test]
fn a_sandbox_key_is_rate_limited_with_retry_after() {
    let api = api();
    let t = new_tenant(&api);
    let base = api.base.clone();
    let key = t.test_key.clone();
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let base = base.clone();
            let key = key.clone();
            std::thread::spawn(move || {
                let api = Api::new(base);
                (0..12).map(|_| customers(&api, &key)).collect::<Vec<_>>()
            })
        })
        .collect();
    let replies: Vec<Reply> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let limited: Vec<&Reply> = replies.iter().filter(|r| r.status == 429).collect();
    let ok = replies.iter().filter(|r| r.status == 200).count();
    assert!(ok >= 20, "the burst of 20 is served: {ok} ok");
    assert!(
        !limited.is_empty(),
        "96 requests at once exceed 10/s burst 20"
    );
    for r in limited {
        assert_error(r, 429);
        let secs: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!(secs >= 1);
    }
}

#[test]
fn the_free_plan_quota_is_402_naming_the_quota_and_its_reset() {
    let api = api();
    let t = new_tenant(&api);
    let items: Vec<Value> = (0..10)
        .map(|i| json!({"customerId": "cus_q", "delta": 1, "reason": format!("item {i}")}))
        .collect();
    let k = api.keyed(&t.test_key);
    let ok = k.batch(&items);
    assert!(
        ok.status == 200 || ok.status == 201 || ok.status == 202,
        "{}",
        ok.text
    );
    let over = k.post(
        DELTA,
        &json!({"customerId": "cus_q", "delta": 1, "reason": "one too many"}),
    );
    assert_error(&over, 402);
    let m = over.message();
    assert!(m.contains("10"), "{m}");
    assert!(m.contains("Free"), "{m}");
    assert!(m.contains("resets"), "{m}");
}

#[test]
fn a_credit_pool_id_selects_only_my_own_contract() {
    let api = api();
    let a = new_tenant(&api);
    let b = new_tenant(&api);
    let contract_of = |t: &bvs_tests::tenant::Tenant| {
        get_jwt(&api, "/dashboard/contracts", &t.jwt).body["data"][0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (a_contract, b_contract) = (contract_of(&a), contract_of(&b));
    let emit = |key: &str, pool: &str| {
        let k = api.keyed(key);
        k.send(
            k.req(reqwest::Method::POST, DELTA)
                .header("x-credit-pool-id", pool)
                .json(&json!({"customerId": "cus_pool", "delta": 5, "reason": "pool"})),
        )
    };
    let mine = emit(&a.test_key, &a_contract);
    assert!(mine.status < 300, "{}", mine.text);
    assert_error(&emit(&a.test_key, &b_contract), 404);
    assert_error(&emit(&a.test_key, "ctr_doesnotexist"), 404);
}

#[test]
fn concurrent_emits_never_overrun_the_free_quota() {
    let api = api();
    let t = new_tenant(&api);
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let base = api.base.clone();
            let key = t.test_key.clone();
            std::thread::spawn(move || {
                let api = Api::new(base);
                api.keyed(&key).post(
                    DELTA,
                    &json!({"customerId": "cus_race", "delta": 1, "reason": format!("race {i}")}),
                )
            })
        })
        .collect();
    let replies: Vec<Reply> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let accepted = replies.iter().filter(|r| r.status < 300).count();
    let refused = replies.iter().filter(|r| r.status == 402).count();
    assert_eq!(accepted, 10, "exactly the quota is accepted: {replies:?}");
    assert_eq!(refused, 6, "the rest is 402: {replies:?}");
}

#[test]
fn an_enterprise_key_has_a_higher_rate_limit() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let base = api.base.clone();
            let key = t.test_key.clone();
            std::thread::spawn(move || {
                let api = Api::new(base);
                (0..12)
                    .map(|_| customers(&api, &key).status)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let statuses: Vec<u16> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(
        statuses.iter().all(|s| *s == 200),
        "96 requests at once stay within 1000/s burst 2000: {statuses:?}"
    );
}

// ---------------------------------------------------------------- retention

#[test]
fn retention_accepts_null_7_30_90_only() {
    let api = api();
    let t = new_tenant(&api);
    let path = "/dashboard/tenant/retention";
    for days in [json!(7), json!(30), json!(90), Value::Null] {
        let r = patch_jwt(&api, path, &t.jwt, &json!({"dataRetentionDays": days}));
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body["data"]["dataRetentionDays"], days);
    }
    for bad in [json!(5), json!("30"), json!(30.5), json!(-7)] {
        let r = patch_jwt(&api, path, &t.jwt, &json!({"dataRetentionDays": bad}));
        assert_error(&r, 400);
        assert!(r.message().contains("dataRetentionDays"), "{}", r.text);
    }
    let missing = patch_jwt(&api, path, &t.jwt, &json!({}));
    assert_error(&missing, 400);
    assert!(missing.message().contains("dataRetentionDays"));
    assert_error(
        &api.send(
            api.req(reqwest::Method::PATCH, path)
                .json(&json!({"dataRetentionDays": 7})),
        ),
        401,
    );
}

// --------------------------------------------------------- tenant isolation

#[test]
fn another_tenant_cannot_see_or_touch_my_keys_or_environments() {
    let api = api();
    let a = new_tenant(&api);
    let b = new_tenant(&api);
    let a_keys = get_jwt(&api, "/dashboard/api-keys", &a.jwt);
    let a_id = a_keys.body["data"][0]["id"].as_str().unwrap().to_string();

    let b_keys = get_jwt(&api, "/dashboard/api-keys", &b.jwt);
    assert!(!b_keys.text.contains(&a_id));
    assert_error(&toggle_key(&api, &b.jwt, &a_id), 404);
    assert_error(
        &delete_jwt(&api, &format!("/dashboard/api-keys/{a_id}"), &b.jwt),
        404,
    );
    assert_eq!(
        customers(&api, &a.test_key).status,
        200,
        "A's key still works"
    );

    assert_error(
        &get_jwt(
            &api,
            &format!("/dashboard/contracts/{}/status", a.tenant_id),
            &b.jwt,
        ),
        404,
    );
    let b_list = get_jwt(&api, "/dashboard/contracts", &b.jwt);
    assert!(!b_list.text.contains(&a.tenant_id));
}

// ------------------------------------------------------ no secret in clear

fn shared_state_dir() -> PathBuf {
    let base = state_base();
    let prefix = format!("shared-{}-", std::process::id());
    std::fs::read_dir(&base)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .expect("the shared state directory")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn no_table_or_log_holds_a_password_key_secret_or_token_in_clear() {
    let api = api();
    let t = new_tenant(&api);
    let key_secret = bvs_tests::tenant::key_secret(&t.test_key);
    assert_eq!(customers(&api, &t.test_key).status, 200);
    api.post(
        "/dashboard/auth/request-password-reset",
        &json!({"email": t.email}),
    );
    let reset_token = latest_token(&api, &t.email, "reset_password");
    let verify_token = latest_token(&api, &t.email, "verify_email");
    // Give SQLite a moment to write its pages and WAL.
    std::thread::sleep(Duration::from_millis(500));

    let mut files = Vec::new();
    files_under(&shared_state_dir(), &mut files);
    assert!(
        files.iter().any(|f| f.to_string_lossy().contains("d1")),
        "found the D1 files"
    );
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        // The spec puts the verification token in a URL (GET ?token=), and
        // the platform's own request traces and wrangler's access log record
        // URLs. That token is single-use and already spent here; it must
        // still be absent from every table and from our log lines.
        let path = f.to_string_lossy();
        let platform_url_log = path.contains("/observability/") || path.ends_with(".log");
        let mut needles = vec![
            ("password", t.password.as_str()),
            ("API-key secret", key_secret.as_str()),
            ("reset token", reset_token.as_str()),
        ];
        if !platform_url_log {
            needles.push(("verification token", verify_token.as_str()));
        }
        for (what, needle) in needles {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{} holds a {what} in clear",
                f.display()
            );
        }
    }
}
