//! The balance and facts API behind an API key: one helper per endpoint on
//! [`Keyed`], a [`Delta`] body that keeps its amount as the exact JSON
//! number token, and the waits for the work the service does after it
//! answers (anchoring, checkpoints, facts).

use std::time::Duration;

use serde_json::Value;

use crate::client::{Keyed, Reply};
use crate::eventually;

/// How long anchoring, a checkpoint or a fact may take on a test server.
pub const WAIT: Duration = Duration::from_secs(60);

pub const DELTA: &str = "/api/v1/balance/delta";
pub const BATCH: &str = "/api/v1/balance/delta/batch";
pub const COMPARE: &str = "/api/v1/balance/compare";
pub const CHECKPOINT: &str = "/api/v1/balance/checkpoint";
pub const CUSTOMERS: &str = "/api/v1/balance/customers";
pub const FACTS: &str = "/api/v1/facts";
/// The DEV_MODE fault-injection reason (worker `sequencer::round::DEV_FAULT_REASON`):
/// a delta with it, or a fact whose content starts with it, can never be
/// appended and ends FAILED.
pub const POISON: &str = "dev:fail-sequencer";

/// A JSON number token exactly as a client writes it: `"0.1"` stays
/// `0.1`, and an `f64` is written the way `serde_json` writes it (`5.0`).
#[derive(Debug, Clone)]
pub struct Number(String);

impl From<&str> for Number {
    fn from(token: &str) -> Self {
        Number(token.to_string())
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Self {
        Number(n.to_string())
    }
}

impl From<f64> for Number {
    fn from(n: f64) -> Self {
        Number(Value::from(n).to_string())
    }
}

/// One delta as a client submits it.
#[derive(Debug, Clone)]
pub struct Delta {
    customer_id: String,
    delta: Number,
    reason: String,
    reference_id: Option<String>,
    metadata: Option<Value>,
}

impl Delta {
    pub fn new(customer_id: &str, delta: impl Into<Number>, reason: &str) -> Delta {
        Delta {
            customer_id: customer_id.to_string(),
            delta: delta.into(),
            reason: reason.to_string(),
            reference_id: None,
            metadata: None,
        }
    }

    pub fn reference_id(mut self, id: &str) -> Delta {
        self.reference_id = Some(id.to_string());
        self
    }

    pub fn metadata(mut self, metadata: Value) -> Delta {
        self.metadata = Some(metadata);
        self
    }

