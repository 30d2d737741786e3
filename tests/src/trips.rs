//! Storage round trips per request (issue 16), read from the DEV_MODE
//! request log line of a request named by its `Request-Id`: `d1Calls`
//! (every D1 call), `d1Trips` (the sequential ones: calls made
//! concurrently count once) and `doCalls` (Durable Object calls). The
//! counters are the request's own (other requests, queue batches and
//! after-response writes count elsewhere), and each counter is the median
//! of the tries: a route's own work can vary between tries (a key's first
//! request in an isolate reads more than one under a live lease), and
//! a probe that emits waits for its deltas to anchor before the next try.
//!
//! [`prepare`] builds the sample both `bench/fastpath.sh` (which prints
//! it) and `tests/tests/trips.rs` (which pins it) use: one customer with
//! verified deltas, a committed checkpoint of it and a later delta, a
//! receipt that is a checkpoint, and a probe per hot route.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::client::{Keyed, Reply};
use crate::ledger::{Delta, BATCH, COMPARE, DELTA};
use crate::{eventually, nanos};

/// One request's counters, or the medians of several tries.
#[derive(Debug, Clone, Copy)]
pub struct Trips {
    pub d1_calls: u64,
    /// Sequential D1 round trips.
    pub d1_trips: u64,
    pub do_calls: u64,
    /// Latency, milliseconds (client side).
    pub ms: f64,
}

