//! Facts: content a tenant asks to have included in the log.

use bvs_core::hash::Hash32;
use serde::Deserialize;

use super::{args, over_json, queries, row, ItemStatus, Query, Statements};
use crate::error::ApiResult;
use crate::ids::TenantId;

row! {
    $ select_facts from "facts";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct FactRow {
        tenant_id: TenantId, content_hash: Hash32, content: String, metadata: Option<String>,
        status: ItemStatus, created_at: u64, leaf_index: Option<u64>, tree_size: Option<u64>,
        verified_at: Option<u64>, data_purged: u64, purged_at: Option<u64>,
        failure: Option<String>,
    }
}

const INSERT: &str =
    "INSERT OR IGNORE INTO facts (tenant_id, content_hash, content, metadata, status, created_at) \
     VALUES (?1, ?2, ?3, ?4, 'QUEUED', ?5)";
const SELECT_ONE: &str = select_facts!("WHERE tenant_id = ?1 AND content_hash = ?2");
const SELECT_QUEUED: &str = select_facts!("WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1");
/// A round's facts (`?1`: `[tenant_id, content_hash, leaf_index]` each)
/// VERIFIED into the head of size `?2` at `?3`.
/// `+status`: no index on the status drives the update (the queued rows
/// times the set); the set does, one primary-key lookup per row.
const MARK_VERIFIED_SET: &str = "UPDATE facts SET status = 'VERIFIED', \
     leaf_index = json_extract(j.value, '$[2]'), tree_size = ?2, verified_at = ?3 \
     FROM json_each(?1) AS j WHERE facts.tenant_id = json_extract(j.value, '$[0]') \
     AND facts.content_hash = json_extract(j.value, '$[1]') AND +facts.status = 'QUEUED'";
const MARK_FAILED: &str = "UPDATE facts SET status = 'FAILED', failure = ?3 \
     WHERE tenant_id = ?1 AND content_hash = ?2 AND status = 'QUEUED'";

/// The fact's insert (ignored when this tenant already has it), for a
/// metered batch: the raises after it count only a new fact.
pub fn insert_stmt<'a>(
    tenant_id: &'a TenantId,
    content_hash: &'a Hash32,
    content: &'a str,
    metadata: Option<&'a str>,
    now_ms: u64,
) -> ApiResult<Query<'a>> {
    let args = args![tenant_id, content_hash, content, metadata, now_ms];
    Ok(Query::new(INSERT, args))
}

queries! {
    pub fn fact(tenant_id: &TenantId, content_hash: &Hash32) -> Option<FactRow> = first(SELECT_ONE);
}

super::statements! {
    /// For a sequencer round's read batch: the queued facts in order.
    pub fn queued_statement<'a>(limit: u64) = SELECT_QUEUED;
}

/// Marks a round's facts (`(tenant, content hash, leaf index)` each)
/// VERIFIED: one statement per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn mark_verified_all<'a>(
    facts: &[(&str, &Hash32, u64)],
    tree_size: u64,
    verified_at: u64,
) -> Statements<'a> {
    over_json(MARK_VERIFIED_SET, facts, &args![tree_size, verified_at])
}

/// Marks a QUEUED fact FAILED (it can never be appended), keeping why; a
/// no-op for one no longer QUEUED.
pub fn mark_failed<'a>(
    tenant_id: &'a TenantId,
    content_hash: &'a Hash32,
    failure: &'a str,
) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        MARK_FAILED,
        args![tenant_id, content_hash, failure],
    ))
}
