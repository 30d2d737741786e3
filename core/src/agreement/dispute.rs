//! A dispute checked against the checkpoint it names (issue 25): its
//! `after` must fall inside the checkpoint, its `agreed` must be the
//! checkpoint's balance after that many deltas, and the delta it names
//! (for `missing`, `changed`, `reordered`) must be the service's delta
//! right after them. So a key holder can sign only disputes that describe
//! the checkpoint, not any number of made-up ones.
//!
//! `after` counts the deltas agreed before the divergent one within the
//! checkpoint (0: before its first), as the agreement page builds it; a
//! dispute built from a compare from the ledger's start counts from there
//! (`Divergence::agreed_deltas`), so both readings are accepted: the named
//! delta and the agreed balance decide.

use super::{Dispute, StatementError};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::pinpoint::{DivergenceKind, EntryId};

/// One of the checkpoint's deltas, as a dispute may name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointDelta {
    /// Its position in its ledger (1-based).
    pub seq: u64,
    pub item_hash: Hash32,
    pub anchor_id: String,
    pub reference_id: Option<String>,
    pub balance_after: Amount,
}

/// What the service knows of the checkpoint a dispute names: its first
/// delta's ledger position, how many it covers, the ledger's balance
/// before it, and the deltas at [`Dispute::positions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeContext {
    pub first_seq: u64,
    pub delta_count: u64,
    pub balance_before: Amount,
    pub deltas: Vec<CheckpointDelta>,
}

impl Dispute {
    /// The readings of `after` as a count within the checkpoint (see the
    /// module docs): as it is, and from the ledger's start.
    fn readings(&self, first_seq: u64, delta_count: u64) -> Vec<u64> {
        let before = first_seq.saturating_sub(1);
        let mut q = vec![self.after];
        if before > 0 && self.after >= before {
            q.push(self.after - before);
        }
        let last = if self.kind == DivergenceKind::Extra {
            delta_count
        } else {
            delta_count.saturating_sub(1)
        };
        q.retain(|q| *q <= last && (self.kind == DivergenceKind::Extra || delta_count > 0));
        q.dedup();
        q
    }

    /// The ledger positions of the deltas [`Dispute::check`] needs, for a
    /// checkpoint whose first delta is at `first_seq` and covers
    /// `delta_count`: for each reading of `after`, the delta before the
    /// divergent one and the divergent one.
    pub fn positions(&self, first_seq: u64, delta_count: u64) -> Vec<u64> {
        let mut seqs: Vec<u64> = self
            .readings(first_seq, delta_count)
            .into_iter()
            .flat_map(|q| [first_seq + q, (first_seq + q).saturating_sub(1)])
            .filter(|s| *s >= first_seq && *s < first_seq + delta_count)
            .collect();
        seqs.sort_unstable();
        seqs.dedup();
        seqs
    }

