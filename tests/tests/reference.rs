//! Captures real request/response examples for the generated reference
//! (docs/reference.md): one journey against a fresh `wrangler dev`, each
//! exchange normalised (ids, hashes, tokens, times become stable
//! placeholders) and written to docs/reference-examples.json, which
//! `scripts/gen-reference.py` merges into the reference. `scripts/test.sh`
//! runs this, regenerates, and fails if either file changed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use bvs_tests::client::{Api, Reply};
use bvs_tests::ledger::WAIT;
use bvs_tests::tenant::{latest_token, TEST_PASSWORD};
use bvs_tests::{eventually, fresh_state_dir, repo_root, Wrangler};
use reqwest::Method;
use serde_json::{json, Map, Value};

/// Replaces run-dependent values with stable placeholders: the same value
/// gets the same placeholder everywhere in the file.
#[derive(Default)]
struct Normaliser {
    seen: BTreeMap<String, String>,
    counts: BTreeMap<String, usize>,
}

impl Normaliser {
    fn placeholder(
        &mut self,
        kind: &str,
        original: &str,
        make: impl Fn(usize) -> String,
    ) -> String {
        if let Some(p) = self.seen.get(original) {
            return p.clone();
        }
        let n = self.counts.entry(kind.to_string()).or_insert(0);
        *n += 1;
        let p = make(*n);
        self.seen.insert(original.to_string(), p.clone());
        p
    }

    fn value(&mut self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    let is_id = k == "id" || k.ends_with("Id");
                    let v = match x {
                        // A bare random id (an API key's id): by field name.
                        Value::String(s) if is_id && random_bare(s) => {
                            Value::String(self.placeholder("id", s, |n| format!("example{n}")))
                        }
                        _ => self.value(x),
                    };
                    out.insert(k.clone(), v);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    fn text(&mut self, s: &str) -> String {
        if s.starts_with("eyJ") && s.matches('.').count() == 2 {
            return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.EXAMPLE.EXAMPLE".into();
        }
        let s = dates(s);
        let s = self.base64_runs(&s);
        // Words: runs of [A-Za-z0-9_]; everything else is kept as is.
        let mut out = String::new();
        let mut word = String::new();
        for c in s.chars().chain(std::iter::once('\u{0}')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                let w = std::mem::take(&mut word);
                out.push_str(&self.word(&w));
            }
            if c != '\u{0}' {
                out.push(c);
            }
        }
        out
    }

    /// Runs of 40+ base64 characters that end in `=` or hold `+` or `/`
    /// (a signed note's root hash and signature lines).
    fn base64_runs(&mut self, s: &str) -> String {
        let is_b64 = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/';
        let mut out = String::new();
        let mut run = String::new();
        let flush = |run: &mut String, out: &mut String, me: &mut Self| {
            let r = std::mem::take(run);
            let body = r.trim_end_matches('=');
            let b64 = r.len() >= 40 && (r.ends_with('=') || body.contains(['+', '/']));
            if b64 {
                out.push_str(&me.placeholder("base64", &r, |n| format!("BASE64EXAMPLE{n}=")));
            } else {
                out.push_str(&r);
            }
        };
        for c in s.chars() {
            if is_b64(c) || (c == '=' && !run.is_empty()) {
                run.push(c);
            } else {
                flush(&mut run, &mut out, self);
                out.push(c);
            }
        }
        flush(&mut run, &mut out, self);
        out
    }

