//! Receipts handed out: what a receipt's itemsRoot covers, so public
//! verify can resolve it.

use serde::Deserialize;
use worker::D1Database;

use super::{all, int, opt_text, run, Arg};
use crate::error::ApiResult;

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

pub async fn record(db: &D1Database, r: &ReceiptRow) -> ApiResult<()> {
    let args = [
        Arg::Text(&r.items_root),
        Arg::Text(&r.tenant_id),
        Arg::Text(&r.customer_id),
        opt_text(r.period.as_deref()),
        int(r.from_seq)?,
        int(r.to_seq)?,
        int(r.delta_count)?,
        int(r.generated_at)?,
    ];
    run(db, INSERT, &args).await?;
    Ok(())
}

pub async fn by_root(db: &D1Database, root: &str) -> ApiResult<Vec<ReceiptRow>> {
    all(db, SELECT_BY_ROOT, &[Arg::Text(root)]).await
}
