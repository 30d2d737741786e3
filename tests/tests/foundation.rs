//! The foundation works end to end: HTTP through `wrangler dev` to D1 and
//! back, and through a queue to its consumer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::Api;
use bvs_tests::{api, eventually, fresh_state_dir, Wrangler};
use serde_json::json;

#[test]
fn health_answers_ok_in_the_dashboard_envelope() {
    let r = api().get("/health");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!({"statusCode": 200, "data": {"status": "ok"}}));
}

#[test]
fn an_unknown_route_is_404_in_the_error_envelope() {
    let r = api().get("/no/such/route");
    assert_eq!(r.status, 404);
    assert_eq!(r.body["statusCode"], 404);
    assert_eq!(r.body["error"], "Not Found");
    assert!(r.message().contains("/no/such/route"));
}

#[test]
fn a_wrong_method_on_a_known_route_is_405() {
    let r = api().send(api().req(reqwest::Method::DELETE, "/health"));
    assert_eq!(r.status, 405);
    assert_eq!(r.body["error"], "Method Not Allowed");
}

#[test]
fn malformed_json_is_400_in_the_error_envelope() {
    let r = api().post_raw("/dev/ping", "{\"note\": ");
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"], "Bad Request");
    assert!(r.message().contains("Malformed JSON"));
}

#[test]
fn an_oversized_body_is_413() {
    let big = format!("{{\"note\":\"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let r = api().post_raw("/dev/ping", big);
    assert_eq!(r.status, 413);
    assert_eq!(r.body["statusCode"], 413);
}

#[test]
fn a_missing_field_is_400_naming_the_field() {
    let r = api().post("/dev/ping", &json!({}));
    assert_eq!(r.status, 400);
    assert!(r.message().contains("note"));
}

#[test]
fn a_row_written_through_http_is_read_back_from_d1() {
    let api = api();
    let created = api.post(
        "/dev/ping",
        &json!({"note": "it's 'quoted'; DROP TABLE x;--"}),
    );
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.body["data"]["id"].as_str().unwrap().to_string();
    let read = api.get(&format!("/dev/ping/{id}"));
    assert_eq!(read.status, 200);
    assert_eq!(read.body["data"]["note"], "it's 'quoted'; DROP TABLE x;--");
}

#[test]
fn a_queue_message_reaches_its_consumer() {
    let api = api();
    let created = api.post("/dev/ping", &json!({"note": "through the queue"}));
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.body["data"]["id"].as_str().unwrap().to_string();
    let consumed_at = eventually(Duration::from_secs(30), "the consumer to run", || {
        let r = api.get(&format!("/dev/ping/{id}"));
        r.body["data"]["consumedAt"].as_u64()
    });
    assert!(consumed_at >= created.body["data"]["createdAt"].as_u64().unwrap());
}

/// Test servers run side by side (two lanes of binaries, several servers
/// in one binary). Each registers in a dev registry of its own, so none
/// sees another's Worker or queue consumers: by default every `wrangler
/// dev` on a machine shares one registry, where all of ours register the
/// same Worker name.
#[test]
fn servers_started_at_once_each_keep_their_own_dev_registry_and_queue() {
    let servers: Vec<Wrangler> = std::thread::scope(|s| {
        let starting: Vec<_> = (0..2)
            .map(|_| s.spawn(|| Wrangler::start(&fresh_state_dir("registry"))))
            .collect();
        starting.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let instances: Vec<String> = servers
        .iter()
        .map(|w| {
            let entry = w.registry_dir.join("balance-verification-local");
            let text = std::fs::read_to_string(&entry)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            v["instanceId"].as_str().unwrap().to_string()
        })
        .collect();
    assert_ne!(instances[0], instances[1]);
    for w in &servers {
        let api = Api::new(w.base_url.clone());
        let created = api.post("/dev/ping", &json!({"note": "own queue"}));
        assert_eq!(created.status, 201, "{}", created.text);
        let id = created.body["data"]["id"].as_str().unwrap().to_string();
        eventually(Duration::from_secs(30), "its own consumer to run", || {
            api.get(&format!("/dev/ping/{id}")).body["data"]["consumedAt"].as_u64()
        });
    }
    for w in servers {
        w.stop();
    }
}