    /// Checks the dispute against its checkpoint.
    ///
    /// # Errors
    /// `AfterOutOfRange`, `AgreedMismatch` or `DeltaMismatch`.
    pub fn check(&self, ctx: &DisputeContext) -> Result<(), StatementError> {
        let readings = self.readings(ctx.first_seq, ctx.delta_count);
        let at = |seq: u64| ctx.deltas.iter().find(|d| d.seq == seq);
        let mut error = StatementError::AfterOutOfRange {
            after: self.after,
            deltas: ctx.delta_count,
        };
        for q in readings {
            let agreed = if q == 0 {
                Some(ctx.balance_before)
            } else {
                at(ctx.first_seq + q - 1).map(|d| d.balance_after)
            };
            let Some(agreed) = agreed else { continue };
            if agreed != self.agreed {
                if !matches!(error, StatementError::DeltaMismatch { .. }) {
                    error = StatementError::AgreedMismatch {
                        expected: agreed,
                        got: self.agreed,
                    };
                }
                continue;
            }
            if self.kind == DivergenceKind::Extra {
                return Ok(());
            }
            let named = at(ctx.first_seq + q).is_some_and(|d| match &self.delta {
                EntryId::ItemHash(h) => h.ct_eq(&d.item_hash),
                EntryId::AnchorId(a) => *a == d.anchor_id,
                EntryId::ReferenceId(r) => d.reference_id.as_deref() == Some(r.as_str()),
            });
            if named {
                return Ok(());
            }
            error = StatementError::DeltaMismatch { position: q + 1 };
        }
        Err(error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::agreement::{CheckpointRef, Origin};
    use crate::types::Period;

    fn amount(units: i64) -> Amount {
        Amount::from_int(units).unwrap()
    }

    /// A checkpoint of the ledger's second period: deltas 4..=6 (+10,
    /// −3, +5) after a balance of 100.
    fn ctx() -> DisputeContext {
        let d = |seq: u64, after: i64| CheckpointDelta {
            seq,
            item_hash: Hash32::digest(format!("d{seq}").as_bytes()),
            anchor_id: format!("anc_{seq}"),
            reference_id: Some(format!("ref-{seq}")),
            balance_after: amount(after),
        };
        DisputeContext {
            first_seq: 4,
            delta_count: 3,
            balance_before: amount(100),
            deltas: vec![d(4, 110), d(5, 107), d(6, 112)],
        }
    }

    fn dispute(kind: DivergenceKind, after: u64, delta: EntryId, agreed: i64) -> Dispute {
        Dispute {
            checkpoint: CheckpointRef {
                origin: Origin::parse("example.com/log").unwrap(),
                ledger: Hash32::digest(b"ledger"),
                period: Period::parse("2026-11").unwrap(),
                root: Hash32::digest(b"root"),
                deltas: 3,
            },
            kind,
            after,
            delta,
            agreed: amount(agreed),
        }
    }

    #[test]
    fn a_dispute_naming_the_checkpoints_own_delta_and_balance_passes_either_count() {
        let c = ctx();
        let second = EntryId::ItemHash(Hash32::digest(b"d5"));
        // Within the checkpoint: one delta agreed, then the second.
        let within = dispute(DivergenceKind::Changed, 1, second.clone(), 110);
        assert_eq!(within.positions(4, 3), vec![4, 5]);
        within.check(&c).unwrap();
        // From the ledger's start: three before the checkpoint, plus one.
        dispute(DivergenceKind::Changed, 4, second, 110)
            .check(&c)
            .unwrap();
        dispute(
            DivergenceKind::Missing,
            0,
            EntryId::AnchorId("anc_4".into()),
            100,
        )
        .check(&c)
        .unwrap();
        dispute(
            DivergenceKind::Reordered,
            2,
            EntryId::ReferenceId("ref-6".into()),
            107,
        )
        .check(&c)
        .unwrap();
        // An extra delta may come after the last one.
        dispute(
            DivergenceKind::Extra,
            3,
            EntryId::ReferenceId("mine".into()),
            112,
        )
        .check(&c)
        .unwrap();
    }

    #[test]
    fn a_made_up_dispute_is_refused_by_name() {
        let c = ctx();
        let first = EntryId::ItemHash(Hash32::digest(b"d4"));
        let e = dispute(DivergenceKind::Changed, 0, first.clone(), 99).check(&c);
        assert_eq!(e.unwrap_err().reason(), "agreed_mismatch");
        let e = dispute(DivergenceKind::Changed, 1, first, 110).check(&c);
        assert_eq!(e.unwrap_err().reason(), "delta_mismatch");
        let e = dispute(DivergenceKind::Changed, 9, EntryId::AnchorId("x".into()), 0).check(&c);
        assert_eq!(e.unwrap_err().reason(), "after_out_of_range");
        // Only an extra delta can come after the last one.
        let from_start = DisputeContext { first_seq: 1, ..c };
        let e = dispute(
            DivergenceKind::Missing,
            3,
            EntryId::AnchorId("x".into()),
            112,
        )
        .check(&from_start);
        assert_eq!(e.unwrap_err().reason(), "after_out_of_range");
    }
}
