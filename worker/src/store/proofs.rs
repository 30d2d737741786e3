//! What a proof root was issued for, read in one round trip (issue 16):
//! one batch on a ledger shard with the log's latest head, the submissions
//! with that items root and their deltas, the deltas whose ledger's root
//! (of their submission) it is, the checkpoints with that merkle root and
//! one page of the first one's deltas, the receipts with that items root
//! and the first one's deltas, and the agreement side of the committed
//! single-customer checkpoints with that root (closing balances, keys,
//! statements). The public verify route answers from it with one more read
//! (the stored hashes of the inclusion proofs).
//!
//! One root can name several objects (issue 25): a checkpoint and a
//! receipt over the same deltas, or over one delta whose single emit has
//! the same RFC 9162 root. Every one of them is returned, so the answer
//! can show each (`proofs`).

use bvs_core::hash::Hash32;
use worker::D1Database;

use super::agreement::{self, AgreementRow, KeyRow};
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
    /// The deltas whose ledger root (of their submission) is the root.
    pub ledger_part: Vec<DeltaRow>,
    pub checkpoints: Vec<CheckpointRow>,
    /// One page of the deltas the first checkpoint covers.
    pub checkpoint_deltas: Vec<DeltaRow>,
    pub receipts: Vec<ReceiptRow>,
    /// The deltas the first receipt covers.
    pub receipt_deltas: Vec<DeltaRow>,
    pub agreement: AgreementRows,
    /// The published forms of the newest witnessed head and of the latest
    /// head (issue 28).
    pub witnessed: Vec<super::witness::WitnessedRow>,
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
pub async fn root(
    db: &D1Database,
    root: &Hash32,
    limit: u64,
    offset: u64,
) -> ApiResult<RootLookup> {
    let results = batch(
        db,
        vec![
            log::latest_head_statement()?,
            submissions::by_root_statement(root)?,
            deltas::of_submissions_by_root_statement(root)?,
            checkpoints::by_root_statement(root)?,
            deltas::of_checkpoint_by_root_statement(root, limit, offset)?,
            receipts::by_root_statement(root)?,
            deltas::of_receipt_by_root_statement(root)?,
            checkpoints::closing_balances_by_root_statement(root)?,
            agreement::keys_by_checkpoint_root(root)?,
            agreement::agreements_by_checkpoint_root(root)?,
            deltas::by_ledger_root_statement(root)?,
            super::witness::published_candidates_statement()?,
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
        ledger_part: rows(&results, 10)?,
        witnessed: rows(&results, 11)?,
    })
}

/// The kinds of object a root can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Checkpoint,
    Submission,
    Receipt,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Checkpoint, Kind::Submission, Kind::Receipt];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Checkpoint => "checkpoint",
            Kind::Submission => "submission",
            Kind::Receipt => "receipt",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// A submission a root names: the whole submission (its items root), or
/// one ledger's part of it (that ledger's root).
pub struct SubmissionFound {
    /// Its deltas the root covers, by position.
    pub deltas: Vec<DeltaRow>,
    /// The root is a whole submission's over several ledgers: its answer
    /// shows no amounts or ledgers (issue 25).
    pub spans_ledgers: bool,
}

/// Everything a root was issued for on a shard, with the shard's head and
/// the agreement side's rows.
pub struct Looked {
    pub head: Option<HeadRow>,
    pub submission: Option<SubmissionFound>,
    /// Every checkpoint with the root, oldest first (the first is shown;
    /// the agreement side is of the first committed single-customer one),
    /// and one page of the first one's deltas.
    pub checkpoints: Vec<CheckpointRow>,
    pub checkpoint_deltas: Vec<DeltaRow>,
    pub receipt: Option<(ReceiptRow, Vec<DeltaRow>)>,
    pub agreement: AgreementRows,
    pub witnessed: Vec<super::witness::WitnessedRow>,
}

impl Looked {
    /// The kinds the root names, in the order [`Kind::ALL`] lists them.
    pub fn kinds(&self) -> Vec<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|k| match k {
                Kind::Checkpoint => !self.checkpoints.is_empty(),
                Kind::Submission => self.submission.is_some(),
                Kind::Receipt => self.receipt.is_some(),
            })
            .collect()
    }
}

impl RootLookup {
    /// What the root was issued for, if this shard issued it.
    pub fn found(self) -> Option<Looked> {
        let submission = match self.submissions.into_iter().next() {
            Some(s) => {
                let deltas: Vec<DeltaRow> = self
                    .deltas
                    .into_iter()
                    .filter(|d| d.submission_id == s.id)
                    .collect();
                let spans_ledgers = deltas.iter().any(|d| {
                    deltas
                        .first()
                        .is_some_and(|f| f.customer_id != d.customer_id)
                });
                Some(SubmissionFound {
                    deltas,
                    spans_ledgers,
                })
            }
            None => {
                // One ledger's part of a submission: of one submission only.
                let first = self.ledger_part.first().map(|d| d.submission_id.clone());
                first.map(|id| SubmissionFound {
                    deltas: self
                        .ledger_part
                        .into_iter()
                        .filter(|d| d.submission_id == id)
                        .collect(),
                    spans_ledgers: false,
                })
            }
        };
        let receipt = self
            .receipts
            .into_iter()
            .next()
            .map(|r| (r, self.receipt_deltas));
        let looked = Looked {
            head: self.head,
            submission,
            checkpoints: self.checkpoints,
            checkpoint_deltas: self.checkpoint_deltas,
            receipt,
            agreement: self.agreement,
            witnessed: self.witnessed,
        };
        (!looked.kinds().is_empty()).then_some(looked)
    }
}
