//! Facts: content a tenant asks to have included in the log.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, args, first, stmt, ItemStatus};
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

#[expect(dead_code, reason = "a row mirrors its table")]
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

/// The fact's insert (ignored when this tenant already has it), for a
/// metered batch: the raises after it count only a new fact.
pub fn insert_stmt(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    content: &str,
    metadata: Option<&str>,
    now_ms: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = args![tenant_id, content_hash, content, metadata, now_ms];
    stmt(db, INSERT, &args)
}

pub async fn fact(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
) -> ApiResult<Option<FactRow>> {
    let args = args![tenant_id, content_hash];
    first(db, SELECT_ONE, &args).await
}

pub async fn queued(db: &D1Database, limit: usize) -> ApiResult<Vec<FactRow>> {
    all(db, SELECT_QUEUED, &args![limit as u64]).await
}

pub fn mark_verified(
    db: &D1Database,
    tenant_id: &str,
    content_hash: &str,
    leaf_index: u64,
    tree_size: u64,
    verified_at: u64,
) -> ApiResult<D1PreparedStatement> {
    let args = args![tenant_id, content_hash, leaf_index, tree_size, verified_at];
    stmt(db, MARK_VERIFIED, &args)
}
