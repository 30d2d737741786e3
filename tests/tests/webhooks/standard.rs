//! Standard Webhooks (issue 29) through `wrangler dev`: every delivery
//! carries `webhook-id`, `webhook-timestamp` and `webhook-signature` beside
//! the legacy headers; its `v1,` HMAC and its `v1a,` Ed25519 signature are
//! checked here as the spec's text describes them (signed content
//! `{id}.{timestamp}.{body}`; the key of `v1` is the base64 decoding of the
//! secret after `whsec_`; `v1a` verifies with the endpoint's own `whpk_`
//! key, issue 40), independently of the service's code. A rotation signs
//! with both secrets and both keys for its overlap. (The SDK suites check `v1` again with the
//! `standardwebhooks` packages from npm and PyPI.)

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bvs_tests::client::Api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::receiver::{Received, Receiver};
use bvs_tests::tenant::{create_webhook, get_jwt, post_jwt, test_webhook, Tenant};
use bvs_tests::{api, eventually, tenant::new_tenant};
use ed25519_dalek::{Signature, Verifier as _, VerifyingKey};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

fn create_ok(api: &Api, t: &Tenant, url: &str, events: &[&str]) -> (String, String) {
    let r = create_webhook(api, &t.jwt, url, events, "standard webhooks");
    assert_eq!(r.status, 201, "{}", r.text);
    (
        r.body["data"]["id"].as_str().unwrap().to_string(),
        r.body["data"]["secret"].as_str().unwrap().to_string(),
    )
}

/// `{webhook-id}.{webhook-timestamp}.{body}`, from the headers received.
pub(crate) fn signed_content(req: &Received) -> Vec<u8> {
    let mut content = format!(
        "{}.{}.",
        req.header("webhook-id").unwrap(),
        req.header("webhook-timestamp").unwrap()
    )
    .into_bytes();
    content.extend_from_slice(&req.body);
    content
}

/// The signatures of `webhook-signature` with this version (`v1`, `v1a`).
fn signatures(req: &Received, version: &str) -> Vec<Vec<u8>> {
    let prefix = format!("{version},");
    req.header("webhook-signature")
        .unwrap()
        .split(' ')
        .filter_map(|s| s.strip_prefix(&prefix))
        .map(|b64| BASE64.decode(b64).unwrap())
        .collect()
}

/// Spec: `v1` is HMAC-SHA256 of the signed content, keyed with the base64
/// decoding of the secret's part after `whsec_`. True when one of the
/// delivery's `v1` signatures matches.
fn v1_ok(req: &Received, secret: &str, content: &[u8]) -> bool {
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    signatures(req, "v1").iter().any(|sig| {
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(content);
        mac.verify_slice(sig).is_ok()
    })
}

