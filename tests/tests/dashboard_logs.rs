//! Issue 30: the dashboard's request log, event log with resends, search
//! by id, customer search by prefix and chart data, over HTTP against a
//! real `wrangler dev`. The browser side is tests/browser/dashboard.mjs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::client::{api, Api, Reply};
use bvs_tests::cron;
use bvs_tests::eventually;
use bvs_tests::ledger::{Delta, WAIT};
use bvs_tests::receiver::{wait_event, Receiver};
use bvs_tests::tenant::{
    create_webhook, get_jwt, key_id, new_tenant, new_tenant_on_plan, post_jwt, Tenant,
};
use serde_json::{json, Value};

/// The request log is written shortly after each response (batched).
const LOGGED_WITHIN: Duration = Duration::from_secs(20);

fn logged(api: &Api, t: &Tenant, request_id: &str) -> Value {
    eventually(LOGGED_WITHIN, "the request in the log", || {
        let r = get_jwt(
            api,
            &format!("/dashboard/logs/requests/{request_id}"),
            &t.jwt,
        );
        (r.status == 200).then(|| r.body["data"].clone())
    })
}

fn request_id(r: &Reply) -> String {
    r.headers["request-id"].to_str().unwrap().to_string()
}

fn list(api: &Api, t: &Tenant, query: &str) -> Value {
    let r = get_jwt(api, &format!("/dashboard/logs/requests?{query}"), &t.jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

fn ids(page: &Value) -> Vec<String> {
    page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_failed_request_is_found_by_its_request_id_with_its_bodies() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    // A delta without its reason: 400, naming the field.
    let r = k.post(
        "/api/v1/balance/delta",
        &json!({"customerId": "cus_log", "delta": 5}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    let id = request_id(&r);
    assert_eq!(r.body["requestId"], id.as_str());
    let e = logged(&api, &t, &id);
    assert_eq!(e["requestId"], id.as_str());
    assert_eq!(e["method"], "POST");
    assert_eq!(e["path"], "/api/v1/balance/delta");
    assert_eq!(e["route"], "/api/v1/balance/delta");
    assert_eq!(e["status"], 400);
    assert_eq!(e["code"], r.body["code"]);
    assert_eq!(e["source"], "sandbox");
    assert_eq!(e["keyId"], key_id(&t.test_key).as_str());
    assert!(e["keyName"].is_string(), "{e}");
    assert!(e["durationMs"].is_u64(), "{e}");
    let sent: Value = serde_json::from_str(e["requestBody"].as_str().unwrap()).unwrap();
    assert_eq!(sent, json!({"customerId": "cus_log", "delta": 5}));
    let answered: Value = serde_json::from_str(e["responseBody"].as_str().unwrap()).unwrap();
    assert_eq!(answered["requestId"], id.as_str());
    assert_eq!(answered["message"], r.body["message"]);

    // The list finds it under its filters, and not under others.
    let errors = ids(&list(&api, &t, "status=4xx"));
    assert!(errors.contains(&id), "{errors:?}");
    assert!(!ids(&list(&api, &t, "status=2xx")).contains(&id));
    assert!(ids(&list(&api, &t, "status=400&path=/balance/delta")).contains(&id));
    assert!(!ids(&list(&api, &t, "path=/checkpoint")).contains(&id));
    let by_key = list(&api, &t, &format!("keyId={}", key_id(&t.test_key)));
    assert!(ids(&by_key).contains(&id));
    assert!(!ids(&list(&api, &t, "family=dashboard")).contains(&id));
    assert!(!ids(&list(&api, &t, "environment=production")).contains(&id));
}

#[test]
fn secrets_never_reach_the_log() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    // A dashboard request whose answer holds a new key's secret.
    let r = post_jwt(
        &api,
        "/dashboard/api-keys",
        &t.jwt,
        &json!({"environment": "test", "name": "logged"}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let key = r.body["data"]["key"].as_str().unwrap().to_string();
    let secret = key.split_once('.').unwrap().1.to_string();
    let e = logged(&api, &t, &request_id(&r));
    assert_eq!(e["source"], "dashboard");
    assert_eq!(e["keyId"], Value::Null);
    let body = e["responseBody"].as_str().unwrap();
    assert!(!body.contains(&secret), "{body}");
    assert!(body.contains("[redacted]"), "{body}");
    // A request that carries a key (and a webhook secret) in its body.
    let k = api.keyed(&t.test_key);
    let reason = format!("pasted {key} and whsec_abcdefABCDEF1234 by mistake");
    let r = k.post(
        "/api/v1/balance/delta",
        &json!({"customerId": "cus_secret", "delta": 1, "reason": reason, "metadata": {"password": "hunter2"}}),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let e = logged(&api, &t, &request_id(&r));
    let sent = e["requestBody"].as_str().unwrap();
    for leaked in [secret.as_str(), "whsec_abcdefABCDEF1234", "hunter2"] {
        assert!(!sent.contains(leaked), "{leaked} in {sent}");
    }
    // The answer echoes the reason only in the request: the status route's
    // answer holds it too, masked there as well.
    let anchor = r.body["data"]["anchorId"].as_str().unwrap();
    let s = k.get(&format!("/api/v1/balance/delta/{anchor}"));
    let e = logged(&api, &t, &request_id(&s));
    assert!(!e["responseBody"].as_str().unwrap().contains(&secret));
}

/// Issue 40: a member name written with JSON escapes is the name serde
/// hands the handler, and a form-encoded body is a body: the request log
/// masks both by the decoded name. Every escape a JSON parser accepts,
/// on the change-password route (a too-short new password: 400 before
/// any check, so nothing changes), then the reproduction itself: a real
/// change with `"new\u0050assword"`, read back after logging in again.
#[test]
fn escaped_and_form_encoded_secrets_never_reach_the_log() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let escape_all = |name: &str, upper: bool| -> String {
        name.chars()
            .map(|c| {
                if upper {
                    format!("\\u{:04X}", c as u32)
                } else {
                    format!("\\u{:04x}", c as u32)
                }
            })
            .collect()
    };
    let mut written = Vec::new();
    for name in ["currentPassword", "newPassword"] {
        written.push((
            name,
            vec![
                name.replacen('P', "\\u0050", 1),
                name.replacen('P', "\\u0070", 1),
                escape_all(name, false),
                escape_all(name, true),
                format!(
                    "{}\\u{:04x}",
                    &name[..name.len() - 1],
                    u32::from(name.as_bytes()[name.len() - 1])
                ),
            ],
        ));
    }
    let (current_names, new_names) = (&written[0].1, &written[1].1);
    let send = |jwt: &str, body: String, content_type: &str| {
        api.send(
            bvs_tests::tenant::with_jwt(
                &api,
                reqwest::Method::POST,
                "/dashboard/auth/change-password",
                jwt,
            )
            .header("content-type", content_type)
            .body(body),
        )
    };
    for (i, (c, n)) in current_names.iter().zip(new_names).enumerate() {
        let secret = format!("Escaped-Secret-{i}-current");
        let body = format!(r#"{{"{c}":"{secret}","{n}":"short{i}"}}"#);
        let r = send(&t.jwt, body.clone(), "application/json");
        // serde read the escaped names: the short new password is named.
        assert_eq!(r.status, 400, "{body}: {}", r.text);
        assert!(r.text.contains("newPassword"), "{body}: {}", r.text);
        let e = logged(&api, &t, &request_id(&r));
        let kept = e["requestBody"].as_str().unwrap();
        assert!(!kept.contains(&secret), "{body} kept as {kept}");
        assert!(
            !kept.contains(&format!("short{i}")),
            "{body} kept as {kept}"
        );
    }
    // A form-encoded body, its names percent-encoded or not.
    for (i, form) in [
        "currentPassword={s}&newPassword=Form-New-{i}-x",
        "current%50assword={s}&new%50assword=Form-New-{i}-x",
        "current_password={s}&new-password=Form-New-{i}-x",
    ]
    .iter()
    .enumerate()
    {
        let secret = format!("Form-Secret-{i}-current");
        let body = form.replace("{s}", &secret).replace("{i}", &i.to_string());
        let r = send(&t.jwt, body.clone(), "application/x-www-form-urlencoded");
        assert!(r.status >= 400 && r.status < 500, "{body}: {}", r.text);
        let e = logged(&api, &t, &request_id(&r));
        let kept = e["requestBody"].as_str().unwrap();
        assert!(!kept.contains(&secret), "{body} kept as {kept}");
        assert!(
            !kept.contains(&format!("Form-New-{i}")),
            "{body} kept as {kept}"
        );
    }
    // The reproduction: a real change, both names escaped.
    let new_password = "Escaped-New-Pass-9";
    let body = format!(
        r#"{{"current\u0050assword":"{}","new\u0050assword":"{new_password}"}}"#,
        t.password
    );
    let r = send(&t.jwt, body, "application/json");
    assert_eq!(r.status, 200, "{}", r.text);
    let id = request_id(&r);
    let jwt = bvs_tests::tenant::login(&api, &t.email, new_password);
    let e = eventually(LOGGED_WITHIN, "the change in the log", || {
        let r = get_jwt(&api, &format!("/dashboard/logs/requests/{id}"), &jwt);
        (r.status == 200).then(|| r.body["data"].clone())
    });
    let kept = e["requestBody"].as_str().unwrap();
    assert!(!kept.contains(&t.password), "{kept}");
    assert!(!kept.contains(new_password), "{kept}");
    assert!(kept.contains("[redacted]"), "{kept}");
}

#[test]
fn another_tenants_request_is_not_found_and_reading_the_log_is_not_logged() {
    let api = api();
    let a = new_tenant_on_plan(&api, "enterprise");
    let b = new_tenant(&api);
    let r = api.keyed(&a.test_key).get("/api/v1/balance/customers");
    assert_eq!(r.status, 200, "{}", r.text);
    let id = request_id(&r);
    logged(&api, &a, &id);
    let other = get_jwt(&api, &format!("/dashboard/logs/requests/{id}"), &b.jwt);
    assert_eq!(other.status, 404, "{}", other.text);
    assert!(!ids(&list(&api, &b, "")).contains(&id));
    // The log's own reads are not in it.
    let page = list(&api, &a, "family=dashboard&limit=100");
    let routes: Vec<&str> = page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert!(
        !routes.iter().any(|r| r.starts_with("/dashboard/logs/")),
        "{routes:?}"
    );
    // A successful dashboard read is logged without its answer (the page
    // showed it); a change keeps its answer.
    let read = page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "GET" && r["status"] == 200)
        .unwrap_or_else(|| panic!("no dashboard read in {page}"));
    let e = logged(&api, &a, read["requestId"].as_str().unwrap());
    assert_eq!(e["responseBody"], Value::Null, "{e}");
    // Bad filters are 400s naming the parameter.
    for (query, field) in [
        ("status=6xx", "status"),
        ("limit=0", "limit"),
        ("since=yesterday", "since"),
        ("environment=prod", "environment"),
        ("before=nope", "before"),
    ] {
        let r = get_jwt(&api, &format!("/dashboard/logs/requests?{query}"), &a.jwt);
        assert_eq!(r.status, 400, "{query}: {}", r.text);
        assert!(r.text.contains(field), "{query}: {}", r.text);
    }
}

#[test]
fn the_request_log_pages_newest_first() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let mut sent = Vec::new();
    for i in 0..5 {
        let r = k.get(&format!("/api/v1/balance/customers?limit={}", i + 1));
        sent.push(request_id(&r));
    }
    logged(&api, &t, sent.last().unwrap());
    let mut seen = Vec::new();
    let mut query = "family=api&limit=2".to_string();
    loop {
        let page = list(&api, &t, &query);
        seen.extend(ids(&page));
        match page["nextCursor"].as_str() {
            Some(c) => query = format!("family=api&limit=2&before={c}"),
            None => break,
        }
    }
    sent.reverse();
    let ours: Vec<String> = seen.into_iter().filter(|s| sent.contains(s)).collect();
    assert_eq!(ours, sent, "newest first, each once");
}

#[test]
fn a_free_tenants_requests_expire_after_a_day() {
    let api = api();
    let t = new_tenant(&api);
    let r = api.keyed(&t.test_key).get("/api/v1/balance/customers");
    let id = request_id(&r);
    logged(&api, &t, &id);
    // The other tests of this binary read rows of Enterprise tenants
    // (kept 30 days): this sweep, a day on, leaves them.
    cron::sweep(&api, cron::now_ms() + 25 * 3_600_000);
    let r = get_jwt(&api, &format!("/dashboard/logs/requests/{id}"), &t.jwt);
    assert_eq!(r.status, 404, "{}", r.text);
}

/// Every request id of the tenant's log under `query`, all pages.
fn all_ids(api: &Api, t: &Tenant, query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut before = String::new();
    loop {
        let page = list(api, t, &format!("{query}&limit=100{before}"));
        out.extend(ids(&page));
        match page["nextCursor"].as_str() {
            Some(c) => before = format!("&before={c}"),
            None => return out,
        }
    }
}

/// A tenant whose day of log is full loses the rows that do not fit, and
/// another tenant's rows written in the same flush (one batch per shard)
/// are kept.
#[test]
fn a_full_day_stops_one_tenants_log_and_not_its_neighbours() {
    let api = api();
    let free = new_tenant(&api);
    let other = new_tenant_on_plan(&api, "enterprise");
    // Free: 1 MiB a day. Each of these rows keeps a 4 KiB request body, so
    // 300 of them are more than the day holds.
    let name = "n".repeat(16 * 1024);
    let fill = json!({"environment": "test", "name": name});
    let send = || {
        let r = post_jwt(&api, "/dashboard/api-keys", &free.jwt, &fill);
        assert_eq!(r.status, 400, "{}", r.text);
        request_id(&r)
    };
    // The first in a flush of its own: it fits.
    let first = send();
    logged(&api, &free, &first);
    let sent: Vec<String> = std::iter::once(first)
        .chain((1..300).map(|_| send()))
        .collect();
    // The neighbour's request, sent after them, is logged.
    let kept = api.keyed(&other.test_key).get("/api/v1/balance/customers");
    logged(&api, &other, &request_id(&kept));
    let logged_ids = all_ids(&api, &free, "path=/dashboard/api-keys");
    let n = sent.iter().filter(|id| logged_ids.contains(id)).count();
    assert!(n > 0 && n < sent.len(), "{n} of {} kept", sent.len());
}

fn events(api: &Api, t: &Tenant) -> Vec<Value> {
    let r = get_jwt(api, "/dashboard/events?limit=100", &t.jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["events"].as_array().unwrap().clone()
}

#[test]
fn an_event_shows_its_deliveries_and_a_resend_adds_an_attempt() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let rx = Receiver::start(&[]);
    let w = create_webhook(
        &api,
        &t.jwt,
        &rx.url("/hook"),
        &["delta.verified"],
        "events",
    );
    assert_eq!(w.status, 201, "{}", w.text);
    let k = api.keyed(&t.test_key);
    let d = k.emit(&Delta::new("cus_events", "7", "event log"));
    let anchor = d["anchorId"].as_str().unwrap().to_string();
    wait_event(&api, &rx, "delta.verified");
    let event = eventually(WAIT, "the delivered event in the log", || {
        events(&api, &t).into_iter().find(|e| {
            e["type"] == "delta.verified"
                && e["summary"]["anchorId"] == anchor.as_str()
                && e["deliveries"][0]["attempts"][0]["httpStatus"] == 200
        })
    });
    assert_eq!(event["environment"], "sandbox");
    assert_eq!(event["summary"]["customerId"], "cus_events");
    let delivery = event["deliveries"][0]["id"].as_str().unwrap().to_string();
    let event_id = event["id"].as_str().unwrap().to_string();

    let r = post_jwt(
        &api,
        &format!("/dashboard/deliveries/{delivery}/resend"),
        &t.jwt,
        &json!({}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["success"], true, "{}", r.text);
    assert_eq!(r.body["data"]["httpStatus"], 200);
    let detail = get_jwt(&api, &format!("/dashboard/events/{event_id}"), &t.jwt);
    assert_eq!(detail.status, 200, "{}", detail.text);
    let d = &detail.body["data"];
    assert_eq!(d["payload"]["anchorId"], anchor.as_str());
    let attempts = d["deliveries"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{}", detail.text);
    assert_eq!(attempts[1]["attempt"], 2);
    assert_eq!(attempts[1]["httpStatus"], 200);
    assert_eq!(d["deliveries"][0]["status"], "succeeded");
    // The receiver got the event twice.
    let got: Vec<_> = rx
        .received()
        .into_iter()
        .filter(|r| r.json().to_string().contains(&anchor))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");

    // Another tenant can neither see nor resend it.
    let other = new_tenant(&api);
    let r = post_jwt(
        &api,
        &format!("/dashboard/deliveries/{delivery}/resend"),
        &other.jwt,
        &json!({}),
    );
    assert_eq!(r.status, 404, "{}", r.text);
    let r = get_jwt(&api, &format!("/dashboard/events/{event_id}"), &other.jwt);
    assert_eq!(r.status, 404, "{}", r.text);
}

fn search(api: &Api, t: &Tenant, q: &str) -> Vec<Value> {
    let r = get_jwt(api, &format!("/dashboard/search?q={q}"), &t.jwt);
    assert_eq!(r.status, 200, "{q}: {}", r.text);
    r.body["data"]["results"].as_array().unwrap().clone()
}

fn kinds(hits: &[Value]) -> Vec<&str> {
    hits.iter().map(|h| h["kind"].as_str().unwrap()).collect()
}

#[test]
fn search_finds_any_object_by_its_id_and_only_the_tenants() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let d = k.emit_anchored(&Delta::new("cus_search", "3", "searched"));
    let anchor = d["anchorId"].as_str().unwrap().to_string();
    let root = d["receiptId"].as_str().unwrap().to_string();
    let hits = search(&api, &t, &anchor);
    assert_eq!(kinds(&hits), ["delta"], "{hits:?}");
    assert_eq!(hits[0]["customerId"], "cus_search");
    assert_eq!(hits[0]["environment"], "sandbox");
    assert_eq!(hits[0]["proofRoot"], root.as_str());
    let hits = search(&api, &t, &root);
    assert!(kinds(&hits).contains(&"submission"), "{hits:?}");
    // A checkpoint by its id and by its proof root.
    let c = k.checkpoint(&json!({"customerId": "cus_search"}));
    assert_eq!(c.status, 202, "{}", c.text);
    let cp = c.body["data"]["checkpointId"].as_str().unwrap().to_string();
    let merkle = c.body["data"]["merkleRoot"].as_str().unwrap().to_string();
    assert_eq!(kinds(&search(&api, &t, &cp)), ["checkpoint"]);
    assert!(kinds(&search(&api, &t, &merkle)).contains(&"checkpoint"));
    // A customer, and a request by its Request-Id.
    assert_eq!(kinds(&search(&api, &t, "cus_search")), ["customer"]);
    let id = request_id(&c);
    logged(&api, &t, &id);
    let hits = search(&api, &t, &id);
    assert_eq!(kinds(&hits), ["request"], "{hits:?}");
    assert_eq!(hits[0]["state"], "202");
    // Nothing of another tenant, and nothing for a made-up id.
    let other = new_tenant(&api);
    assert!(search(&api, &other, &anchor).is_empty());
    assert!(search(&api, &other, &root).is_empty());
    assert!(search(&api, &t, "anc_nothing_here").is_empty());
    let r = get_jwt(&api, "/dashboard/search?q=a%20b", &t.jwt);
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.text.contains("\"q"), "{}", r.text);
}

#[test]
fn the_customer_list_finds_customers_by_prefix() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let items: Vec<Value> = (0..30)
        .map(|i| json!({"customerId": format!("pfx_{}_{i:02}", if i % 3 == 0 { "b" } else { "a" }), "delta": 1, "reason": "p"}))
        .collect();
    let r = k.batch(&items);
    assert_eq!(r.status, 202, "{}", r.text);
    let r = k.get("/api/v1/balance/customers?prefix=pfx_b_&limit=100");
    assert_eq!(r.status, 200, "{}", r.text);
    let found: Vec<&str> = r.body["data"]["customers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["customerId"].as_str().unwrap())
        .collect();
    assert_eq!(found.len(), 10, "{found:?}");
    assert!(found.iter().all(|c| c.starts_with("pfx_b_")), "{found:?}");
    assert_eq!(r.body["data"]["pagination"]["total"], 10);
    let r = k.get("/api/v1/balance/customers?prefix=pfx_a_2");
    // 20..=29 but the multiples of 3 (21, 24, 27).
    assert_eq!(r.body["data"]["pagination"]["total"], 7, "{}", r.text);
    let r = k.get("/api/v1/balance/customers?prefix=no%20spaces");
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.text.contains("prefix"), "{}", r.text);
}

#[test]
fn a_balance_history_has_a_point_per_verified_delta_and_is_sampled_past_2000() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    for (amount, reason) in [("10", "a"), ("-2.5", "b"), ("0.25", "c")] {
        k.emit(&Delta::new("cus_hist", amount, reason));
    }
    let h = eventually(WAIT, "three verified deltas", || {
        let r = k.get("/api/v1/balance/customers/cus_hist/history");
        (r.status == 200 && r.body["data"]["totalDeltas"] == 3).then_some(r)
    });
    let data = h.raw_data();
    assert!(data.contains("\"balanceAfter\":7.75"), "{data}");
    let points = h.body["data"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(h.body["data"]["step"], 1);
    let seqs: Vec<u64> = points
        .iter()
        .map(|p| p["ledgerSeq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3]);

    // 2,100 verified deltas: every 2nd, with the first and the last.
    for _ in 0..21 {
        let items: Vec<Value> = (0..100)
            .map(|_| json!({"customerId": "cus_long", "delta": 1, "reason": "x"}))
            .collect();
        assert_eq!(k.batch(&items).status, 202);
    }
    let h = eventually(WAIT, "2,100 verified deltas", || {
        let r = k.get("/api/v1/balance/customers/cus_long/history");
        (r.status == 200 && r.body["data"]["totalDeltas"] == 2100).then_some(r)
    });
    let d = &h.body["data"];
    assert_eq!(d["step"], 2);
    let points = d["points"].as_array().unwrap();
    assert_eq!(points.len(), 1051, "1 and every even seq up to 2100");
    assert_eq!(points[0]["ledgerSeq"], 1);
    assert_eq!(points[points.len() - 1]["ledgerSeq"], 2100);
    assert_eq!(points[points.len() - 1]["balanceAfter"], 2100);
    let r = k.get("/api/v1/balance/customers/nobody/history");
    assert_eq!(r.status, 404, "{}", r.text);
}

#[test]
fn the_daily_figures_count_verified_deltas_and_their_lag() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    for i in 0..4 {
        k.emit(&Delta::new("cus_daily", "1", &format!("d{i}")));
    }
    let mut polls = 0u32;
    let today = eventually(WAIT, "four deltas counted today", || {
        polls += 1;
        if polls.is_multiple_of(10) {
            cron::sweep(&api, cron::now_ms());
        }
        let r = get_jwt(&api, "/dashboard/usage/daily?days=2", &t.jwt);
        assert_eq!(r.status, 200, "{}", r.text);
        let days = r.body["data"]["days"].as_array().unwrap().clone();
        let last = days.last().cloned().unwrap();
        (last["verified"] == 4).then_some((r.body["data"].clone(), last))
    });
    let (data, day) = today;
    assert_eq!(data["days"].as_array().unwrap().len(), 2);
    assert_eq!(data["quota"], 100_000_000);
    assert_eq!(data["used"], 4);
    let p50 = day["lagP50Ms"].as_u64().unwrap();
    let p99 = day["lagP99Ms"].as_u64().unwrap();
    assert!(p50 >= 1 && p50 <= p99 && p99 < 120_000, "{day}");
    let r = get_jwt(&api, "/dashboard/usage/daily?days=99", &t.jwt);
    assert_eq!(r.status, 400, "{}", r.text);
}
