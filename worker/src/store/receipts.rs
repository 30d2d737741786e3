//! Receipts handed out: what a receipt's itemsRoot covers, so public
//! verify can resolve it.

use super::queries;
use serde::Deserialize;

const INSERT: &str =
    "INSERT OR IGNORE INTO receipts (items_root, tenant_id, customer_id, period, from_seq, to_seq, \
     delta_count, generated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
const SELECT_BY_ROOT: &str =
    "SELECT items_root, tenant_id, customer_id, period, from_seq, to_seq, delta_count, generated_at \
     FROM receipts WHERE items_root = ?1 LIMIT 10";

#[derive(Debug, Clone, Deserialize)]
pub struct ReceiptRow {
    pub items_root: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub period: Option<String>,
    pub from_seq: u64,
    pub to_seq: u64,
    pub delta_count: u64,
    pub generated_at: u64,
}

queries! {
    pub fn record(r: &ReceiptRow) -> () = exec(
        INSERT;
        &r.items_root, &r.tenant_id, &r.customer_id, r.period.as_deref(), r.from_seq, r.to_seq,
        r.delta_count, r.generated_at
    );
}

super::statements! {
    /// Receipts with items root `root`, for a caller's batch (`store::lookup`).
    pub fn by_root_statement(root: &str) = SELECT_BY_ROOT;
}
