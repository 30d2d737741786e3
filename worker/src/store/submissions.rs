//! Submissions (one emit or emit-batch call) and the deltas they queue.

use serde::Deserialize;

use super::{queries, row};

const SELECT_BY_ROOT: &str =
    "SELECT id, tenant_id, kind, items_root, item_count, received_at FROM submissions \
     WHERE items_root = ?1 LIMIT 10";

row! {
    pub struct NewSubmission<'a> {
        id: &'a str, tenant_id: &'a str, contract_id: &'a str, kind: &'static str,
        items_root: &'a str, item_count: u64, received_at: u64,
    }
}

row! {
    pub struct NewDelta {
        anchor_id: String, customer_id: String, ledger_id: String, position: u64,
        item_hash: String, delta: String, reason: String, reference_id: Option<String>,
        metadata: Option<String>, declared_at: u64,
    }
}

impl NewDelta {
    /// The bytes of the row's text columns: what it adds to the tenant's
    /// storage meter.
    pub fn stored_bytes(&self) -> u64 {
        let texts = [
            self.anchor_id.len(),
            self.customer_id.len(),
            self.ledger_id.len(),
            self.item_hash.len(),
            self.delta.len(),
            self.reason.len(),
            self.reference_id.as_ref().map_or(0, String::len),
            self.metadata.as_ref().map_or(0, String::len),
        ];
        texts.iter().sum::<usize>() as u64
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionRow {
    pub id: String,
    pub tenant_id: String,
    pub kind: String,
    pub items_root: String,
    pub item_count: u64,
    pub received_at: u64,
}

super::statements! {
    /// Submissions (any tenant) whose items_root is `root`, for a caller's
    /// batch (`store::lookup`).
    pub fn by_root_statement(root: &str) = SELECT_BY_ROOT;
}

const SELECT_PROGRESS: &str =
    "SELECT s.id, s.tenant_id, s.kind, s.items_root, s.item_count, s.received_at, \
     SUM(CASE WHEN d.status = 'VERIFIED' THEN 1 ELSE 0 END) AS verified, \
     MAX(d.verified_at) AS verified_at \
     FROM submissions s JOIN deltas d ON d.submission_id = s.id \
     WHERE s.tenant_id = ?1 AND s.items_root = ?2 GROUP BY s.id";

/// A submission with how many of its deltas are verified.
#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionProgress {
    #[serde(flatten)]
    pub submission: SubmissionRow,
    pub verified: u64,
    pub verified_at: Option<u64>,
}

queries! {
    /// The tenant's submissions with this items root, with their progress.
    pub fn progress(tenant_id: &str, items_root: &str) -> Vec<SubmissionProgress>
        = all(SELECT_PROGRESS);
}