/// The counters of the request `request_id` in the server log, once its
/// line is there.
pub fn of_request(log_path: &Path, request_id: &str) -> Option<Trips> {
    let log = std::fs::read_to_string(log_path).ok()?;
    let line = log
        .lines()
        .filter_map(|l| {
            l.find('{')
                .and_then(|i| serde_json::from_str::<Value>(&l[i..]).ok())
        })
        .find(|v| v["requestId"] == request_id)?;
    let n = |name: &str| {
        line[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no {name} in the log line of {request_id}: {line}"))
    };
    Some(Trips {
        d1_calls: n("d1Calls"),
        d1_trips: n("d1Trips"),
        do_calls: n("doCalls"),
        ms: 0.0,
    })
}

/// A request body for try `n` (emits need a new customer each time).
pub type Body = Box<dyn Fn(u128) -> Value>;

/// One hot route as a client calls it.
pub struct Probe {
    /// What the bench prints and the test names.
    pub name: &'static str,
    pub method: Method,
    pub path: String,
    pub body: Option<Body>,
    /// Sent without the API key (the public verify route).
    pub public: bool,
    pub status: u16,
}

impl Probe {
    fn get(name: &'static str, path: String) -> Probe {
        Probe {
            name,
            method: Method::GET,
            path,
            body: None,
            public: false,
            status: 200,
        }
    }

    fn public(name: &'static str, path: String) -> Probe {
        Probe {
            public: true,
            ..Probe::get(name, path)
        }
    }

    fn post(name: &'static str, path: &str, status: u16, body: Body) -> Probe {
        Probe {
            name,
            method: Method::POST,
            path: path.to_string(),
            body: Some(body),
            public: false,
            status,
        }
    }

    /// Sends the probe once as request `request_id`.
    pub fn send(&self, k: &Keyed, request_id: &str, n: u128) -> Reply {
        let rb = if self.public {
            k.api.req(self.method.clone(), &self.path)
        } else {
            k.req(self.method.clone(), &self.path)
        };
        let rb = rb.header("request-id", request_id);
        let rb = match &self.body {
            Some(body) => rb.json(&body(n)),
            None => rb,
        };
        k.send(rb)
    }
}

/// The anchor ids an emit answered with (single or batch).
fn emitted(r: &Reply) -> Vec<String> {
    let data = &r.body["data"];
    let mut ids: Vec<String> = data["anchorId"]
        .as_str()
        .map(String::from)
        .into_iter()
        .collect();
    for item in data["results"].as_array().into_iter().flatten() {
        ids.extend(item["anchorId"].as_str().map(String::from));
    }
    ids
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Sends `probe` `tries` times, one at a time, and returns the median of
/// each counter and of the latency. Panics on an unexpected status.
pub fn measure(k: &Keyed, log_path: &Path, probe: &Probe, tries: usize) -> Trips {
    let mut seen = Vec::with_capacity(tries);
    for i in 0..tries {
        let n = nanos();
        let id = format!("trips-{i}-{n}");
        let t = Instant::now();
        let r = probe.send(k, &id, n);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(r.status, probe.status, "{}: {}", probe.name, r.text);
        let mut trips = eventually(Duration::from_secs(10), "the request log line", || {
            of_request(log_path, &id)
        });
        trips.ms = ms;
        seen.push(trips);
        // An emit rings the sequencer: let it finish before the next try.
        for anchor in emitted(&r) {
            k.wait_anchored(&anchor);
        }
    }
    let of = |f: fn(&Trips) -> u64| median(seen.iter().map(|t| f(t) as f64).collect()) as u64;
    Trips {
        d1_calls: of(|t| t.d1_calls),
        d1_trips: of(|t| t.d1_trips),
        do_calls: of(|t| t.do_calls),
        ms: median(seen.iter().map(|t| t.ms).collect()),
    }
}

/// The month the server is in now (`YYYY-MM`), as the receipt route reads
/// `?period=`.
fn this_month() -> String {
    let now = i64::try_from(crate::cron::now_ms()).unwrap();
    bvs_core::types::Period::containing(now).to_string()
}

/// Builds the sample for the tenant of `k`: customer `customer` gets three
/// verified deltas, a committed checkpoint of this month over them, and
/// one more verified delta (so its receipts are not the checkpoint);
/// customer `<customer>_cp` two deltas and a committed checkpoint (so its
/// receipt of the month has an agreement side). Returns one probe per hot
/// route over them.
pub fn prepare(k: &Keyed, customer: &str) -> Vec<Probe> {
    let first = k.emit_anchored(&Delta::new(customer, 5, "round trips"));
    k.emit_anchored(&Delta::new(customer, -2, "round trips"));
    let third = k.emit_anchored(&Delta::new(customer, 7, "round trips"));
    let month = this_month();
    let c = k.checkpoint(&json!({"customerId": customer, "period": month}));
    assert_eq!(c.status, 202, "{}", c.text);
    let checkpoint = &c.body["data"];
    k.wait_committed(checkpoint["checkpointId"].as_str().unwrap());
    let checkpoint_root = checkpoint["merkleRoot"].as_str().unwrap().to_string();
    k.emit_anchored(&Delta::new(customer, 1, "round trips"));
    let receipt = k.receipt(customer, &format!("period={month}"));
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let receipt_root = receipt.body["data"]["itemsRoot"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(receipt_root, checkpoint_root);
    // A second customer whose period receipt is its committed checkpoint:
    // that receipt carries an agreement side.
    let signed = format!("{customer}_cp");
    k.emit_anchored(&Delta::new(&signed, 4, "round trips"));
    k.emit_anchored(&Delta::new(&signed, 6, "round trips"));
    let c = k.checkpoint(&json!({"customerId": signed, "period": month}));
    assert_eq!(c.status, 202, "{}", c.text);
    k.wait_committed(c.body["data"]["checkpointId"].as_str().unwrap());
    let with_agreement = format!("/api/v1/balance/receipt/{signed}?period={month}");
    let r = k.get(&with_agreement);
    assert!(r.body["data"]["agreement"].is_object(), "{}", r.text);
    let items_root = third["receiptId"].as_str().unwrap();
    let anchor = first["anchorId"].as_str().unwrap();
    let derive = format!("/api/v1/balance/derive/{customer}");
    let receipt = format!("/api/v1/balance/receipt/{customer}");
    let owned = customer.to_string();
    vec![
        Probe::post(
            "emit",
            DELTA,
            202,
            Box::new(|n| json!({"customerId": format!("cus_tr{n}"), "delta": 1, "reason": "t"})),
        ),
        Probe::post(
            "batch emit (10)",
            BATCH,
            202,
            Box::new(|n| {
                let items: Vec<Value> = (0..10)
                    .map(|j| json!({"customerId": format!("cus_tb{n}_{j}"), "delta": 1, "reason": "t"}))
                    .collect();
                json!({ "deltas": items })
            }),
        ),
        Probe::get("derive from genesis", derive.clone()),
        Probe::get(
            "derive from an itemsRoot",
            format!("{derive}?startingCheckpoint={items_root}&startingBalance=10"),
        ),
        Probe::get(
            "derive from an anchorId",
            format!(
                "{derive}?startingCheckpoint={anchor}&startingCheckpointType=anchorId&startingBalance=5"
            ),
        ),
        Probe::get("receipt", receipt.clone()),
        Probe::get("receipt ?period=", format!("{receipt}?period={month}")),
        Probe::get("receipt with an agreement side", with_agreement),
        Probe::public(
            "public verify: submission",
            format!("/api/v1/verify/{items_root}"),
        ),
        Probe::public(
            "public verify: receipt",
            format!("/api/v1/verify/{receipt_root}"),
        ),
        Probe::public(
            "public verify: checkpoint",
            format!("/api/v1/verify/{checkpoint_root}"),
        ),
        Probe::post(
            "compare",
            COMPARE,
            200,
            Box::new(move |_| json!({"customerId": owned, "yourBalance": 11, "theirBalance": 11})),
        ),
        Probe::get("delta status", format!("{DELTA}/{anchor}")),
    ]
}
