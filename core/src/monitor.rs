//! A log monitor's memory, without I/O: the tree heads a client has seen of
//! one log, and whether a new signed head is consistent with all of them
//! (as the Go checksum database client does). A log that shows two clients
//! different histories (a fork) is caught the first time a client that has
//! seen one history is shown the other.
//!
//! The caller keeps the history (a state file for `bvs-verify monitor`,
//! localStorage for the verify page), checks the new head's signature, and
//! fetches the consistency proof this module asks for.

use crate::hash::Hash32;
use crate::merkle::{self, ProofError, TreeSize};

/// Most heads remembered per log; the oldest are dropped first (the
/// remaining chain of consistency proofs still covers them). // spec: silent; bounds a state file to ~1 MB per log
pub const HEADS_PER_LOG_MAX: usize = 10_000;

/// A tree head a client has checked and remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenHead {
    pub size: TreeSize,
    pub root: Hash32,
}

/// How a new head relates to the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// The first head seen of this log: nothing to compare with yet.
    First,
    /// A head already seen (same size, same root).
    Known,
    /// A consistency proof links the new head to the seen head of size
    /// `from` (it extends the largest seen head, or is a prefix of the
    /// smallest seen head above it).
    Consistent { from: TreeSize },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MonitorError {
    /// Two different roots for one size: the log showed two histories.
    #[error("FORK: the log signed two different trees of size {size}: root {seen} was seen before, now {got}")]
    Fork {
        size: u64,
        seen: Hash32,
        got: Hash32,
    },
    /// The consistency proof does not link the new head to the history.
    #[error("FORK: the head of size {new} is not consistent with the head of size {old} seen before: {why}")]
    Inconsistent { old: u64, new: u64, why: ProofError },
    /// A consistency proof between these sizes is needed to decide.
    #[error("a consistency proof from size {from} to size {to} is needed (GET /api/v1/log/<env>/proof/consistency?from={from}&to={to})")]
    NeedProof { from: u64, to: u64 },
}

/// Checks `new` (whose signature the caller has verified) against the heads
/// seen before. `proof` is the consistency proof between `new` and the
/// nearest seen head, as [`MonitorError::NeedProof`] names it (or `None`).
///
/// # Errors
/// [`MonitorError::Fork`] or [`MonitorError::Inconsistent`] when the log
/// rewrote history, [`MonitorError::NeedProof`] when a proof is missing.
pub fn observe(
    seen: &[SeenHead],
    new: SeenHead,
    proof: Option<&[Hash32]>,
) -> Result<Observation, MonitorError> {
    if let Some(same) = seen.iter().find(|h| h.size == new.size) {
        return if same.root.ct_eq(&new.root) {
            Ok(Observation::Known)
        } else {
            Err(MonitorError::Fork {
                size: new.size.0,
                seen: same.root,
                got: new.root,
            })
        };
    }
    // Every seen head is consistent with every other (each was checked
    // when it was added), so they are all prefixes of the largest. A new
    // head that is a prefix of the smallest seen head above it is then
    // consistent with all of them; one that extends the largest seen head
    // is too.
    let below = seen
        .iter()
        .filter(|h| h.size < new.size)
        .max_by_key(|h| h.size);
    let above = seen
        .iter()
        .filter(|h| h.size > new.size)
        .min_by_key(|h| h.size);
    let (old, newer, from) = match (below, above) {
        (None, None) => return Ok(Observation::First),
        (_, Some(a)) => (new, *a, a.size),
        (Some(b), None) => (*b, new, b.size),
    };
    let Some(proof) = proof else {
        return Err(MonitorError::NeedProof {
            from: old.size.0,
            to: newer.size.0,
        });
    };
    merkle::verify_consistency(proof, old.size, &old.root, newer.size, &newer.root).map_err(
        |why| MonitorError::Inconsistent {
            old: old.size.0,
            new: newer.size.0,
            why,
        },
    )?;
    Ok(Observation::Consistent { from })
}

