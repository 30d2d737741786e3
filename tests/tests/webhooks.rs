//! Webhooks through `wrangler dev`: the dashboard routes, and deliveries
//! to a real HTTP receiver on loopback, checked with an independent HMAC.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Standard Webhooks (issue 29): its own file, in this binary's wrangler dev.
#[path = "webhooks/standard.rs"]
mod standard;
// Issue 40: a v1a delivery binds its receiver (per-endpoint keys).
#[path = "webhooks/receiver_key.rs"]
mod receiver_key;

use std::time::Duration;

use bvs_tests::client::{Api, Reply};
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::receiver::{Received, Receiver, HANG};
use bvs_tests::tenant::{
    create_webhook, delete_jwt, get_jwt, new_tenant, new_unverified, post_jwt, test_webhook,
    toggle_webhook, Tenant,
};
use bvs_tests::{api, eventually};
use reqwest::Method;
use serde_json::{json, Value};

fn create(api: &Api, t: &Tenant, url: &str, events: &[&str]) -> Reply {
    create_webhook(api, &t.jwt, url, events, "test hook")
}

/// Creates a webhook; returns (id, secret).
fn create_ok(api: &Api, t: &Tenant, url: &str, events: &[&str]) -> (String, String) {
    let r = create(api, t, url, events);
    assert_eq!(r.status, 201, "{}", r.text);
    (
        r.body["data"]["id"].as_str().unwrap().to_string(),
        r.body["data"]["secret"].as_str().unwrap().to_string(),
    )
}

/// A delta with the raw context a delivery carries.
fn delta(customer: &str, amount: i64) -> Delta {
    Delta::new(customer, amount, "webhook test")
        .reference_id("ref-1")
        .metadata(json!({"k": "v"}))
}

