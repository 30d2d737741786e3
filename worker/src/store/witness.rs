//! Witness cosignatures of a shard's log (issue 28, migration 0100): what
//! each witness last cosigned and how its last attempt went
//! (`witness_state`), the signed heads with the cosignature lines
//! collected for them (`witnessed_heads`), and the cosigning job's last
//! run (`log_meta` `witness_run`, its minimum interval). Written only by
//! `witness`.

use bvs_core::hash::Hash32;
use serde::Deserialize;
use worker::D1Database;

use super::{args, batch, queries, row, Query};
use crate::error::ApiResult;
use crate::ids::{AnchorId, TenantId};

row! {
    $ select_state from "witness_state";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct StateRow {
        vkey: String, name: String, size: Option<u64>, root: Option<Hash32>,
        line: Option<String>, cosigned_at: Option<u64>, status: WitnessState,
        error: Option<String>, error_at: Option<u64>, attempted_at: u64, retry_at: u64,
    }
}
row! {
    $ select_witnessed from "witnessed_heads";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct WitnessedRow {
        tree_size: u64, note: String, cosigners: u64, witnessed: u64, updated_at: u64,
    }
}

const SELECT_STATES: &str = select_state!("ORDER BY name");
/// Claims the job's run at `?1` when the last one is at least `?2` ms away
/// (either way: a clock set back, as a test's scheduled time, blocks
/// nothing): one change when claimed.
const CLAIM_RUN: &str = "INSERT INTO log_meta (key, value) VALUES ('witness_run', ?1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value \
     WHERE abs(?1 - CAST(log_meta.value AS INTEGER)) >= ?2";
/// A witness's cosignature (status `cosigned`), keeping its last error.
const UPSERT_COSIGNED: &str = "INSERT INTO witness_state \
     (vkey, name, size, root, line, cosigned_at, status, attempted_at, retry_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'cosigned', ?6, 0) \
     ON CONFLICT (vkey) DO UPDATE SET name = excluded.name, size = excluded.size, \
     root = excluded.root, line = excluded.line, cosigned_at = excluded.cosigned_at, \
     status = 'cosigned', attempted_at = excluded.attempted_at, retry_at = 0";
/// A failed attempt: its status and error, and no attempt before `?6`;
/// what the witness last cosigned stays.
const UPSERT_FAILED: &str = "INSERT INTO witness_state \
     (vkey, name, status, error, error_at, attempted_at, retry_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) \
     ON CONFLICT (vkey) DO UPDATE SET name = excluded.name, status = excluded.status, \
     error = excluded.error, error_at = excluded.error_at, \
     attempted_at = excluded.attempted_at, retry_at = excluded.retry_at";
const UPSERT_WITNESSED: &str = "INSERT INTO witnessed_heads \
     (tree_size, note, cosigners, witnessed, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
     ON CONFLICT (tree_size) DO UPDATE SET note = excluded.note, \
     cosigners = excluded.cosigners, witnessed = excluded.witnessed, \
     updated_at = excluded.updated_at";
/// Published heads older than a newly witnessed one at `?1`: nothing reads
/// them again (answers prove into the newest witnessed head or a later
/// one, and carry their note), so the table stays a few rows.
const DELETE_OLDER: &str = "DELETE FROM witnessed_heads WHERE tree_size < ?1";
const SELECT_WITNESSED_AT: &str = select_witnessed!("WHERE tree_size = ?1");
/// The newest head whose cosignatures meet the quorum, at `?1` or below.
const SELECT_NEWEST_WITNESSED: &str =
    select_witnessed!("WHERE witnessed = 1 AND tree_size <= ?1 ORDER BY tree_size DESC LIMIT 1");
/// The tenants with a leaf in `?1 <= leaf_index < ?2` (a newly witnessed
/// range), at most `?3`.
const SELECT_TENANTS_IN: &str = "SELECT DISTINCT tenant_id FROM log_leaves \
     WHERE leaf_index >= ?1 AND leaf_index < ?2 LIMIT ?3";