/// Adds `new` to the history (sorted by size, bounded by
/// [`HEADS_PER_LOG_MAX`], oldest dropped first).
pub fn remember(seen: &mut Vec<SeenHead>, new: SeenHead) {
    if seen.iter().any(|h| h.size == new.size) {
        return;
    }
    seen.push(new);
    seen.sort_by_key(|h| h.size);
    if seen.len() > HEADS_PER_LOG_MAX {
        let excess = seen.len() - HEADS_PER_LOG_MAX;
        seen.drain(..excess);
    }
}

#[cfg(test)]
#[cfg(feature = "server")]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::log::{self, StoredHashes, HASH_SCHEME};

    fn log_of(items: &[Hash32]) -> StoredHashes {
        let mut store = StoredHashes::new();
        for (k, v) in log::append(TreeSize(0), items, &StoredHashes::new()).unwrap() {
            store.insert(k, v);
        }
        store
    }

    fn head(items: &[Hash32], n: usize) -> SeenHead {
        SeenHead {
            size: TreeSize(n as u64),
            root: HASH_SCHEME.log_root(&items[..n]),
        }
    }

    fn items(salt: u8, n: u64) -> Vec<Hash32> {
        (0..n)
            .map(|i| Hash32::digest(&[&[salt][..], &i.to_be_bytes()].concat()))
            .collect()
    }

    #[test]
    fn a_growing_log_is_consistent_and_a_fork_is_caught_either_way() {
        let it = items(1, 20);
        let store = log_of(&it);
        let proof =
            |m: u64, n: u64| log::consistency_proof(TreeSize(m), TreeSize(n), &store).unwrap();
        let mut seen = Vec::new();
        assert_eq!(observe(&seen, head(&it, 5), None), Ok(Observation::First));
        remember(&mut seen, head(&it, 5));
        assert_eq!(observe(&seen, head(&it, 5), None), Ok(Observation::Known));
        assert_eq!(
            observe(&seen, head(&it, 12), None),
            Err(MonitorError::NeedProof { from: 5, to: 12 })
        );
        assert_eq!(
            observe(&seen, head(&it, 12), Some(&proof(5, 12))),
            Ok(Observation::Consistent { from: TreeSize(5) })
        );
        remember(&mut seen, head(&it, 12));
        // An older head shown late is checked against the next seen one.
        assert_eq!(
            observe(&seen, head(&it, 3), None),
            Err(MonitorError::NeedProof { from: 3, to: 5 })
        );
        assert!(observe(&seen, head(&it, 3), Some(&proof(3, 5))).is_ok());
        // A head between two seen ones must be a prefix of the one above.
        assert_eq!(
            observe(&seen, head(&it, 8), None),
            Err(MonitorError::NeedProof { from: 8, to: 12 })
        );
        assert_eq!(
            observe(&seen, head(&it, 8), Some(&proof(8, 12))),
            Ok(Observation::Consistent { from: TreeSize(12) })
        );

        // Another history: same first items, one rewritten at 8.
        let mut other = it.clone();
        other[8] = Hash32::digest(b"rewritten");
        let forked = log_of(&other);
        let fork_proof = log::consistency_proof(TreeSize(12), TreeSize(20), &forked).unwrap();
        assert!(matches!(
            observe(&seen, head(&other, 20), Some(&fork_proof)),
            Err(MonitorError::Inconsistent {
                old: 12,
                new: 20,
                ..
            })
        ));
        assert!(matches!(
            observe(&seen, head(&other, 12), None),
            Err(MonitorError::Fork { size: 12, .. })
        ));
        let e = observe(&seen, head(&other, 12), None).unwrap_err();
        assert!(e.to_string().starts_with("FORK:"), "{e}");
    }

    #[test]
    fn the_history_is_sorted_deduplicated_and_bounded() {
        let it = items(2, 3);
        let mut seen = Vec::new();
        remember(&mut seen, head(&it, 3));
        remember(&mut seen, head(&it, 1));
        remember(&mut seen, head(&it, 3));
        assert_eq!(seen, vec![head(&it, 1), head(&it, 3)]);
        for n in 0..(HEADS_PER_LOG_MAX as u64 + 5) {
            remember(
                &mut seen,
                SeenHead {
                    size: TreeSize(10 + n),
                    root: Hash32::EMPTY,
                },
            );
        }
        assert_eq!(seen.len(), HEADS_PER_LOG_MAX);
        assert_eq!(seen[0].size, TreeSize(15));
    }
}