/// Spec: `v1a` is an Ed25519 signature of the signed content, checked with
/// the `whpk_` public key (base64 of the 32-byte key).
pub(crate) fn v1a_ok(req: &Received, public_key: &str, content: &[u8]) -> bool {
    let key: [u8; 32] = BASE64
        .decode(public_key.strip_prefix("whpk_").unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let key = VerifyingKey::from_bytes(&key).unwrap();
    signatures(req, "v1a").iter().any(|sig| {
        let sig: [u8; 64] = sig.as_slice().try_into().unwrap();
        key.verify(content, &Signature::from_bytes(&sig)).is_ok()
    })
}

/// The endpoint's own key, from its dashboard answer (issue 40).
fn endpoint_key(api: &Api, t: &Tenant, id: &str) -> String {
    let r = get_jwt(api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    let key = r.body["data"]["publicKey"].as_str().unwrap().to_string();
    assert!(key.starts_with("whpk_"), "{}", r.text);
    key
}

/// Issue 40 changed this documented answer: the route once listed one key
/// per environment, which signed every tenant's deliveries; it now lists
/// none and says where an endpoint's own key is.
#[test]
fn the_key_document_lists_no_shared_key_and_points_to_the_endpoints_own() {
    let api = api();
    let r = api.get("/api/v1/webhooks/keys");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["keys"], json!([]), "{}", r.text);
    let message = r.body["data"]["message"].as_str().unwrap();
    assert!(message.contains("publicKey"), "{message}");
}

#[test]
fn every_endpoint_shows_a_key_of_its_own_in_each_answer() {
    let api = api();
    let t = new_tenant(&api);
    let r = create_webhook(&api, &t.jwt, "https://hooks.example.com/a", &["test"], "a");
    assert_eq!(r.status, 201, "{}", r.text);
    let a = r.body["data"]["id"].as_str().unwrap().to_string();
    let created = r.body["data"]["publicKey"].as_str().unwrap().to_string();
    assert!(created.starts_with("whpk_"), "{}", r.text);
    assert!(r.body["data"]["previousPublicKey"].is_null(), "{}", r.text);
    // The same key on every read, in the list too.
    assert_eq!(endpoint_key(&api, &t, &a), created);
    let list = get_jwt(&api, "/dashboard/webhooks", &t.jwt);
    assert_eq!(list.body["data"][0]["publicKey"], created.as_str());
    // Another endpoint, of the same tenant or another, has another key.
    let (b, _) = create_ok(&api, &t, "https://hooks.example.com/b", &["test"]);
    assert_ne!(endpoint_key(&api, &t, &b), created);
    let other = new_tenant(&api);
    let (c, _) = create_ok(&api, &other, "https://hooks.example.com/a", &["test"]);
    assert_ne!(endpoint_key(&api, &other, &c), created);
    // Another tenant cannot read it.
    let r = get_jwt(&api, &format!("/dashboard/webhooks/{a}"), &other.jwt);
    assert_eq!(r.status, 404, "{}", r.text);
}

#[test]
fn a_delivery_is_signed_by_standard_webhooks_v1_and_v1a_with_a_stable_id_across_retries() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[500]);
    let (id, secret) = create_ok(&api, &t, &rx.url("/std"), &["delta.verified"]);
    let key = endpoint_key(&api, &t, &id);
    // Another endpoint's key (of another tenant) verifies none of it.
    let other = new_tenant(&api);
    let (other_id, _) = create_ok(&api, &other, &rx.url("/other"), &["test"]);
    let other_key = endpoint_key(&api, &other, &other_id);
    api.keyed(&t.test_key)
        .emit(&Delta::new("cus_std_1", 5, "standard webhooks"));

    let got = eventually(WAIT, "a retried delivery", || {
        sweep(&api, now_ms());
        let got = rx.received();
        (got.len() >= 2).then_some(got)
    });
    for req in &got[..2] {
        let body = req.json();
        let content = signed_content(req);
        assert_eq!(req.header("webhook-id").unwrap(), body["id"]);
        assert_eq!(
            req.header("webhook-id"),
            req.header("x-service-delivery-id")
        );
        assert_eq!(
            req.header("webhook-timestamp"),
            req.header("x-service-timestamp")
        );
        let ts: u64 = req.header("webhook-timestamp").unwrap().parse().unwrap();
        assert!(ts.abs_diff(now_ms() / 1000) < 300, "timestamp {ts}");
        assert_eq!(signatures(req, "v1").len(), 1, "{req:?}");
        assert_eq!(signatures(req, "v1a").len(), 1, "{req:?}");
        assert!(v1_ok(req, &secret, &content), "v1: {req:?}");
        assert!(v1a_ok(req, &key, &content), "v1a: {req:?}");
        // The legacy header stays.
        assert!(req.signature_is_valid(&secret));
        // Tampered: another body, another id, another timestamp all fail.
        let mut tampered = content.clone();
        let last = tampered.len() - 2;
        tampered[last] ^= 1;
        assert!(!v1_ok(req, &secret, &tampered));
        assert!(!v1a_ok(req, &key, &tampered));
        let other_ts = format!("{}.{}.", body["id"].as_str().unwrap(), ts + 1).into_bytes();
        let moved = [other_ts, req.body.clone()].concat();
        assert!(!v1_ok(req, &secret, &moved));
        assert!(!v1a_ok(req, &key, &moved));
        // Another endpoint's key does not verify it.
        assert!(!v1a_ok(req, &other_key, &content));
    }
    // A retry keeps its webhook-id.
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
}