#[derive(Debug, Clone, Deserialize)]
pub struct TenantRow {
    pub tenant_id: TenantId,
}

queries! {
    pub fn states() -> Vec<StateRow> = all(SELECT_STATES);
    /// Whether this run is claimed (the last one was `min_interval_ms` ago or more).
    pub fn claim_run(now_ms: u64, min_interval_ms: u64) -> bool = changed(CLAIM_RUN);
    pub fn witnessed_at(size: u64) -> Option<WitnessedRow> = first(SELECT_WITNESSED_AT);
    pub fn newest_witnessed(at_most: u64) -> Option<WitnessedRow> = first(SELECT_NEWEST_WITNESSED);
    pub fn tenants_in(from: u64, to: u64, limit: u64) -> Vec<TenantRow> = all(SELECT_TENANTS_IN);
}

/// The published forms a proof may go into: the newest witnessed head and
/// the latest head's (if it has cosignatures), newest first.
const SELECT_PUBLISHED_CANDIDATES: &str = select_witnessed!(
    "WHERE witnessed = 1 OR tree_size = (SELECT MAX(tree_size) FROM tree_heads) \
     ORDER BY tree_size DESC LIMIT 2"
);

super::statements! {
    /// For a caller's read batch (receipts, public answers).
    pub fn published_candidates_statement<'a>() = SELECT_PUBLISHED_CANDIDATES;
}

/// Whether a witnessed head includes the tenant `?1`'s delta `?2` (one at
/// or after the head it was verified into).
const SELECT_COVERS_DELTA: &str = "SELECT EXISTS (SELECT 1 FROM witnessed_heads \
     WHERE witnessed = 1 AND tree_size >= \
     (SELECT tree_size FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?2)) AS witnessed";

#[derive(Debug, Clone, Deserialize)]
pub struct Covers {
    pub witnessed: u64,
}

super::statements! {
    /// For the delta status batch.
    pub fn covers_delta_statement<'a>(tenant_id: &'a TenantId, anchor_id: &'a AnchorId) = SELECT_COVERS_DELTA;
}

super::text_enum! {
    /// A witness's state (`witness_state.status`): it cosigned our latest
    /// head, or why its last attempt failed.
    pub enum WitnessState {
        Cosigned = "cosigned",
        Unavailable = "unavailable",
        Refused = "refused",
        Conflict = "conflict",
        Config = "config",
        Misbehaved = "misbehaved",
    }
}

/// One witness's outcome, for [`record`].
pub enum Outcome<'a> {
    Cosigned {
        size: u64,
        root: &'a Hash32,
        line: &'a str,
    },
    Failed {
        status: WitnessState,
        error: &'a str,
        retry_at: u64,
    },
}

/// The statement recording witness `vkey` (`name`)'s outcome at `now_ms`.
pub fn record<'a>(
    vkey: String,
    name: &'a str,
    outcome: &Outcome<'a>,
    now_ms: u64,
) -> ApiResult<Query<'a>> {
    match outcome {
        Outcome::Cosigned { size, root, line } => Ok(Query::new(
            UPSERT_COSIGNED,
            args![vkey, name, *size, *root, *line, now_ms],
        )),
        Outcome::Failed {
            status,
            error,
            retry_at,
        } => Ok(Query::new(
            UPSERT_FAILED,
            args![vkey, name, *status, *error, now_ms, *retry_at],
        )),
    }
}

super::statements! {
    /// Drops the published heads below the newly witnessed `size`.
    pub fn delete_older_statement<'a>(size: u64) = DELETE_OLDER;
}

/// The statement publishing the head of `size` with its cosignatures.
pub fn publish<'a>(
    size: u64,
    note: String,
    cosigners: u64,
    witnessed: bool,
    now_ms: u64,
) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        UPSERT_WITNESSED,
        args![size, note, cosigners, u64::from(witnessed), now_ms],
    ))
}

/// Writes `statements` in one atomic batch.
pub async fn write(db: &D1Database, statements: Vec<Query<'_>>) -> ApiResult<()> {
    if !statements.is_empty() {
        batch(db, statements).await?;
    }
    Ok(())
}