    fn word(&mut self, w: &str) -> String {
        let is_hex = |t: &str| {
            t.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if w.len() == 64 && is_hex(w) {
            return self.placeholder("hash", w, |n| {
                use sha2::Digest;
                hex::encode(sha2::Sha256::digest(format!("example {n}").as_bytes()))
            });
        }
        if w.len() == 32 && is_hex(w) {
            return self.placeholder("hex32", w, |n| format!("{n:032x}"));
        }
        // prefix_RANDOM ids (new_id: 20 base62 characters; whsec_: 32;
        // pk_test_ key parts): keep the prefix.
        if let Some((prefix, tail)) = w.rsplit_once('_') {
            let random = tail.len() >= 16 && tail.bytes().all(|b| b.is_ascii_alphanumeric());
            if random {
                let prefix = prefix.to_string();
                let len = tail.len();
                return self.placeholder("id", w, |n| {
                    let body = format!("example{n}");
                    format!(
                        "{prefix}_{body}{}",
                        "0".repeat(len.saturating_sub(body.len()))
                    )
                });
            }
        }
        // A bare random token (an API key's secret, a UUID part).
        let mixed = w.len() >= 20
            && w.bytes().any(|b| b.is_ascii_digit())
            && w.bytes().any(|b| b.is_ascii_alphabetic());
        if mixed {
            return self.placeholder("token", w, |n| format!("EXAMPLE{n}"));
        }
        w.to_string()
    }
}

/// 12 or more base62 characters with no separator: a random id.
fn random_bare(s: &str) -> bool {
    s.len() >= 12 && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// `YYYY-MM-DDTHH:MM:SS(.fff)Z` → `2026-01-01T00:00:00.000Z`, and a bare
/// month `YYYY-MM` → `2026-01`, so the file does not change with the clock.
fn dates(s: &str) -> String {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> bool {
        r.end <= b.len() && b[r].iter().all(u8::is_ascii_digit)
    };
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let month = digits(i..i + 4) && b.get(i + 4) == Some(&b'-') && digits(i + 5..i + 7);
        let before_ok = i == 0 || !b[i - 1].is_ascii_digit();
        if month && before_ok {
            let full = b.get(i + 7) == Some(&b'-')
                && digits(i + 8..i + 10)
                && b.get(i + 10) == Some(&b'T')
                && digits(i + 11..i + 13)
                && digits(i + 14..i + 16)
                && digits(i + 17..i + 19);
            if full {
                let mut j = i + 19;
                if b.get(j) == Some(&b'.') {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                if b.get(j) == Some(&b'Z') {
                    j += 1;
                }
                out.push_str("2026-01-01T00:00:00.000Z");
                i = j;
                continue;
            }
            let day = b.get(i + 7) == Some(&b'-') && digits(i + 8..i + 10);
            if day {
                out.push_str("2026-01-01");
                i += 10;
                continue;
            }
            if !b.get(i + 7).is_some_and(u8::is_ascii_digit) {
                out.push_str("2026-01");
                i += 7;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The base url examples show (scripts/dev.sh's address).
const EXAMPLE_BASE: &str = "http://127.0.0.1:8787";

struct Recorder {
    api: Api,
    api_base: String,
    examples: Vec<Value>,
}

impl Recorder {
    /// Sends a request and records it under its OpenAPI `(method, path)`.
    fn call(
        &mut self,
        method: Method,
        template: &str,
        path: &str,
        auth: Auth<'_>,
        body: Option<Value>,
    ) -> Reply {
        let mut rb = self.api.req(method.clone(), path);
        rb = match auth {
            Auth::None => rb,
            Auth::Jwt(t) => rb.bearer_auth(t),
            Auth::Key(k) => rb.header("x-api-key", k),
        };
        if let Some(b) = &body {
            rb = rb.json(b);
        }
        let r = self.api.send(rb);
        // The test server's port changes from run to run.
        let base = self.api_base.as_str();
        let response = if r.body.is_null() {
            Value::String(r.text.replace(base, EXAMPLE_BASE))
        } else {
            serde_json::from_str(&r.body.to_string().replace(base, EXAMPLE_BASE)).unwrap()
        };
        self.examples.push(json!({
            "method": method.as_str().to_ascii_lowercase(),
            "path": template,
            "url": path,
            "request": body,
            "status": r.status,
            "response": response,
        }));
        r
    }
}

#[derive(Clone, Copy)]
enum Auth<'a> {
    None,
    Jwt(&'a str),
    Key(&'a str),
}

#[test]
fn reference_examples_are_captured_from_a_real_run() {
    let server = Wrangler::start(&fresh_state_dir("reference"));
    let api = Api::new(server.base_url.clone());
    let mut rec = Recorder {
        api: Api::new(server.base_url.clone()),
        api_base: server.base_url.clone(),
        examples: Vec::new(),
    };
    let email = "ada@example.com";
    let r = rec.call(
        Method::POST,
        "/dashboard/auth/register",
        "/dashboard/auth/register",
        Auth::None,
        Some(json!({
            "email": email, "password": TEST_PASSWORD, "firstName": "Ada",
            "lastName": "Lovelace", "companyName": "Analytical Engines Ltd",
        })),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let token = latest_token(&api, email, "verify_email");
    let v = api.get(&format!("/dashboard/auth/verify?token={token}"));
    assert_eq!(v.status, 200, "{}", v.text);
    let r = rec.call(
        Method::POST,
        "/dashboard/auth/login",
        "/dashboard/auth/login",
        Auth::None,
        Some(json!({"email": email, "password": TEST_PASSWORD})),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let jwt = r.body["data"]["token"].as_str().unwrap().to_string();
    let jwt = jwt.as_str();
    let p = "/dashboard/auth/profile";
    assert_eq!(
        rec.call(Method::GET, p, p, Auth::Jwt(jwt), None).status,
        200
    );
    let p = "/dashboard/api-keys";
    let r = rec.call(
        Method::POST,
        p,
        p,
        Auth::Jwt(jwt),
        Some(json!({"environment": "test"})),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    let key = r.body["data"]["key"].as_str().unwrap().to_string();
    let key = key.as_str();
    assert_eq!(
        rec.call(Method::GET, p, p, Auth::Jwt(jwt), None).status,
        200
    );

    let p = "/api/v1/balance/delta";
    let r = rec.call(
        Method::POST,
        p,
        p,
        Auth::Key(key),
        Some(json!({"customerId": "cus_ada", "delta": 125.5, "reason": "Invoice 42 paid", "referenceId": "inv_42"})),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let anchor = r.body["data"]["anchorId"].as_str().unwrap().to_string();
    let receipt = r.body["data"]["receiptId"].as_str().unwrap().to_string();
    let bad = rec.call(
        Method::POST,
        p,
        p,
        Auth::Key(key),
        Some(json!({"customerId": "cus_ada", "delta": 0, "reason": "nothing"})),
    );
    assert_eq!(bad.status, 400, "{}", bad.text);
    let status_path = format!("/api/v1/balance/delta/{anchor}");
    eventually(WAIT, "the delta to be anchored", || {
        let s = api.keyed(key).get(&status_path);
        (s.body["data"]["status"] == "ANCHORED").then_some(())
    });
    let r = rec.call(
        Method::GET,
        "/api/v1/balance/delta/{anchorId}",
        &status_path,
        Auth::Key(key),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let p = "/api/v1/balance/delta/batch";
    let r = rec.call(
        Method::POST,
        p,
        p,
        Auth::Key(key),
        Some(json!({"deltas": [
            {"customerId": "cus_ada", "delta": -20, "reason": "Refund"},
            {"customerId": "cus_bob", "delta": 7.25, "reason": "Top-up"}
        ]})),
    );
    assert!((200..300).contains(&r.status), "{}", r.text);
    let r = rec.call(
        Method::GET,
        "/api/v1/verify/{proofRoot}",
        &format!("/api/v1/verify/{receipt}"),
        Auth::None,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let r = rec.call(
        Method::GET,
        "/api/v1/log/{env}/key",
        "/api/v1/log/sandbox/key",
        Auth::None,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    // The usage answer shows the deltas awaiting verification (issue 27):
    // captured once the batch is verified, so the example is the same
    // every run.
    eventually(WAIT, "the batch to be verified", || {
        let pending = |c: &str| {
            api.keyed(key)
                .get(&format!("/api/v1/balance/customers/{c}"))
                .body["data"]["pendingDeltas"]
                .as_u64()
        };
        (pending("cus_ada") == Some(0) && pending("cus_bob") == Some(0)).then_some(())
    });
    let p = "/dashboard/usage";
    assert_eq!(
        rec.call(Method::GET, p, p, Auth::Jwt(jwt), None).status,
        200
    );
    let p = "/dashboard/webhooks";
    let r = rec.call(
        Method::POST,
        p,
        p,
        Auth::Jwt(jwt),
        Some(json!({"url": "https://hooks.example.com/bvs", "events": ["delta.verified"], "description": "billing"})),
    );
    assert_eq!(r.status, 201, "{}", r.text);

    let mut n = Normaliser::default();
    let examples: Vec<Value> = rec.examples.iter().map(|e| n.value(e)).collect();
    let text = serde_json::to_string_pretty(&json!({
        "note": "Captured by tests/tests/reference.rs from a real run and normalised; rendered by scripts/gen-reference.py into docs/reference.md. Do not edit.",
        "examples": examples,
    }))
    .unwrap()
        + "\n";
    std::fs::write(repo_root().join("docs/reference-examples.json"), text).unwrap();
}
