//! Submissions (one emit or emit-batch call) and the deltas they queue.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;

use worker::D1Database;

use super::{args, batch, row, rows, Query};
use crate::error::ApiResult;
use crate::ids::{AnchorId, ContractId, SubmissionId, TenantId};

const SELECT_BY_ROOT: &str =
    "SELECT id, tenant_id, kind, items_root, item_count, received_at FROM submissions \
     WHERE items_root = ?1 LIMIT 10";

super::text_enum! {
    /// A submission's kind: one emit, or one emit-batch.
    pub enum SubmissionKind {
        Single = "single",
        Batch = "batch",
    }
}

row! {
    pub struct NewSubmission<'a> {
        id: &'a SubmissionId, tenant_id: &'a TenantId, contract_id: &'a ContractId, kind: SubmissionKind,
        items_root: &'a Hash32, item_count: u64, received_at: u64,
    }
}

row! {
    pub struct NewDelta {
        anchor_id: AnchorId, customer_id: CustomerId, ledger_id: Hash32, position: u64,
        item_hash: Hash32, delta: Amount,
        /// `delta`'s text as stored, formatted once (issue 42).
        delta_text: String,
        asset: Asset, reason: String, reference_id: Option<String>,
        metadata: Option<String>, declared_at: u64,
        /// The root over its ledger's deltas of the submission
        /// (`emit::for_tenant`).
        ledger_root: Hash32,
        /// Its conditions' hashed text (`Conditions::write_canonical`),
        /// `None` without any (issue 43).
        conditions: Option<String>,
    }
}

impl NewDelta {
    /// The bytes of the row's text columns: what it adds to the tenant's
    /// storage meter.
    pub fn stored_bytes(&self) -> u64 {
        let texts = [
            self.anchor_id.as_str().len(),
            self.customer_id.as_str().len(),
            64, // ledger_id, stored as 64 hex digits
            64, // item_hash, stored as 64 hex digits
            self.delta_text.len(),
            self.asset.key().len(),
            self.reason.len(),
            self.reference_id.as_ref().map_or(0, String::len),
            self.metadata.as_ref().map_or(0, String::len),
            self.conditions.as_ref().map_or(0, String::len),
        ];
        texts.iter().sum::<usize>() as u64
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionRow {
    pub id: SubmissionId,
    pub tenant_id: TenantId,
    pub kind: SubmissionKind,
    pub items_root: Hash32,
    pub item_count: u64,
    pub received_at: u64,
}

super::statements! {
    /// Submissions (any tenant) whose items_root is `root`, for a caller's
    /// batch (`store::proofs`).
    pub fn by_root_statement<'a>(root: &'a Hash32) = SELECT_BY_ROOT;
}

/// The submissions of the deltas whose anchor ids are the JSON set `?1`
/// (a payload's itemsRoot is its customer's root, not necessarily its
/// submission's, so a submission is found through its deltas).
macro_rules! of_anchors {
    () => {
        "(SELECT submission_id FROM deltas WHERE anchor_id IN (SELECT value FROM json_each(?1)))"
    };
}
/// The progress of those submissions.
const SELECT_PROGRESS_OF: &str = concat!(
    "SELECT s.id, s.tenant_id, s.kind, s.items_root, s.item_count, s.received_at, \
     SUM(CASE WHEN d.status = 'VERIFIED' THEN 1 ELSE 0 END) AS verified, \
     MAX(d.verified_at) AS verified_at \
     FROM submissions s JOIN deltas d ON d.submission_id = s.id WHERE s.id IN ",
    of_anchors!(),
    " GROUP BY s.id"
);
/// The anchor ids of the same submissions' deltas, in their order.
const SELECT_ANCHORS_OF: &str = concat!(
    "SELECT d.submission_id, d.anchor_id FROM deltas d WHERE d.submission_id IN ",
    of_anchors!(),
    " ORDER BY d.submission_id, d.position"
);

/// A submission with how many of its deltas are verified.
#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionProgress {
    #[serde(flatten)]
    pub submission: SubmissionRow,
    pub verified: u64,
    pub verified_at: Option<u64>,
}

/// One delta of a submission, by anchor id.
#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionAnchor {
    pub submission_id: SubmissionId,
    pub anchor_id: AnchorId,
}

/// The submissions of these deltas (anchor ids), with their progress and
/// their deltas' anchor ids (in position order), read in one batch round
/// trip of two statements whatever the number of deltas.
///
/// # Errors
/// D1 errors.
pub async fn progress_of(
    db: &D1Database,
    anchor_ids: &[AnchorId],
) -> ApiResult<(Vec<SubmissionProgress>, Vec<SubmissionAnchor>)> {
    if anchor_ids.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let set = serde_json::to_string(anchor_ids)?;
    let statements = vec![
        Query::new(SELECT_PROGRESS_OF, args![set.as_str()]),
        Query::new(SELECT_ANCHORS_OF, args![set.as_str()]),
    ];
    let results = batch(db, statements).await?;
    Ok((rows(&results, 0)?, rows(&results, 1)?))
}
