//! What a proof root was issued for, read in one round trip (issue 16):
//! one batch on a ledger shard with the log's latest head, the submissions
//! with that items root and their deltas, the checkpoints with that merkle
//! root and one page of the first one's deltas, the receipts with that
//! items root and the first one's deltas, and the agreement side of the
//! committed single-customer checkpoints with that root (closing balances,
//! keys, statements). The public verify route answers from it with one
//! more read (the stored hashes of the inclusion proofs).

use worker::D1Database;

use super::agreements::{self, AgreementRow, KeyRow};
use super::checkpoints::{self, CheckpointRow, ClosingBalance};
use super::deltas::{self, DeltaRow};
use super::log::{self, HeadRow};
use super::receipts::{self, ReceiptRow};
use super::submissions::{self, SubmissionRow};
use super::{batch, rows};
use crate::error::ApiResult;

/// Everything the shard holds for one root.
pub struct RootLookup {
    pub head: Option<HeadRow>,
    pub submissions: Vec<SubmissionRow>,
    /// The deltas of every submission in `submissions`, by position.
    pub deltas: Vec<DeltaRow>,
    pub checkpoints: Vec<CheckpointRow>,
    /// One page of the deltas the first checkpoint covers.
    pub checkpoint_deltas: Vec<DeltaRow>,
    pub receipts: Vec<ReceiptRow>,
    /// The deltas the first receipt covers.
    pub receipt_deltas: Vec<DeltaRow>,
    pub agreement: AgreementRows,
}

/// The agreement side of the committed single-customer checkpoints with
/// the root: their closing balances, their ledgers' keys (oldest first)
/// and the statements about them.
pub struct AgreementRows {
    pub balances: Vec<ClosingBalance>,
    pub keys: Vec<KeyRow>,
    pub statements: Vec<AgreementRow>,
}

/// Looks `root` up on the shard `db`, with one page (`limit`, `offset`) of
/// a checkpoint's deltas: one round trip.
///
/// # Errors
/// D1 errors.
pub async fn root(db: &D1Database, root: &str, limit: u64, offset: u64) -> ApiResult<RootLookup> {
    let results = batch(
        db,
        vec![
            log::latest_head_statement(db)?,
            submissions::by_root_statement(db, root)?,
            deltas::of_submissions_by_root_statement(db, root)?,
            checkpoints::by_root_statement(db, root)?,
            deltas::of_checkpoint_by_root_statement(db, root, limit, offset)?,
            receipts::by_root_statement(db, root)?,
            deltas::of_receipt_by_root_statement(db, root)?,
            checkpoints::closing_balances_by_root_statement(db, root)?,
            agreements::keys_by_checkpoint_root(db, root)?,
            agreements::agreements_by_checkpoint_root(db, root)?,
        ],
    )
    .await?;
    Ok(RootLookup {
        head: rows(&results, 0)?.into_iter().next(),
        submissions: rows(&results, 1)?,
        deltas: rows(&results, 2)?,
        checkpoints: rows(&results, 3)?,
        checkpoint_deltas: rows(&results, 4)?,
        receipts: rows(&results, 5)?,
        receipt_deltas: rows(&results, 6)?,
        agreement: AgreementRows {
            balances: rows(&results, 7)?,
            keys: rows(&results, 8)?,
            statements: rows(&results, 9)?,
        },
    })
}

/// What a proof root was issued for.
pub enum Found {
    Submission(SubmissionRow),
    Checkpoint(CheckpointRow),
    Receipt(ReceiptRow),
}

/// A root found on a shard, with the shard's head, the deltas of what it
/// was issued for (a submission's: of every submission with that root,
/// keep those of the one found; a receipt's; one page of a checkpoint's),
/// every checkpoint with the root (for its agreement side) and that
/// agreement side's rows.
pub struct Looked {
    pub found: Found,
    pub head: Option<HeadRow>,
    pub deltas: Vec<DeltaRow>,
    pub checkpoints: Vec<CheckpointRow>,
    pub agreement: AgreementRows,
}

impl RootLookup {
    /// What the root was issued for, if this shard issued it: a submission
    /// first, then a checkpoint, then a receipt.
    pub fn found(self) -> Option<Looked> {
        let (found, deltas) = if let Some(s) = self.submissions.into_iter().next() {
            (Found::Submission(s), self.deltas)
        } else if let Some(c) = self.checkpoints.first() {
            (Found::Checkpoint(c.clone()), self.checkpoint_deltas)
        } else {
            let r = self.receipts.into_iter().next()?;
            (Found::Receipt(r), self.receipt_deltas)
        };
        Some(Looked {
            found,
            head: self.head,
            deltas,
            checkpoints: self.checkpoints,
            agreement: self.agreement,
        })
    }
}
