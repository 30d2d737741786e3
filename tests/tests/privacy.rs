//! No public proof discloses an access key (issue 14). A proof root is the
//! only key of the public verify route, so no hash that a party can read
//! off any proof it can obtain (its receipts, the public answers for its
//! own roots, the log's inclusion and consistency routes, the tree heads)
//! may be another proof root: every such hash, other than the party's own
//! roots, must answer 404 at `GET /api/v1/verify/<hash>`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bvs_core::note::verify_tree_head;
use bvs_core::Hash32;
use bvs_tests::client::{Api, Reply};
use bvs_tests::tenant::{new_tenant_on_plan, Tenant};
use bvs_tests::{eventually, shared};
use reqwest::Method;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(90);

fn keyed(api: &Api, t: &Tenant, method: Method, path: &str, body: Option<&Value>) -> Reply {
    let mut rb = api.req(method, path).header("x-api-key", &t.test_key);
    if let Some(b) = body {
        rb = rb.json(b);
    }
    api.send(rb)
}

/// A public GET, waiting out the public routes' per-address rate limit
/// (429 is not this test's subject).
fn public_get(api: &Api, path: &str) -> Reply {
    for _ in 0..30 {
        let r = api.get(path);
        if r.status != 429 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(1_000));
    }
    panic!("{path}: still rate-limited after 30 s");
}

/// One tenant, its customer, and what it was given.
struct Party {
    name: &'static str,
    tenant: Tenant,
    customer: String,
    /// Every proof root issued to this party: its own access keys.
    own_roots: BTreeSet<String>,
    /// Its own items' hashes (deltas and its checkpoint's root), as the log
    /// holds them.
    items: Vec<String>,
    last_anchor: String,
    /// Every hash this party read off a proof, and where it read it.
    seen: BTreeMap<String, String>,
}

impl Party {
    fn new(api: &Api, name: &'static str) -> Party {
        // Enterprise: this test sends many keyed requests back to back.
        let tenant = new_tenant_on_plan(api, "enterprise");
        Party {
            name,
            tenant,
            customer: format!("cus_{name}"),
            own_roots: BTreeSet::new(),
            items: Vec::new(),
            last_anchor: String::new(),
            seen: BTreeMap::new(),
        }
    }

