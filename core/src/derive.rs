//! Derivation and comparison over verified deltas, O(page) not O(history).
//!
//! Each verified delta carries its ledger sequence number and the ledger's
//! balance after it, so the balance after any starting point is
//! `startingBalance + (balance_now − balance_at_start)` without replaying
//! the history. Window summaries are plain sums the worker can also get
//! from SQL aggregates and merge.

use crate::amount::{Amount, AmountError};
use crate::hash::Hash32;
use crate::types::Period;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A verified delta as derive and receipts list it (the spec's Delta object).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DerivedDelta {
    pub anchor_id: String,
    pub item_hash: Hash32,
    /// Root of the submission that carried this delta.
    pub items_root: Hash32,
    /// Same value as `items_root` (spec: receiptId).
    pub receipt_id: Hash32,
    pub delta: Amount,
    /// `None` once retention purged it.
    pub reason: Option<String>,
    pub reference_id: Option<String>,
    pub window: Period,
    #[serde(with = "crate::time::iso_ms")]
    pub declared_timestamp: i64,
    #[serde(with = "crate::time::iso_ms")]
    pub block_timestamp: i64,
    pub data_purged: bool,
    pub verified: bool,
    /// Position in the customer's ledger (1-based); not part of the JSON.
    #[serde(skip)]
    pub seq: u64,
    /// Ledger balance after this delta; not part of the JSON.
    #[serde(skip)]
    pub balance_after: Amount,
}

/// Per-window totals (spec: Window summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowSummary {
    pub window: Period,
    pub deltas_count: u64,
    pub net_delta: Amount,
    #[serde(with = "crate::time::iso_ms")]
    pub first_block_timestamp: i64,
    #[serde(with = "crate::time::iso_ms")]
    pub last_block_timestamp: i64,
}

impl WindowSummary {
    /// Folds another summary of the same window into this one (the worker
    /// may compute parts with SQL and merge).
    ///
    /// # Errors
    /// [`AmountError::Overflow`]; a different window is ignored and
    /// reported as `Ok(false)`.
    pub fn merge(&mut self, other: &WindowSummary) -> Result<bool, AmountError> {
        if self.window != other.window {
            return Ok(false);
        }
        self.deltas_count += other.deltas_count;
        self.net_delta = self.net_delta.checked_add(other.net_delta)?;
        self.first_block_timestamp = self.first_block_timestamp.min(other.first_block_timestamp);
        self.last_block_timestamp = self.last_block_timestamp.max(other.last_block_timestamp);
        Ok(true)
    }
}

/// Window summaries of the given deltas, ascending by window.
///
/// # Errors
/// [`AmountError::Overflow`] if a window's net delta does not fit.
pub fn window_summaries(deltas: &[DerivedDelta]) -> Result<Vec<WindowSummary>, AmountError> {
    let mut by_window: BTreeMap<Period, WindowSummary> = BTreeMap::new();
    for d in deltas {
        let one = WindowSummary {
            window: d.window,
            deltas_count: 1,
            net_delta: d.delta,
            first_block_timestamp: d.block_timestamp,
            last_block_timestamp: d.block_timestamp,
        };
        match by_window.get_mut(&d.window) {
            Some(s) => {
                s.merge(&one)?;
            }
            None => {
                by_window.insert(d.window, one);
            }
        }
    }
    Ok(by_window.into_values().collect())
}

/// The derived balance: the caller's starting balance plus every verified
/// delta after the starting point, from the ledger's running balances.
/// From genesis, `balance_at_checkpoint` is zero.
///
/// # Errors
/// [`AmountError::Overflow`].
pub fn computed_balance(
    starting: Amount,
    balance_at_checkpoint: Amount,
    balance_now: Amount,
) -> Result<Amount, AmountError> {
    starting.checked_add(balance_now.checked_sub(balance_at_checkpoint)?)
}

/// Replays deltas one by one (for receipts and checks of the shortcut).
///
/// # Errors
/// [`AmountError::Overflow`].
pub fn replay(starting: Amount, deltas: &[Amount]) -> Result<Amount, AmountError> {
    deltas
        .iter()
        .try_fold(starting, |acc, d| acc.checked_add(*d))
}

/// Who holds a balance that disagrees with the verified history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Who {
    Yours,
    Theirs,
    Both,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discrepancy {
    /// yourBalance − computedBalance (positive: yours is too high).
    pub yours_off_by: Amount,
    /// theirBalance − computedBalance.
    pub theirs_off_by: Amount,
    pub who: Who,
    pub resolution: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub computed_balance: Amount,
    pub matches_yours: bool,
    pub matches_theirs: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub discrepancy: Option<Discrepancy>,
}

fn off_text(off: Amount) -> String {
    match off.signum() {
        1 => format!("{off} too high"),
        _ => format!("{} too low", off.checked_abs().unwrap_or(off)),
    }
}