    /// The request body, with the amount token as given.
    pub fn to_json(&self) -> String {
        let text = |s: &str| Value::from(s).to_string();
        let mut body = format!(
            r#"{{"customerId":{},"delta":{},"reason":{}"#,
            text(&self.customer_id),
            self.delta.0,
            text(&self.reason)
        );
        if let Some(id) = &self.reference_id {
            body.push_str(&format!(r#","referenceId":{}"#, text(id)));
        }
        if let Some(m) = &self.metadata {
            body.push_str(&format!(r#","metadata":{m}"#));
        }
        body.push('}');
        body
    }
}

/// `path` with `?query` when there is one.
fn with_query(path: String, query: &str) -> String {
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

/// The `data` of a reply that must have `status`.
fn data(r: &Reply, status: u16) -> Value {
    assert_eq!(r.status, status, "{}", r.text);
    r.body["data"].clone()
}

impl Keyed<'_> {
    /// `POST /api/v1/balance/delta`; asserts 202 and returns `data`.
    pub fn emit(&self, delta: &Delta) -> Value {
        data(&self.post_raw(DELTA, delta.to_json()), 202)
    }

    /// Emits like [`Keyed::emit`] and waits until the delta is anchored;
    /// returns the emit's `data`.
    pub fn emit_anchored(&self, delta: &Delta) -> Value {
        let d = self.emit(delta);
        self.wait_anchored(d["anchorId"].as_str().unwrap_or_default());
        d
    }

    /// `POST /api/v1/balance/delta/batch` with `items` as `deltas`.
    pub fn batch(&self, items: &[Value]) -> Reply {
        self.post(BATCH, &serde_json::json!({ "deltas": items }))
    }

    /// Sends a batch like [`Keyed::batch`] (it must be accepted: 202) and
    /// waits until every delta of it is anchored; returns the batch's
    /// `data` (its `itemsRoot` and `results`).
    pub fn batch_anchored(&self, items: &[Value]) -> Value {
        let batch = self.batch(items);
        assert_eq!(batch.status, 202, "{}", batch.text);
        let data = batch.body["data"].clone();
        for r in data["results"].as_array().into_iter().flatten() {
            self.wait_anchored(r["anchorId"].as_str().unwrap_or_default());
        }
        data
    }

    /// `GET /api/v1/balance/delta/:anchorId`.
    pub fn delta_status(&self, anchor_id: &str) -> Reply {
        self.get(&format!("{DELTA}/{anchor_id}"))
    }

    /// Polls the delta's status until it is ANCHORED; returns that `data`.
    pub fn wait_anchored(&self, anchor_id: &str) -> Value {
        eventually(WAIT, "the delta to be anchored", || {
            let d = data(&self.delta_status(anchor_id), 200);
            (d["status"] == "ANCHORED").then_some(d)
        })
    }

    /// `GET /api/v1/balance/derive/:customerId?query`.
    pub fn derive(&self, customer_id: &str, query: &str) -> Reply {
        self.get(&with_query(
            format!("/api/v1/balance/derive/{customer_id}"),
            query,
        ))
    }

    /// `GET /api/v1/balance/customers/:customerId`.
    pub fn customer(&self, customer_id: &str) -> Reply {
        self.get(&format!("{CUSTOMERS}/{customer_id}"))
    }

    /// `GET /api/v1/balance/receipt/:customerId?query`.
    pub fn receipt(&self, customer_id: &str, query: &str) -> Reply {
        self.get(&with_query(
            format!("/api/v1/balance/receipt/{customer_id}"),
            query,
        ))
    }

    /// `POST /api/v1/balance/checkpoint`.
    pub fn checkpoint(&self, body: &Value) -> Reply {
        self.post(CHECKPOINT, body)
    }

    /// `GET /api/v1/balance/checkpoints?query`.
    pub fn checkpoints(&self, query: &str) -> Reply {
        self.get(&with_query("/api/v1/balance/checkpoints".into(), query))
    }

    /// Polls the checkpoint list until checkpoint `id` is COMMITTED;
    /// returns its entry.
    pub fn wait_committed(&self, id: &str) -> Value {
        eventually(WAIT, "the checkpoint to commit", || {
            data(&self.checkpoints("limit=100"), 200)["checkpoints"]
                .as_array()
                .unwrap_or_else(|| panic!("no checkpoint list"))
                .iter()
                .find(|c| c["checkpointId"] == id && c["status"] == "COMMITTED")
                .cloned()
        })
    }

    /// `POST /api/v1/facts`.
    pub fn submit_fact(&self, body: &Value) -> Reply {
        self.post(FACTS, body)
    }

    /// `GET /api/v1/facts/:contentHash`.
    pub fn fact(&self, content_hash: &str) -> Reply {
        self.get(&format!("{FACTS}/{content_hash}"))
    }

    /// `GET /api/v1/facts/:contentHash/verify`.
    pub fn fact_verification(&self, content_hash: &str) -> Reply {
        self.get(&format!("{FACTS}/{content_hash}/verify"))
    }

    /// Polls the fact's verification until it says verified.
    pub fn wait_fact_verified(&self, content_hash: &str) {
        eventually(WAIT, "the fact to verify", || {
            let r = self.fact_verification(content_hash);
            (r.body["data"]["verified"] == true).then_some(())
        });
    }
}