    fn emit(&mut self, api: &Api, delta: &str) {
        let body = format!(
            r#"{{"customerId":"{}","delta":{delta},"reason":"private {}"}}"#,
            self.customer, self.name
        );
        let r = api.send(
            api.req(Method::POST, "/api/v1/balance/delta")
                .header("x-api-key", &self.tenant.test_key)
                .header("content-type", "application/json")
                .body(body),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        let d = &r.body["data"];
        self.own_roots
            .insert(d["receiptId"].as_str().unwrap().to_string());
        self.own_roots
            .insert(d["itemsRoot"].as_str().unwrap().to_string());
        for h in d["itemHashes"].as_array().unwrap() {
            self.items.push(h.as_str().unwrap().to_string());
        }
        self.last_anchor = d["anchorId"].as_str().unwrap().to_string();
    }

    fn batch(&mut self, api: &Api, n: usize) {
        let deltas: Vec<Value> = (0..n)
            .map(|i| json!({"customerId": self.customer, "delta": i + 1, "reason": "batch"}))
            .collect();
        let r = keyed(
            api,
            &self.tenant,
            Method::POST,
            "/api/v1/balance/delta/batch",
            Some(&json!({ "deltas": deltas })),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        let d = &r.body["data"];
        self.own_roots
            .insert(d["itemsRoot"].as_str().unwrap().to_string());
        for res in d["results"].as_array().unwrap() {
            self.own_roots
                .insert(res["receiptId"].as_str().unwrap().to_string());
            self.items
                .push(res["itemHash"].as_str().unwrap().to_string());
            self.last_anchor = res["anchorId"].as_str().unwrap().to_string();
        }
    }

    fn wait_anchored(&self, api: &Api) {
        eventually(WAIT, "the last delta to be anchored", || {
            let r = keyed(
                api,
                &self.tenant,
                Method::GET,
                &format!("/api/v1/balance/delta/{}", self.last_anchor),
                None,
            );
            (r.body["data"]["status"] == "ANCHORED").then_some(())
        });
    }

    fn checkpoint(&mut self, api: &Api) -> String {
        let r = keyed(
            api,
            &self.tenant,
            Method::POST,
            "/api/v1/balance/checkpoint",
            Some(&json!({"customerId": self.customer})),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        let root = r.body["data"]["merkleRoot"].as_str().unwrap().to_string();
        self.own_roots.insert(root.clone());
        self.items.push(root.clone());
        r.body["data"]["checkpointId"].as_str().unwrap().to_string()
    }

    fn wait_committed(&self, api: &Api, id: &str) {
        eventually(WAIT, "the checkpoint to commit", || {
            let r = keyed(
                api,
                &self.tenant,
                Method::GET,
                "/api/v1/balance/checkpoints?limit=100",
                None,
            );
            r.body["data"]["checkpoints"]
                .as_array()?
                .iter()
                .any(|c| c["checkpointId"] == id && c["status"] == "COMMITTED")
                .then_some(())
        });
    }

    /// Records every hash in `doc` (every 64-hex string, and the root of
    /// every signed tree head in it) as read from `source`.
    fn read(&mut self, key: &str, source: &str, doc: &Value) {
        let mut found = Vec::new();
        hashes_in(key, doc, &mut found);
        for h in found {
            self.seen.entry(h).or_insert_with(|| source.to_string());
        }
    }
}

fn is_hash(s: &str) -> bool {
    s.len() == 64 && Hash32::parse(&s.to_ascii_lowercase()).is_ok()
}

/// Every hash a JSON document shows: 64-hex strings, and the roots of the
/// signed tree heads (C2SP notes) it carries.
fn hashes_in(key: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if is_hash(s) => out.push(s.to_ascii_lowercase()),
        Value::String(s) if s.contains("\n\n\u{2014} ") => {
            let head = verify_tree_head(s, key).expect("a signed tree head from the service");
            out.push(head.root.to_hex());
        }
        Value::Array(items) => items.iter().for_each(|i| hashes_in(key, i, out)),
        Value::Object(map) => map.values().for_each(|i| hashes_in(key, i, out)),
        _ => {}
    }
}

#[test]
fn no_hash_in_any_proof_a_party_can_obtain_opens_another_partys_proof() {
    let api = Api::new(shared());
    let mut a = Party::new(&api, "alice");
    let mut b = Party::new(&api, "bob");

    // Arrange: single deltas interleaved, so each party's leaves sit next
    // to the other's in the log; then 2^k batches, a checkpoint and a
    // receipt each.
    for i in 0..3 {
        a.emit(&api, &format!("{}.25", 100 + i));
        b.emit(&api, &format!("{}.5", 200 + i));
    }
    a.wait_anchored(&api);
    b.wait_anchored(&api);
    for n in [2, 4] {
        a.batch(&api, n);
        b.batch(&api, n);
    }
    a.wait_anchored(&api);
    b.wait_anchored(&api);
    let (ca, cb) = (a.checkpoint(&api), b.checkpoint(&api));
    a.wait_committed(&api, &ca);
    b.wait_committed(&api, &cb);
    // One more single each after the checkpoints, so the log grows past
    // the checkpoint leaves too.
    a.emit(&api, "1");
    b.emit(&api, "2");
    a.wait_anchored(&api);
    b.wait_anchored(&api);

    let key_answer = public_get(&api, "/api/v1/log/sandbox/key");
    assert_eq!(key_answer.status, 200, "{}", key_answer.text);
    let key = key_answer.body["data"]["verifierKey"]
        .as_str()
        .unwrap()
        .to_string();

    // Act: everything each party can obtain.
    let heads = {
        let mut heads = Vec::new();
        let mut from = 0u64;
        loop {
            let r = public_get(
                &api,
                &format!("/api/v1/log/sandbox/heads?from={from}&limit=100"),
            );
            assert_eq!(r.status, 200, "{}", r.text);
            let page = r.body["data"]["heads"].as_array().unwrap().clone();
            let Some(last) = page.last() else { break };
            from = last["treeSize"].as_u64().unwrap() + 1;
            heads.extend(page);
        }
        heads
    };
    let sizes: Vec<u64> = heads
        .iter()
        .map(|h| h["treeSize"].as_u64().unwrap())
        .collect();
    assert!(sizes.len() >= 3, "{sizes:?}");
    let latest = *sizes.last().unwrap();
    let mut consistency = Vec::new();
    for pair in sizes.windows(2) {
        consistency.push((pair[0], pair[1]));
    }
    for &m in &sizes {
        consistency.push((m, latest));
    }
    let mut log_docs = vec![("heads".to_string(), json!(heads))];
    let checkpoint_text = public_get(&api, "/api/v1/log/sandbox/checkpoint");
    log_docs.push(("checkpoint".into(), json!(checkpoint_text.text)));
    for (m, n) in consistency {
        let r = public_get(
            &api,
            &format!("/api/v1/log/sandbox/proof/consistency?from={m}&to={n}"),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        log_docs.push((format!("consistency {m}→{n}"), r.body["data"].clone()));
    }

    for p in [&mut a, &mut b] {
        for (source, doc) in &log_docs {
            p.read(&key, source, doc);
        }
        let r = keyed(
            &api,
            &p.tenant,
            Method::GET,
            &format!("/api/v1/balance/receipt/{}", p.customer),
            None,
        );
        assert_eq!(r.status, 200, "{}", r.text);
        p.own_roots
            .insert(r.body["data"]["itemsRoot"].as_str().unwrap().to_string());
        assert_eq!(r.body["data"]["proof"]["hashScheme"], "bvs-log-v1");
        p.read(&key, "its receipt", &r.body["data"]);
        for root in p.own_roots.clone() {
            let v = public_get(&api, &format!("/api/v1/verify/{root}"));
            assert_eq!(v.status, 200, "{}'s own root {root}: {}", p.name, v.text);
            assert_eq!(v.body["data"]["verification"]["hashScheme"], "bvs-log-v1");
            p.read(
                &key,
                &format!("the public answer for {root}"),
                &v.body["data"],
            );
        }
        for item in p.items.clone() {
            for size in [None, Some(latest)] {
                let q = size.map(|s| format!("&treeSize={s}")).unwrap_or_default();
                let r = public_get(
                    &api,
                    &format!("/api/v1/log/sandbox/proof/inclusion?itemHash={item}{q}"),
                );
                assert_eq!(r.status, 200, "inclusion of {item}: {}", r.text);
                assert_eq!(r.body["data"]["hashScheme"], "bvs-log-v1");
                p.read(
                    &key,
                    &format!("the inclusion proof of {item}"),
                    &r.body["data"],
                );
            }
        }
    }

    // Every document with a log proof names the log's hash scheme.
    assert_eq!(key_answer.body["data"]["hashScheme"], "bvs-log-v1");
    for (source, doc) in &log_docs {
        if source.starts_with("consistency") {
            assert_eq!(doc["hashScheme"], "bvs-log-v1", "{source}");
        }
    }

    // Assert: other than its own roots, nothing a party read opens a proof.
    let mut answers: BTreeMap<String, (u16, String)> = BTreeMap::new();
    let mut leaks = Vec::new();
    let mut asked = 0;
    for p in [&a, &b] {
        for (hash, source) in &p.seen {
            if p.own_roots.contains(hash) {
                continue;
            }
            let (status, text) = answers
                .entry(hash.clone())
                .or_insert_with(|| {
                    let r = public_get(&api, &format!("/api/v1/verify/{hash}"));
                    (r.status, r.text)
                })
                .clone();
            asked += 1;
            if status != 404 {
                leaks.push(format!(
                    "{} read {hash} off {source}; /api/v1/verify/{hash} answered {status}: {:.300}",
                    p.name, text
                ));
            }
        }
    }
    assert!(
        asked > 40,
        "the walk must cover the proofs' hashes, asked only {asked}"
    );
    assert!(
        leaks.is_empty(),
        "{} hash(es) read off a public proof open another proof:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}
