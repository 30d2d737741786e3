//! Standard Webhooks (issue 29) through `wrangler dev`: every delivery
//! carries `webhook-id`, `webhook-timestamp` and `webhook-signature` beside
//! the legacy headers; its `v1,` HMAC and its `v1a,` Ed25519 signature are
//! checked here as the spec's text describes them (signed content
//! `{id}.{timestamp}.{body}`; the key of `v1` is the base64 decoding of the
//! secret after `whsec_`; `v1a` verifies with the published `whpk_` key),
//! independently of the service's code. A secret rotation signs with both
//! secrets for its overlap. (The SDK suites check `v1` again with the
//! `standardwebhooks` packages from npm and PyPI.)

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use bvs_tests::client::Api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::receiver::{Received, Receiver};
use bvs_tests::tenant::{create_webhook, post_jwt, test_webhook, Tenant};
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
fn signed_content(req: &Received) -> Vec<u8> {
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
fn v1a_ok(req: &Received, public_key: &str, content: &[u8]) -> bool {
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

/// The published key of `env`, from the public key document.
fn public_key(api: &Api, env: &str) -> String {
    let r = api.get("/api/v1/webhooks/keys");
    assert_eq!(r.status, 200, "{}", r.text);
    let keys = r.body["data"]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2, "{}", r.text);
    let k = keys.iter().find(|k| k["environment"] == env).unwrap();
    assert_eq!(k["algorithm"], "ed25519");
    assert_eq!(k["signatureVersion"], "v1a");
    assert_eq!(k["keyId"].as_str().unwrap().len(), 16);
    k["publicKey"].as_str().unwrap().to_string()
}

#[test]
fn the_key_document_is_public_and_names_one_key_per_environment() {
    let api = api();
    let sandbox = public_key(&api, "sandbox");
    let production = public_key(&api, "production");
    assert!(sandbox.starts_with("whpk_"), "{sandbox}");
    assert_ne!(sandbox, production);
    // Stable: the same key on every read.
    assert_eq!(public_key(&api, "sandbox"), sandbox);
}

#[test]
fn a_delivery_is_signed_by_standard_webhooks_v1_and_v1a_with_a_stable_id_across_retries() {
    let api = api();
    let t = new_tenant(&api);
    let key = public_key(&api, "sandbox");
    let rx = Receiver::start(&[500]);
    let (_, secret) = create_ok(&api, &t, &rx.url("/std"), &["delta.verified"]);
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
        // Another environment's key does not verify it.
        assert!(!v1a_ok(req, &public_key(&api, "production"), &content));
    }
    // A retry keeps its webhook-id.
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
}

#[test]
fn a_rotated_secret_signs_beside_the_previous_one_for_the_overlap() {
    let api = api();
    let t = new_tenant(&api);
    let key = public_key(&api, "sandbox");
    let rx = Receiver::start(&[]);
    let (id, old) = create_ok(&api, &t, &rx.url("/rot"), &["delta.verified"]);
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

    // During the overlap: two v1 signatures, one per secret; the legacy
    // header moves to the new secret at once.
    assert_eq!(test_webhook(&api, &t.jwt, &id).status, 200);
    let req = rx.received().pop().unwrap();
    let content = signed_content(&req);
    assert_eq!(signatures(&req, "v1").len(), 2, "{req:?}");
    assert!(v1_ok(&req, &new, &content));
    assert!(v1_ok(&req, &old, &content));
    assert!(v1a_ok(&req, &key, &content));
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
    assert_eq!(test_webhook(&api, &t.jwt, &id).status, 200);
    let req = rx.received().pop().unwrap();
    let content = signed_content(&req);
    assert_eq!(signatures(&req, "v1").len(), 1, "{req:?}");
    assert!(v1_ok(&req, &newest, &content));
    assert!(!v1_ok(&req, &new, &content));

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