/// Compares two claimed balances with the computed one.
///
/// # Errors
/// [`AmountError::Overflow`] computing a difference.
pub fn compare(computed: Amount, yours: Amount, theirs: Amount) -> Result<Comparison, AmountError> {
    let yours_off_by = yours.checked_sub(computed)?;
    let theirs_off_by = theirs.checked_sub(computed)?;
    let matches_yours = yours_off_by.is_zero();
    let matches_theirs = theirs_off_by.is_zero();
    let discrepancy = match (matches_yours, matches_theirs) {
        (true, true) => None,
        (false, true) => Some(Discrepancy {
            yours_off_by,
            theirs_off_by,
            who: Who::Yours,
            resolution: format!(
                "Your balance {yours} is {} against the verified history ({computed}); theirs matches. \
                 Find the entry in your records that has no verified delta (or the delta you did not book), \
                 then correct your balance to {computed}.",
                off_text(yours_off_by)
            ),
        }),
        (true, false) => Some(Discrepancy {
            yours_off_by,
            theirs_off_by,
            who: Who::Theirs,
            resolution: format!(
                "Their balance {theirs} is {} against the verified history ({computed}); yours matches. \
                 Send them this comparison and the receipt for the period so they can correct their balance to {computed}.",
                off_text(theirs_off_by)
            ),
        }),
        (false, false) if yours == theirs => Some(Discrepancy {
            yours_off_by,
            theirs_off_by,
            who: Who::Both,
            resolution: format!(
                "You both hold {yours}, but the verified history gives {computed} ({}). \
                 A change you both booked was never recorded: emit it as a delta of {yours_off_by}, \
                 or check that startingBalance is right.",
                off_text(yours_off_by)
            ),
        }),
        (false, false) => Some(Discrepancy {
            yours_off_by,
            theirs_off_by,
            who: Who::Both,
            resolution: format!(
                "Neither balance matches the verified history ({computed}): yours is {}, theirs is {}. \
                 Derive the customer's deltas and reconcile both ledgers against them; check startingBalance first.",
                off_text(yours_off_by),
                off_text(theirs_off_by)
            ),
        }),
    };
    Ok(Comparison {
        computed_balance: computed,
        matches_yours,
        matches_theirs,
        discrepancy,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    fn delta(window: &str, amount: &str, at: i64) -> DerivedDelta {
        DerivedDelta {
            anchor_id: format!("anc_{at}"),
            item_hash: Hash32::digest(&at.to_be_bytes()),
            items_root: Hash32::EMPTY,
            receipt_id: Hash32::EMPTY,
            delta: a(amount),
            reason: Some("r".into()),
            reference_id: None,
            window: Period::parse(window).unwrap(),
            declared_timestamp: at,
            block_timestamp: at,
            data_purged: false,
            verified: true,
            seq: 0,
            balance_after: Amount::ZERO,
        }
    }

    #[test]
    fn summaries_group_by_window() {
        let ds = [
            delta("2026-01", "0.1", 10),
            delta("2026-02", "5", 30),
            delta("2026-01", "0.2", 20),
        ];
        let s = window_summaries(&ds).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].net_delta, a("0.3"));
        assert_eq!(
            (
                s[0].deltas_count,
                s[0].first_block_timestamp,
                s[0].last_block_timestamp
            ),
            (2, 10, 20)
        );
        let json = serde_json::to_value(&s[1]).unwrap();
        assert_eq!(json["window"], "2026-02");
        assert_eq!(json["firstBlockTimestamp"], "1970-01-01T00:00:00.030Z");
        assert_eq!(serde_json::to_string(&s[1].net_delta).unwrap(), "5");
    }

    #[test]
    fn delta_object_uses_spec_field_names() {
        let json = serde_json::to_value(delta("2026-01", "-4.25", 0)).unwrap();
        for field in [
            "anchorId",
            "itemHash",
            "itemsRoot",
            "receiptId",
            "delta",
            "reason",
            "referenceId",
            "window",
            "declaredTimestamp",
            "blockTimestamp",
            "dataPurged",
            "verified",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        assert!(json.get("seq").is_none());
        assert_eq!(json["referenceId"], serde_json::Value::Null);
    }

    #[test]
    fn computed_balance_uses_the_running_balances() {
        assert_eq!(
            computed_balance(a("100"), a("40"), a("42.5")).unwrap(),
            a("102.5")
        );
        assert_eq!(computed_balance(a("0"), a("0"), a("-3")).unwrap(), a("-3"));
    }

    #[test]
    fn compare_says_who_and_how_much() {
        let c = compare(a("100"), a("100"), a("100")).unwrap();
        assert!(c.matches_yours && c.matches_theirs && c.discrepancy.is_none());
        assert!(serde_json::to_value(&c)
            .unwrap()
            .get("discrepancy")
            .is_none());

        let c = compare(a("100"), a("105"), a("100")).unwrap();
        let d = c.discrepancy.unwrap();
        assert_eq!(
            (d.who, d.yours_off_by, d.theirs_off_by),
            (Who::Yours, a("5"), a("0"))
        );
        assert!(d.resolution.contains("5 too high"), "{}", d.resolution);

        let d = compare(a("100"), a("100"), a("99.5"))
            .unwrap()
            .discrepancy
            .unwrap();
        assert_eq!(d.who, Who::Theirs);
        assert!(d.resolution.contains("0.5 too low"));

        let d = compare(a("100"), a("90"), a("90"))
            .unwrap()
            .discrepancy
            .unwrap();
        assert_eq!(d.who, Who::Both);
        assert!(d.resolution.contains("delta of -10"));

        let d = compare(a("100"), a("90"), a("110"))
            .unwrap()
            .discrepancy
            .unwrap();
        assert_eq!(d.who, Who::Both);
        assert_eq!(serde_json::to_value(&d).unwrap()["who"], "both");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn shortcut_equals_replay(start in -1_000_000i64..1_000_000, units in prop::collection::vec(-1_000_000_000i64..1_000_000_000, 0..50), cut in any::<prop::sample::Index>()) {
            let deltas: Vec<Amount> = units.iter().map(|u| Amount::from_units(i128::from(*u) * 1_000_000_000)).collect();
            let start = Amount::from_int(start).unwrap();
            // Running balances of the ledger (from zero).
            let mut after = vec![Amount::ZERO];
            for d in &deltas {
                after.push(after.last().unwrap().checked_add(*d).unwrap());
            }
            let k = cut.index(after.len());
            let shortcut = computed_balance(start, after[k], *after.last().unwrap()).unwrap();
            prop_assert_eq!(shortcut, replay(start, &deltas[k..]).unwrap());
        }
    }
}