#[test]
fn a_rotated_secret_signs_beside_the_previous_one_for_the_overlap() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    let (id, old) = create_ok(&api, &t, &rx.url("/rot"), &["delta.verified"]);
    let old_key = endpoint_key(&api, &t, &id);
    let rotate = |body: &Value| {
        post_jwt(
            &api,
            &format!("/dashboard/webhooks/{id}/rotate-secret"),
            &t.jwt,
            body,
        )
    };

    let r = rotate(&json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    let new = r.body["data"]["secret"].as_str().unwrap().to_string();
    assert!(new.starts_with("whsec_") && new != old, "{}", r.text);
    let until = r.body["data"]["previousSecretExpiresAt"].as_str().unwrap();
    assert!(until > "2000", "{until}");
    // The key rotates with the secret (issue 40), with the same overlap.
    let new_key = r.body["data"]["publicKey"].as_str().unwrap().to_string();
    assert!(
        new_key.starts_with("whpk_") && new_key != old_key,
        "{}",
        r.text
    );
    assert_eq!(r.body["data"]["previousPublicKey"], old_key.as_str());
    assert_eq!(endpoint_key(&api, &t, &id), new_key);
    let got = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert_eq!(got.body["data"]["previousPublicKey"], old_key.as_str());
    assert_eq!(got.body["data"]["previousPublicKeyExpiresAt"], until);

    // During the overlap: two v1 signatures, one per secret, and two v1a,
    // one per key (the new ones first); the legacy header moves to the new
    // secret at once.
    assert_eq!(test_webhook(&api, &t.jwt, &id).status, 200);
    let req = rx.received().pop().unwrap();
    let content = signed_content(&req);
    assert_eq!(signatures(&req, "v1").len(), 2, "{req:?}");
    assert_eq!(signatures(&req, "v1a").len(), 2, "{req:?}");
    assert!(v1_ok(&req, &new, &content));
    assert!(v1_ok(&req, &old, &content));
    assert!(v1a_ok(&req, &new_key, &content));
    assert!(v1a_ok(&req, &old_key, &content));
    assert!(req.signature_is_valid(&new));
    assert!(!req.signature_is_valid(&old));

    // No overlap: the previous secret stops signing now.
    let r = rotate(&json!({"overlapHours": 0}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.body["data"]["previousSecretExpiresAt"].is_null(),
        "{}",
        r.text
    );
    let newest = r.body["data"]["secret"].as_str().unwrap().to_string();
    let newest_key = r.body["data"]["publicKey"].as_str().unwrap().to_string();
    assert!(r.body["data"]["previousPublicKey"].is_null(), "{}", r.text);
    assert_eq!(test_webhook(&api, &t.jwt, &id).status, 200);
    let req = rx.received().pop().unwrap();
    let content = signed_content(&req);
    assert_eq!(signatures(&req, "v1").len(), 1, "{req:?}");
    assert_eq!(signatures(&req, "v1a").len(), 1, "{req:?}");
    assert!(v1_ok(&req, &newest, &content));
    assert!(!v1_ok(&req, &new, &content));
    assert!(v1a_ok(&req, &newest_key, &content));
    assert!(!v1a_ok(&req, &new_key, &content));
    assert!(!v1a_ok(&req, &old_key, &content));

    // A bad overlap is a 400 naming it; another tenant's webhook is 404.
    let r = rotate(&json!({"overlapHours": 1000}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["field"], "overlapHours", "{}", r.text);
    let other = new_tenant(&api);
    let r = post_jwt(
        &api,
        &format!("/dashboard/webhooks/{id}/rotate-secret"),
        &other.jwt,
        &json!({}),
    );
    assert_eq!(r.status, 404, "{}", r.text);
}
