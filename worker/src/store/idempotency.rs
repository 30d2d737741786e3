//! Idempotency-Key records (ledger databases): the claims and the answers
//! of committed writes, both written in the write's own batch
//! (`store::emit`). Here: their expiry.

use worker::D1Database;

use super::{args, run};
use crate::error::ApiResult;

const DELETE_EXPIRED_RESULTS: &str = "DELETE FROM idempotency_results WHERE expires_at <= ?1";

pub async fn delete_expired_results(ledger: &D1Database, now_ms: u64) -> ApiResult<u64> {
    run(ledger, DELETE_EXPIRED_RESULTS, &args![now_ms]).await
}
