//! A small JSON HTTP client for the black-box tests.

use reqwest::blocking::{Client, RequestBuilder};
use serde_json::Value;
use std::time::Duration;

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

    pub fn post_raw(&self, path: &str, body: impl Into<reqwest::blocking::Body>) -> Reply {
        self.send(
            self.req(reqwest::Method::POST, path)
                .header("content-type", "application/json")
                .body(body),
        )
    }
}