fn deliveries(api: &Api, t: &Tenant, id: &str) -> Vec<Value> {
    let r = get_jwt(api, &format!("/dashboard/webhooks/{id}/deliveries"), &t.jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

/// Polls the receiver, running the sweep now and then, until it has `n`
/// requests matching `keep`.
fn wait_requests(
    api: &Api,
    rx: &Receiver,
    n: usize,
    keep: impl Fn(&Received) -> bool,
) -> Vec<Received> {
    let mut polls = 0u32;
    eventually(WAIT, "webhook requests", || {
        polls += 1;
        if polls.is_multiple_of(15) {
            sweep(api, now_ms());
        }
        let got: Vec<Received> = rx.received().into_iter().filter(&keep).collect();
        (got.len() >= n).then_some(got)
    })
}

fn event_is(name: &'static str) -> impl Fn(&Received) -> bool {
    move |r: &Received| r.json()["event"] == name
}

#[test]
fn a_webhook_is_created_listed_read_toggled_and_deleted() {
    let api = api();
    let t = new_tenant(&api);
    let r = create(
        &api,
        &t,
        "https://hooks.example.com/bvs",
        &["delta.verified", "checkpoint.verified"],
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let d = &r.body["data"];
    let id = d["id"].as_str().unwrap();
    assert_eq!(d["url"], "https://hooks.example.com/bvs");
    assert_eq!(
        d["events"],
        json!(["delta.verified", "checkpoint.verified"])
    );
    assert_eq!(d["description"], "test hook");
    assert_eq!(d["active"], true);
    assert!(d["createdAt"].is_string());
    assert!(d["secret"].as_str().unwrap().starts_with("whsec_"));

    let list = get_jwt(&api, "/dashboard/webhooks", &t.jwt);
    assert_eq!(list.status, 200, "{}", list.text);
    let items = list.body["data"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id);
    assert!(items[0].get("secret").is_none(), "{}", list.text);
    assert!(!list.text.contains(d["secret"].as_str().unwrap()));

    let got = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert_eq!(got.status, 200, "{}", got.text);
    assert!(got.body["data"].get("secret").is_none());
    assert!(got.body["data"]["lastTriggeredAt"].is_null());
    assert_eq!(got.body["data"]["events"], d["events"]);

    let off = toggle_webhook(&api, &t.jwt, id);
    assert_eq!(off.status, 200, "{}", off.text);
    assert_eq!(off.body["data"]["id"], id);
    assert_eq!(off.body["data"]["active"], false);
    assert!(off.body["data"]["message"].is_string());
    let on = toggle_webhook(&api, &t.jwt, id);
    assert_eq!(on.body["data"]["active"], true);

    let del = delete_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert_eq!(del.status, 200, "{}", del.text);
    assert!(del.body["message"].is_string());
    let gone = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert_eq!(gone.status, 404, "{}", gone.text);
}

#[test]
fn unknown_events_unsafe_urls_and_unverified_accounts_are_refused() {
    let api = api();
    let t = new_tenant(&api);
    let r = create(&api, &t, "https://hooks.example.com/x", &["delta.exploded"]);
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.message().contains("events"));
    let r = create(&api, &t, "https://hooks.example.com/x", &[]);
    assert_eq!(r.status, 400, "{}", r.text);
    for url in [
        "http://hooks.example.com/x",
        "https://10.0.0.7/x",
        "https://192.168.1.1/x",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/x",
        "https://metadata.google.internal/x",
        "ftp://hooks.example.com/x",
        "not a url",
    ] {
        let r = create(&api, &t, url, &["delta.verified"]);
        assert_eq!(r.status, 400, "{url}: {}", r.text);
        assert!(r.message().contains("url"), "{}", r.text);
    }
    let r = post_jwt(
        &api,
        "/dashboard/webhooks",
        &t.jwt,
        &json!({"events": ["delta.verified"]}),
    );
    assert_eq!(r.status, 400, "{}", r.text);

    let (_, jwt) = new_unverified(&api);
    let r = post_jwt(
        &api,
        "/dashboard/webhooks",
        &jwt,
        &json!({"url": "https://hooks.example.com/x", "events": ["test"], "description": ""}),
    );
    assert_eq!(r.status, 403, "{}", r.text);
    let r = api.post(
        "/dashboard/webhooks",
        &json!({"url": "https://hooks.example.com/x", "events": ["test"]}),
    );
    assert_eq!(r.status, 401, "{}", r.text);
}

#[test]
fn another_tenants_webhook_is_not_found() {
    let api = api();
    let owner = new_tenant(&api);
    let other = new_tenant(&api);
    let (id, _) = create_ok(&api, &owner, "https://hooks.example.com/x", &["test"]);
    let paths = [
        (Method::GET, format!("/dashboard/webhooks/{id}")),
        (Method::POST, format!("/dashboard/webhooks/{id}/toggle")),
        (Method::POST, format!("/dashboard/webhooks/{id}/test")),
        (Method::GET, format!("/dashboard/webhooks/{id}/deliveries")),
        (Method::DELETE, format!("/dashboard/webhooks/{id}")),
    ];
    for (method, path) in paths {
        let r = api.send(api.req(method.clone(), &path).bearer_auth(&other.jwt));
        assert_eq!(r.status, 404, "{method} {path}: {}", r.text);
    }
    let list = get_jwt(&api, "/dashboard/webhooks", &other.jwt);
    assert_eq!(list.body["data"], json!([]));
    let mine = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &owner.jwt);
    assert_eq!(mine.status, 200, "still there: {}", mine.text);
}

#[test]
fn the_test_route_sends_a_signed_test_event_and_reports_the_answer() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[200, 400]);
    let (id, secret) = create_ok(&api, &t, &rx.url("/hook"), &["delta.verified"]);

    let r = test_webhook(&api, &t.jwt, &id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["success"], true, "{}", r.text);
    assert_eq!(r.body["data"]["httpStatus"], 200);
    assert!(r.body["data"]["message"].is_string());

    let got = rx.received();
    assert_eq!(got.len(), 1, "{got:?}");
    let req = &got[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/hook");
    assert!(req.signature_is_valid(&secret), "signature: {req:?}");
    assert!(!req.signature_is_valid("whsec_wrong"));
    let body = req.json();
    assert_eq!(body["event"], "test");
    assert!(body["timestamp"].is_string());
    assert!(body["data"]["message"].is_string());
    assert_eq!(req.header("x-service-delivery-id").unwrap(), body["id"]);
    let ts: u64 = req.header("x-service-timestamp").unwrap().parse().unwrap();
    assert!(ts.abs_diff(now_ms() / 1000) < 300, "timestamp {ts}");
    assert!(req
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));

    // The receiver answers 400 next: reported, not retried.
    let r = test_webhook(&api, &t.jwt, &id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["success"], false);
    assert_eq!(r.body["data"]["httpStatus"], 400);

    let detail = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert!(
        detail.body["data"]["lastTriggeredAt"].is_string(),
        "{}",
        detail.text
    );
}

