//! What a proof root was issued for, read in one round trip (issue 16):
//! one batch on a ledger shard with the log's latest head, the submissions
//! with that items root and their deltas, the checkpoints with that merkle
//! root and the receipts with that items root. The public verify route
//! answers a submission from it with one more read (the stored hashes of
//! the inclusion proofs).

use serde::de::DeserializeOwned;
use worker::{D1Database, D1Result};

use super::batch;
use super::checkpoints::{self, CheckpointRow};
use super::deltas::{self, DeltaRow};
use super::log::{self, HeadRow};
use super::receipts::{self, ReceiptRow};
use super::submissions::{self, SubmissionRow};
use crate::error::{ApiError, ApiResult};

/// Everything the shard holds for one root.
pub struct RootLookup {
    pub head: Option<HeadRow>,
    pub submissions: Vec<SubmissionRow>,
    /// The deltas of every submission in `submissions`, by position.
    pub deltas: Vec<DeltaRow>,
    pub checkpoints: Vec<CheckpointRow>,
    pub receipts: Vec<ReceiptRow>,
}

/// The rows of the `i`th statement of a batch.
pub(super) fn rows<T: DeserializeOwned>(results: &[D1Result], i: usize) -> ApiResult<Vec<T>> {
    results
        .get(i)
        .ok_or_else(|| ApiError::internal("d1 batch returned too few results"))?
        .results::<T>()
        .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))
}

/// Looks `root` up on the shard `db`: one round trip.
///
/// # Errors
/// D1 errors.
pub async fn root(db: &D1Database, root: &str) -> ApiResult<RootLookup> {
    let results = batch(
        db,
        vec![
            log::latest_head_statement(db)?,
            submissions::by_root_statement(db, root)?,
            deltas::of_submissions_by_root_statement(db, root)?,
            checkpoints::by_root_statement(db, root)?,
            receipts::by_root_statement(db, root)?,
        ],
    )
    .await?;
    Ok(RootLookup {
        head: rows(&results, 0)?.into_iter().next(),
        submissions: rows(&results, 1)?,
        deltas: rows(&results, 2)?,
        checkpoints: rows(&results, 3)?,
        receipts: rows(&results, 4)?,
    })
}

/// What a proof root was issued for.
pub enum Found {
    Submission(SubmissionRow),
    Checkpoint(CheckpointRow),
    Receipt(ReceiptRow),
}

/// A root found on a shard, with the shard's head and, for a submission,
/// its deltas (of every submission with that root: keep those of the one
/// found).
pub struct Looked {
    pub found: Found,
    pub head: Option<HeadRow>,
    pub deltas: Vec<DeltaRow>,
}

impl RootLookup {
    /// What the root was issued for, if this shard issued it: a submission
    /// first, then a checkpoint, then a receipt.
    pub fn found(self) -> Option<Looked> {
        let found = if let Some(s) = self.submissions.into_iter().next() {
            Found::Submission(s)
        } else if let Some(c) = self.checkpoints.into_iter().next() {
            Found::Checkpoint(c)
        } else {
            Found::Receipt(self.receipts.into_iter().next()?)
        };
        Some(Looked {
            found,
            head: self.head,
            deltas: self.deltas,
        })
    }
}
