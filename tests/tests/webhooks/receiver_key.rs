//! Issue 40 (High): a `v1a` delivery binds its receiver. Tenant B emits
//! `{customerId: "acme-customer-42", delta: 1000000}` to its own ledger,
//! takes the delivery its own receiver got, and posts it, headers and
//! body unchanged, to tenant A's receiver. A checks it as a receiver must
//! (docs/webhooks.md, "Verifying a delivery"): `v1a` with the public key
//! of its own endpoint, shown with it in the dashboard answers, a
//! timestamp within 300 s, an id it has not seen. It rejects the
//! forwarded delivery and accepts its own. Before the fix every tenant's
//! deliveries were signed with one environment key, listed publicly at
//! `GET /api/v1/webhooks/keys`, and B's delivery verified with it at A's.

use bvs_tests::cron::now_ms;
use bvs_tests::ledger::Delta;
use bvs_tests::receiver::{wait_event, Received, Receiver};
use bvs_tests::tenant::{create_webhook, get_jwt, new_tenant, Tenant};
use bvs_tests::{api, client::Api};

use super::standard::{signed_content, v1a_ok};

/// Creates a `delta.verified` webhook to `rx`; returns (id, publicKey of
/// the create answer).
fn endpoint(api: &Api, t: &Tenant, rx: &Receiver) -> (String, String) {
    let r = create_webhook(api, &t.jwt, &rx.url("/own"), &["delta.verified"], "own");
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let key = r.body["data"]["publicKey"].as_str();
    (id, key.unwrap_or_default().to_string())
}

/// What a receiver must check of a `v1a` delivery, with the key it pinned:
/// the signature, a timestamp within 300 s, an id not seen before.
fn receiver_accepts(req: &Received, pinned: &str, seen: &[String]) -> bool {
    let ts: u64 = req.header("webhook-timestamp").unwrap().parse().unwrap();
    let id = req.header("webhook-id").unwrap().to_string();
    ts.abs_diff(now_ms() / 1000) <= 300
        && !seen.contains(&id)
        && v1a_ok(req, pinned, &signed_content(req))
}

/// POSTs a delivery as received, headers and body unchanged, to `to`.
fn forward(req: &Received, to: &str) {
    let mut rb = reqwest::blocking::Client::new()
        .post(to)
        .body(req.body.clone());
    for (k, v) in &req.headers {
        if k.starts_with("webhook-") || k.starts_with("x-service-") || k == "content-type" {
            rb = rb.header(k, v);
        }
    }
    let status = rb.send().unwrap().status();
    assert!(status.is_success(), "{status}");
}

#[test]
fn a_v1a_delivery_forwarded_from_another_tenants_receiver_is_rejected() {
    let api = api();
    let a = new_tenant(&api);
    let b = new_tenant(&api);
    let rx_a = Receiver::start(&[]);
    let rx_b = Receiver::start(&[]);
    let (a_id, _) = endpoint(&api, &a, &rx_a);
    let (_, b_key) = endpoint(&api, &b, &rx_b);

    // B emits to its own ledger and takes its own receiver's delivery.
    api.keyed(&b.test_key)
        .emit(&Delta::new("acme-customer-42", 1_000_000, "forged"));
    let from_b = wait_event(&api, &rx_b, "delta.verified");
    assert_eq!(from_b.json()["data"]["customerId"], "acme-customer-42");

    // The key list no longer names a key that verifies B's delivery (it
    // named the environment key, which did: the attack).
    let listed = api.get("/api/v1/webhooks/keys");
    assert_eq!(listed.status, 200, "{}", listed.text);
    for k in listed.body["data"]["keys"].as_array().unwrap() {
        let key = k["publicKey"].as_str().unwrap();
        assert!(
            !v1a_ok(&from_b, key, &signed_content(&from_b)),
            "tenant B's delivery verifies with the listed key {key} ({})",
            k["environment"]
        );
    }

    // A pins its own endpoint's key, as its dashboard answer shows it.
    let got = get_jwt(&api, &format!("/dashboard/webhooks/{a_id}"), &a.jwt);
    assert_eq!(got.status, 200, "{}", got.text);
    let a_key = got.body["data"]["publicKey"].as_str().unwrap().to_string();
    assert!(a_key.starts_with("whpk_"), "{}", got.text);
    assert_ne!(a_key, b_key);

    // B posts its delivery to A's receiver; A's check rejects it.
    forward(&from_b, &rx_a.url("/own"));
    let forwarded = rx_a
        .received()
        .into_iter()
        .find(|r| r.header("webhook-id") == from_b.header("webhook-id"))
        .unwrap();
    assert!(
        !receiver_accepts(&forwarded, &a_key, &[]),
        "tenant A accepted tenant B's delivery as its own: {forwarded:?}"
    );
    // It is a good delivery for B, with B's key.
    assert!(receiver_accepts(&from_b, &b_key, &[]));

    // A's own delivery verifies with A's key, and not with B's.
    api.keyed(&a.test_key)
        .emit(&Delta::new("acme-customer-42", 5, "own"));
    let own = eventually_own(&api, &rx_a, &from_b);
    assert!(receiver_accepts(&own, &a_key, &[]), "{own:?}");
    assert!(!receiver_accepts(&own, &b_key, &[]));
    // Replayed to A again, its own delivery is refused as seen.
    let seen = vec![own.header("webhook-id").unwrap().to_string()];
    assert!(!receiver_accepts(&own, &a_key, &seen));
}

/// A's own `delta.verified` delivery (not the one B forwarded).
fn eventually_own(api: &Api, rx: &Receiver, forwarded: &Received) -> Received {
    let mut polls = 0u32;
    bvs_tests::eventually(bvs_tests::ledger::WAIT, "A's own delivery", || {
        polls += 1;
        if polls.is_multiple_of(15) {
            bvs_tests::cron::sweep(api, now_ms());
        }
        rx.received().into_iter().find(|r| {
            r.json()["event"] == "delta.verified"
                && r.header("webhook-id") != forwarded.header("webhook-id")
        })
    })
}