/// The check docs/webhooks.md ("Verifying a delivery") tells receivers to
/// run, written here from the doc alone: HMAC-SHA256 of the raw body keyed
/// with the secret, lowercase hex after `sha256=`, compared in constant
/// time; then the body's signed `timestamp` within 5 minutes of our clock.
fn documented_check(secret: &str, body: &[u8], signature_header: &str) -> Result<Value, String> {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    let (a, b) = (expected.as_bytes(), signature_header.as_bytes());
    let same = a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0;
    if !same {
        return Err("bad signature".into());
    }
    let event: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let sent_ms = iso_to_ms(event["timestamp"].as_str().ok_or("no timestamp")?);
    if sent_ms.abs_diff(now_ms()) > 300_000 {
        return Err("stale delivery".into());
    }
    Ok(event)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` → unix ms (days from civil, H. Hinnant).
fn iso_to_ms(text: &str) -> u64 {
    let n = |r: std::ops::Range<usize>| -> i64 { text[r].parse().unwrap() };
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19);
    let ms = text.get(20..23).map_or(0, |t| t.parse::<i64>().unwrap());
    u64::try_from(secs * 1000 + ms).unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn test_with_type(api: &Api, t: &Tenant, id: &str, body: &Value) -> Reply {
    post_jwt(api, &format!("/dashboard/webhooks/{id}/test"), &t.jwt, body)
}

#[test]
fn the_test_route_sends_a_signed_sample_of_any_event() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    // Subscribed to checkpoints only: a sample is a rehearsal, sent
    // whatever the webhook subscribes to.
    let (id, secret) = create_ok(&api, &t, &rx.url("/samples"), &["checkpoint.verified"]);

    let r = test_with_type(&api, &t, &id, &json!({"type": "delta.verified"}));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["success"], true, "{}", r.text);
    let got = rx.received();
    assert_eq!(got.len(), 1, "{got:?}");
    let req = &got[0];
    let sig = req.header("x-service-signature").unwrap();
    let event = documented_check(&secret, &req.body, sig).expect("documented check passes");
    assert!(documented_check("whsec_wrong", &req.body, sig).is_err());
    assert_eq!(event["event"], "delta.verified");
    assert_eq!(req.header("x-service-event").unwrap(), "delta.verified");
    assert_eq!(req.header("x-service-delivery-id").unwrap(), event["id"]);
    assert_eq!(r.body["data"]["deliveryId"], event["id"]);
    assert_eq!(event["environment"], "sandbox");
    let data = &event["data"];
    // Clearly sample data, in the documented shape.
    assert_eq!(data["status"], "VERIFIED");
    assert!(data["anchorId"].as_str().unwrap().starts_with("sample_"));
    assert!(data["customerId"].as_str().unwrap().starts_with("sample_"));
    assert!(data["reason"].as_str().unwrap().contains("Sample"));
    assert_eq!(data["receiptId"], data["itemsRoot"]);
    assert_eq!(data["txHash"].as_str().unwrap().len(), 64);
    let documented = [
        "anchorId",
        "customerId",
        "delta",
        "reason",
        "referenceId",
        "metadata",
        "itemHash",
        "itemsRoot",
        "receiptId",
        "status",
        "declaredTimestamp",
        "receivedAt",
        "blockTimestamp",
        "leafIndex",
        "treeSize",
        "ledgerSeq",
        "balanceAfter",
        "txHash",
        "dataPurged",
        // Issue 28: always false here (checkpoint.witnessed follows).
        "witnessed",
        // Every ledger event names its log (docs/webhooks.md).
        "log",
    ];
    let mut documented: Vec<String> = documented.iter().map(|s| s.to_string()).collect();
    documented.sort();
    assert_eq!(keys(data), documented, "delta.verified sample: {data}");

    // The same envelope and data fields as a real delta.verified delivery.
    let real_rx = Receiver::start(&[]);
    let (real_id, real_secret) = create_ok(&api, &t, &real_rx.url("/real"), &["delta.verified"]);
    api.keyed(&t.test_key).emit(&delta("cus_wh_sample", 5));
    let real = wait_requests(&api, &real_rx, 1, event_is("delta.verified"));
    let real_event = real[0].json();
    assert!(real[0].signature_is_valid(&real_secret));
    assert_eq!(keys(&real_event), keys(&event));
    assert_eq!(
        keys(&real_event["data"]),
        keys(data),
        "sample and real data fields"
    );
    let _ = real_id;

    // Every other subscribable event has a sample too.
    for (name, fields) in [
        (
            "checkpoint.verified",
            &[
                "checkpointId",
                "merkleRoot",
                "period",
                "status",
                "treeSize",
                "txHash",
            ][..],
        ),
        (
            "verification.completed",
            &[
                "submissionId",
                "kind",
                "itemsRoot",
                "receiptId",
                "anchorIds",
                "verifyUrl",
            ][..],
        ),
        (
            "verification.failed",
            &["anchorId", "status", "failure"][..],
        ),
        ("test", &["message", "webhookId"][..]),
    ] {
        let r = test_with_type(&api, &t, &id, &json!({ "type": name }));
        assert_eq!(r.status, 200, "{name}: {}", r.text);
        assert_eq!(r.body["data"]["success"], true, "{name}: {}", r.text);
        let last = rx.received().pop().unwrap();
        let sig = last.header("x-service-signature").unwrap();
        let event = documented_check(&secret, &last.body, sig).expect(name);
        assert_eq!(event["event"], name);
        for f in fields {
            assert!(
                !event["data"][f].is_null(),
                "{name} sample lacks {f}: {event}"
            );
        }
    }
    assert_eq!(rx.received().len(), 5);

    // An unknown type is a 400 naming `type`; nothing is sent.
    let r = test_with_type(&api, &t, &id, &json!({"type": "delta.exploded"}));
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["field"], "type", "{}", r.text);
    assert_eq!(r.body["code"], "validation_failed", "{}", r.text);
    assert!(r.body["message"]
        .as_str()
        .unwrap()
        .contains("delta.exploded"));
    assert_eq!(rx.received().len(), 5);
}

#[test]
fn the_test_route_is_rate_limited_per_tenant() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    let (id, _) = create_ok(&api, &t, &rx.url("/many"), &["test"]);
    let statuses: Vec<u16> = (0..13)
        .map(|_| test_webhook(&api, &t.jwt, &id).status)
        .collect();
    assert!(statuses[..10].iter().all(|s| *s == 200), "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    let r = test_webhook(&api, &t.jwt, &id);
    if r.status == 429 {
        assert!(r.headers.get("retry-after").is_some());
    }
    assert!(rx.received().len() <= 12);
}

#[test]
fn the_test_route_reports_an_unreachable_receiver() {
    let api = api();
    let t = new_tenant(&api);
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (id, _) = create_ok(
        &api,
        &t,
        &format!("http://127.0.0.1:{port}/hook"),
        &["test"],
    );
    let r = test_webhook(&api, &t.jwt, &id);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["success"], false);
    assert_eq!(r.body["data"]["httpStatus"], 0);
}

#[test]
fn a_verified_delta_is_delivered_signed_with_its_final_receipt() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    let (id, secret) = create_ok(
        &api,
        &t,
        &rx.url("/events"),
        &["delta.verified", "verification.completed"],
    );
    let emitted = api.keyed(&t.test_key).emit(&delta("cus_wh_1", 42));
    let anchor = emitted["anchorId"].as_str().unwrap();

    let got = wait_requests(&api, &rx, 1, event_is("delta.verified"));
    assert_eq!(got.len(), 1, "one delivery per event: {got:?}");
    let req = &got[0];
    assert!(req.signature_is_valid(&secret));
    let body = req.json();
    assert_eq!(body["environment"], "sandbox");
    let data = &body["data"];
    assert_eq!(data["anchorId"], anchor);
    assert_eq!(data["customerId"], "cus_wh_1");
    assert_eq!(data["delta"], 42);
    assert_eq!(data["status"], "VERIFIED");
    assert_eq!(data["receiptId"], emitted["receiptId"]);
    assert_eq!(data["itemsRoot"], emitted["itemsRoot"]);
    assert_eq!(data["itemHash"], emitted["itemHash"]);
    assert_eq!(data["reason"], "webhook test");
    assert!(data["blockTimestamp"].is_string());
    assert_eq!(data["txHash"].as_str().unwrap().len(), 64);

    let done = wait_requests(&api, &rx, 1, event_is("verification.completed"));
    assert!(done[0].signature_is_valid(&secret));
    let data = &done[0].json()["data"];
    assert_eq!(data["itemsRoot"], emitted["itemsRoot"]);
    assert_eq!(data["anchorIds"], json!([anchor]));
    assert_eq!(data["deltaCount"], 1);

    let ds = deliveries(&api, &t, &id);
    assert!(ds.iter().all(|d| d["status"] == "succeeded"), "{ds:?}");
    let attempt = &ds[0]["attempts"][0];
    assert_eq!(attempt["httpStatus"], 200);
    assert_eq!(attempt["outcome"], "succeeded");
    assert!(attempt["durationMs"].is_u64());
    let detail = get_jwt(&api, &format!("/dashboard/webhooks/{id}"), &t.jwt);
    assert!(detail.body["data"]["lastTriggeredAt"].is_string());

    // A later sweep sends nothing again.
    sweep(&api, now_ms() + 120_000);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(rx.received().len(), 2, "{:?}", rx.received());
}

/// Submissions verified together (a batch and single emits sent within
/// one queue batch) each get one `verification.completed` with their own
/// anchor ids in order: the dispatcher reads every submission's progress
/// and anchors in one batch (issue 16), and must not mix them up.
#[test]
fn submissions_verified_together_each_complete_with_their_own_anchor_ids() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    create_ok(&api, &t, &rx.url("/done"), &["verification.completed"]);
    let k = api.keyed(&t.test_key);
    let items: Vec<Value> = [("cus_wh_b1", 1), ("cus_wh_b2", 2), ("cus_wh_b1", 3)]
        .iter()
        .map(|(c, n)| json!({"customerId": c, "delta": n, "reason": "together"}))
        .collect();
    let batch = k.batch(&items);
    assert_eq!(batch.status, 202, "{}", batch.text);
    let mut expected: Vec<(String, Vec<String>)> = vec![(
        batch.body["data"]["itemsRoot"]
            .as_str()
            .unwrap()
            .to_string(),
        batch.body["data"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["anchorId"].as_str().unwrap().to_string())
            .collect(),
    )];
    for i in 0..3 {
        let d = k.emit(&delta(&format!("cus_wh_s{i}"), 10 + i));
        expected.push((
            d["itemsRoot"].as_str().unwrap().to_string(),
            vec![d["anchorId"].as_str().unwrap().to_string()],
        ));
    }
    let got = wait_requests(
        &api,
        &rx,
        expected.len(),
        event_is("verification.completed"),
    );
    assert_eq!(
        got.len(),
        expected.len(),
        "one event per submission: {got:?}"
    );
    for (root, anchors) in &expected {
        let data: Vec<Value> = got
            .iter()
            .map(|r| r.json()["data"].clone())
            .filter(|d| d["itemsRoot"] == root.as_str())
            .collect();
        assert_eq!(data.len(), 1, "{root}: {data:?}");
        assert_eq!(data[0]["anchorIds"], json!(anchors), "{root}");
        assert_eq!(data[0]["deltaCount"], anchors.len(), "{root}");
    }
}

#[test]
fn a_500_is_retried_until_delivered_and_never_sent_again() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[500]);
    let (id, secret) = create_ok(&api, &t, &rx.url("/flaky"), &["delta.verified"]);
    api.keyed(&t.test_key).emit(&delta("cus_wh_retry", 5));

    let got = wait_requests(&api, &rx, 2, |_| true);
    assert_eq!(got[0].answered, 500);
    assert_eq!(got[1].answered, 200);
    // A retry resends the same event under the same delivery id; only the
    // attempt's timestamp (signed with it) is new.
    let (first, second) = (got[0].json(), got[1].json());
    assert_eq!(first["data"], second["data"]);
    assert_eq!(first["id"], second["id"]);
    assert_eq!(first["eventId"], second["eventId"]);
    assert!(got[1].signature_is_valid(&secret));
    assert_eq!(
        got[0].header("x-service-delivery-id"),
        got[1].header("x-service-delivery-id")
    );

    let ds = eventually(WAIT, "the delivery to be recorded", || {
        let ds = deliveries(&api, &t, &id);
        (ds.len() == 1 && ds[0]["status"] == "succeeded").then_some(ds)
    });
    let attempts = ds[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{ds:?}");
    assert_eq!(attempts[0]["httpStatus"], 500);
    assert_eq!(attempts[0]["outcome"], "retry");
    assert_eq!(attempts[1]["httpStatus"], 200);
    assert_eq!(attempts[1]["outcome"], "succeeded");

    // Sweeps long after: the delivered event is never sent again.
    sweep(&api, now_ms() + 3_600_000);
    sweep(&api, now_ms() + 4 * 86_400_000);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(rx.received().len(), 2);
}

#[test]
fn a_429_and_a_time_out_are_retried() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[429, HANG]);
    let (id, secret) = create_ok(&api, &t, &rx.url("/slow"), &["delta.verified"]);
    api.keyed(&t.test_key).emit(&delta("cus_wh_429", 5));
    let got = wait_requests(&api, &rx, 3, |_| true);
    assert_eq!(
        got.iter().map(|r| r.answered).collect::<Vec<_>>(),
        [429, HANG, 200]
    );
    assert!(got[2].signature_is_valid(&secret));
    let ds = eventually(WAIT, "the delivery to succeed", || {
        let ds = deliveries(&api, &t, &id);
        (ds.len() == 1 && ds[0]["status"] == "succeeded").then_some(ds)
    });
    let attempts = ds[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 3, "{ds:?}");
    assert_eq!(attempts[0]["httpStatus"], 429);
    assert_eq!(attempts[0]["outcome"], "retry");
    assert!(attempts[1]["httpStatus"].is_null(), "{ds:?}");
    assert_eq!(attempts[1]["outcome"], "retry");
    assert!(attempts[1]["error"].as_str().unwrap().contains("timed out"));
    assert!(attempts[1]["durationMs"].as_u64().unwrap() >= 9_000);
    assert_eq!(attempts[2]["outcome"], "succeeded");
}

#[test]
fn a_400_is_not_retried() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[400, 400, 400]);
    let (id, _) = create_ok(&api, &t, &rx.url("/strict"), &["delta.verified"]);
    api.keyed(&t.test_key).emit(&delta("cus_wh_400", 5));
    wait_requests(&api, &rx, 1, |_| true);
    let ds = eventually(WAIT, "the delivery to fail", || {
        let ds = deliveries(&api, &t, &id);
        (ds.len() == 1 && ds[0]["status"] == "failed").then_some(ds)
    });
    assert_eq!(ds[0]["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(ds[0]["attempts"][0]["httpStatus"], 400);
    assert_eq!(ds[0]["attempts"][0]["outcome"], "failed");
    sweep(&api, now_ms() + 3_600_000);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(rx.received().len(), 1, "no retry after a 400");
}

#[test]
fn only_active_webhooks_subscribed_to_the_event_receive_it() {
    let api = api();
    let t = new_tenant(&api);
    let on = Receiver::start(&[]);
    let off = Receiver::start(&[]);
    let other_event = Receiver::start(&[]);
    create_ok(&api, &t, &on.url("/on"), &["delta.verified"]);
    let (off_id, _) = create_ok(&api, &t, &off.url("/off"), &["delta.verified"]);
    create_ok(&api, &t, &other_event.url("/cp"), &["checkpoint.verified"]);
    let r = toggle_webhook(&api, &t.jwt, &off_id);
    assert_eq!(r.body["data"]["active"], false);

    // Another tenant's hook hears nothing of this tenant's events.
    let stranger = new_tenant(&api);
    let theirs = Receiver::start(&[]);
    create_ok(&api, &stranger, &theirs.url("/x"), &["delta.verified"]);

    api.keyed(&t.test_key).emit(&delta("cus_wh_filter", 7));
    wait_requests(&api, &on, 1, event_is("delta.verified"));
    sweep(&api, now_ms() + 120_000);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(on.received().len(), 1);
    assert!(off.received().is_empty(), "{:?}", off.received());
    assert!(other_event.received().is_empty());
    assert!(theirs.received().is_empty());
    assert!(deliveries(&api, &t, &off_id).is_empty());
}

#[test]
fn a_committed_checkpoint_sends_checkpoint_verified() {
    let api = api();
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    let (_, secret) = create_ok(&api, &t, &rx.url("/cp"), &["checkpoint.verified"]);
    let k = api.keyed(&t.test_key);
    k.emit_anchored(&delta("cus_wh_cp", 3));
    let r = k.checkpoint(&json!({"customerId": "cus_wh_cp"}));
    assert!(r.status == 200 || r.status == 202, "{}", r.text);
    let cp = r.body["data"]["checkpointId"].as_str().unwrap().to_string();
    let got = wait_requests(&api, &rx, 1, event_is("checkpoint.verified"));
    assert!(got[0].signature_is_valid(&secret));
    let data = &got[0].json()["data"];
    assert_eq!(data["checkpointId"], cp);
    assert_eq!(data["status"], "COMMITTED");
    assert_eq!(data["merkleRoot"], r.body["data"]["merkleRoot"]);
}
