//! Facts: content a tenant asks to have included in the log.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, first, int, opt_text, run, stmt, Arg, ItemStatus};
use crate::error::ApiResult;

macro_rules! select_facts {
    ($tail:literal) => {
        concat!(
            "SELECT tenant_id, content_hash, content, metadata, status, created_at, leaf_index, \
             tree_size, verified_at, data_purged, purged_at FROM facts ",
            $tail
        )
    };
}

const INSERT: &str =
    "INSERT OR IGNORE INTO facts (tenant_id, content_hash, content, metadata, status, created_at) \
     VALUES (?1, ?2, ?3, ?4, 'QUEUED', ?5)";
const SELECT_ONE: &str = select_facts!("WHERE tenant_id = ?1 AND content_hash = ?2");
const SELECT_QUEUED: &str = select_facts!("WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1");
const MARK_VERIFIED: &str =
    "UPDATE facts SET status = 'VERIFIED', leaf_index = ?3, tree_size = ?4, verified_at = ?5 \
     WHERE tenant_id = ?1 AND content_hash = ?2 AND status = 'QUEUED'";

#[expect(
    dead_code,
    reason = "rows mirror their table; not every reader uses every column"
)]
#[derive(Debug, Clone, Deserialize)]
pub struct FactRow {
    pub tenant_id: String,
    pub content_hash: String,
    pub content: String,
    pub metadata: Option<String>,
    pub status: ItemStatus,
    pub created_at: u64,
    pub leaf_index: Option<u64>,
    pub tree_size: Option<u64>,
    pub verified_at: Option<u64>,
    pub data_purged: u64,
    pub purged_at: Option<u64>,
}

/// Inserts the fact unless this tenant already has it; returns whether it was new.
pub async fn insert(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    content: &str,
    metadata: Option<&str>,
    now_ms: u64,
) -> ApiResult<bool> {
    let args = [
        Arg::Text(tenant_id),
        Arg::Text(content_hash),
        Arg::Text(content),
        opt_text(metadata),
        int(now_ms)?,
    ];
    Ok(run(db, INSERT, &args).await? > 0)
}

pub async fn fact(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
) -> ApiResult<Option<FactRow>> {
    let args = [Arg::Text(tenant_id), Arg::Text(content_hash)];
    first(db, SELECT_ONE, &args).await
}

pub async fn queued(db: &D1Database, limit: usize) -> ApiResult<Vec<FactRow>> {
    all(db, SELECT_QUEUED, &[int(limit as u64)?]).await
}

pub fn mark_verified(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    leaf_index: u64,
    tree_size: u64,
    verified_at: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = [
        Arg::Text(tenant_id),
        Arg::Text(content_hash),
        int(leaf_index)?,
        int(tree_size)?,
        int(verified_at)?,
    ];
    stmt(db, MARK_VERIFIED, &args)
}
