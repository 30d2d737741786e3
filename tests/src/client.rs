//! A small JSON HTTP client for the black-box tests: [`Api`] for public and
//! JWT routes, [`Keyed`] for the routes behind an API key.

use reqwest::blocking::{Body, Client, RequestBuilder};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;

#[derive(Clone)]
pub struct Api {
    pub base: String,
    http: Client,
}

/// A response: status, headers we care about, and the JSON body (Null when
/// the body is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub headers: reqwest::header::HeaderMap,
}

impl Reply {
    /// The fields a 400 names: its `field`, or each of its `errors`.
    pub fn problem_fields(&self) -> Vec<String> {
        let mut out: Vec<String> = self.body["errors"]
            .as_array()
            .map(|d| {
                d.iter()
                    .map(|p| p["field"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(f) = self.body["field"].as_str() {
            out.push(f.to_string());
        }
        out
    }

    /// The error envelope's `message` ("" when there is none).
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }

    /// The element of the `data` list whose `id` is `id`.
    pub fn item(&self, id: &str) -> Value {
        self.body["data"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {}", self.text))
    }

    /// The `data` member exactly as the server wrote it, for checks that
    /// must see the server's bytes (no f64 round trip through `Value`).
    pub fn raw_data(&self) -> &str {
        let start = self
            .text
            .find("\"data\":")
            .unwrap_or_else(|| panic!("no data member: {}", self.text))
            + "\"data\":".len();
        &self.text[start..self.text.len() - 1]
    }
}

/// A client for the test binary's shared `wrangler dev` (see [`crate::shared`]).
pub fn api() -> Api {
    Api::new(crate::shared())
}

impl Api {
    pub fn new(base: impl Into<String>) -> Self {
        Self {
            base: base.into(),
            http: Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("http client"),
        }
    }

    pub fn req(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{}", self.base, path))
    }

    pub fn send(&self, rb: RequestBuilder) -> Reply {
        let r = rb.send().expect("request sent");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            body,
            text,
            headers,
        }
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send(self.req(reqwest::Method::GET, path))
    }

    pub fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(self.req(reqwest::Method::POST, path).json(body))
    }

    /// `GET /api/v1/logs`: the `logs` array.
    pub fn log_list(&self) -> Vec<Value> {
        let r = self.get("/api/v1/logs");
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"]["logs"].as_array().unwrap().clone()
    }

    /// The log list's entry of the log named `name` (e.g. `sandbox`).
    pub fn log_entry(&self, name: &str) -> Value {
        self.log_list()
            .into_iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no log {name} in the log list"))
    }

    pub fn post_raw(&self, path: &str, body: impl Into<Body>) -> Reply {
        self.send(
            self.req(reqwest::Method::POST, path)
                .header("content-type", "application/json")
                .body(body),
        )
    }

    /// The same client sending `key` as `X-API-Key` with every request.
    pub fn keyed<'a>(&'a self, key: &'a str) -> Keyed<'a> {
        Keyed { api: self, key }
    }
}

/// Requests authenticated with one API key (`X-API-Key`).
#[derive(Clone, Copy)]
pub struct Keyed<'a> {
    pub api: &'a Api,
    pub key: &'a str,
}

impl Keyed<'_> {
    /// A request carrying the key, for callers that add more headers.
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.api.req(method, path).header("x-api-key", self.key)
    }

    pub fn send(&self, rb: RequestBuilder) -> Reply {
        self.api.send(rb)
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send(self.req(Method::GET, path))
    }

    pub fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(self.req(Method::POST, path).json(body))
    }

    /// POSTs `body` as it is (JSON number tokens stay exactly as written).
    pub fn post_raw(&self, path: &str, body: impl Into<Body>) -> Reply {
        self.send(
            self.req(Method::POST, path)
                .header("content-type", "application/json")
                .body(body),
        )
    }
}
