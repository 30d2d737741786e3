//! Conditions a delta may carry, checked when it is sequenced (issue 43,
//! docs/balance.md "Conditions"), and the refusal a delta that fails one
//! becomes: a log item of its own that commits to the refused item hash,
//! the condition and the position it met, so that a verifier recomputes
//! every balance without it and sees why it was refused.
//!
//! The rules, in this order, against the delta's ledger and asset as the
//! verified deltas before it left it (refusals not counted):
//! 1. `expectedSequence`: the number of those deltas must equal it (an
//!    optimistic lock);
//! 2. `balanceAtLeast` (the delta's own, else the tenant's default floor of
//!    the asset): a debit (a negative delta) must leave the balance at or
//!    above it. A credit is never refused by a floor.
//!
//! [`Book`] applies them one delta at a time in ledger order over the
//! positions a sequencer round read: the round's set-based evaluation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::amount::Amount;
use crate::hash::Hash32;
use crate::types::Asset;

/// What a delta asks of its ledger's asset when it is sequenced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_at_least: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sequence: Option<u64>,
}

impl Conditions {
    pub fn is_empty(&self) -> bool {
        self.balance_at_least.is_none() && self.expected_sequence.is_none()
    }

    /// The RFC 8785 form of the members present: `{"balanceAtLeast":"-5",
    /// "expectedSequence":3}` (the amount as its canonical decimal string,
    /// as a delta's). Appended to `out`.
    pub fn write_canonical(&self, out: &mut String) {
        out.push('{');
        if let Some(floor) = self.balance_at_least {
            out.push_str("\"balanceAtLeast\":");
            crate::json::write_string(out, &floor.to_string());
        }
        if let Some(seq) = self.expected_sequence {
            if self.balance_at_least.is_some() {
                out.push(',');
            }
            out.push_str("\"expectedSequence\":");
            out.push_str(&seq.to_string());
        }
        out.push('}');
    }
}

/// A ledger's asset before a delta: how many verified deltas it has and
/// its balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub sequence: u64,
    pub balance: Amount,
}

/// Why a delta was refused (`failure.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    BalanceBelowFloor,
    SequenceMismatch,
}

impl RefusalCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::BalanceBelowFloor => "balance_below_floor",
            RefusalCode::SequenceMismatch => "sequence_mismatch",
        }
    }

    /// Reads a code as [`RefusalCode::as_str`] writes it.
    pub fn parse(text: &str) -> Option<RefusalCode> {
        match text {
            "balance_below_floor" => Some(RefusalCode::BalanceBelowFloor),
            "sequence_mismatch" => Some(RefusalCode::SequenceMismatch),
            _ => None,
        }
    }
}

/// The condition a refused delta failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// The floor it would have crossed (its own, or the tenant's default:
    /// `tenant_default`).
    Floor {
        balance_at_least: Amount,
        tenant_default: bool,
    },
    Sequence {
        expected_sequence: u64,
    },
}

impl Failed {
    pub fn code(&self) -> RefusalCode {
        match self {
            Failed::Floor { .. } => RefusalCode::BalanceBelowFloor,
            Failed::Sequence { .. } => RefusalCode::SequenceMismatch,
        }
    }

    /// The one condition it failed, as a delta would ask it.
    pub fn condition(&self) -> Conditions {
        match *self {
            Failed::Floor {
                balance_at_least, ..
            } => Conditions {
                balance_at_least: Some(balance_at_least),
                expected_sequence: None,
            },
            Failed::Sequence { expected_sequence } => Conditions {
                balance_at_least: None,
                expected_sequence: Some(expected_sequence),
            },
        }
    }
}

/// Checks `delta` with its `own` conditions (and the asset's `default_floor`,
/// for a debit without its own floor) at `at`.
///
/// # Errors
/// The condition it fails. A balance that would overflow is refused as
/// below any floor (it can never be appended anyway).
pub fn check(
    at: Position,
    delta: Amount,
    own: &Conditions,
    default_floor: Option<Amount>,
) -> Result<(), Failed> {
    if let Some(expected) = own.expected_sequence {
        if expected != at.sequence {
            return Err(Failed::Sequence {
                expected_sequence: expected,
            });
        }
    }
    let (floor, tenant_default) = match (own.balance_at_least, default_floor) {
        (Some(f), _) => (f, false),
        (None, Some(f)) => (f, true),
        (None, None) => return Ok(()),
    };
    if delta.signum() >= 0 {
        return Ok(());
    }
    match at.balance.checked_add(delta) {
        Ok(after) if after >= floor => Ok(()),
        _ => Err(Failed::Floor {
            balance_at_least: floor,
            tenant_default,
        }),
    }
}

/// The log item a refused delta becomes (`bvs-refusal-v1`, docs/hashes.md
/// "Refusals"): the refused delta's item hash, customer, asset and amount,
/// the condition it failed and the position it met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub item_hash: Hash32,
    pub customer_id: String,
    pub asset: Asset,
    pub delta: Amount,
    pub failed: Failed,
    pub at: Position,
}

/// The `kind` member of a refusal's canonical form.
pub const REFUSAL_KIND: &str = "bvs-refusal-v1";

impl Refusal {
    /// The exact text hashed: RFC 8785 form of `{asset (only when named),
    /// balance, code, condition: {balanceAtLeast | expectedSequence},
    /// customerId, delta, itemHash, kind: "bvs-refusal-v1", sequence,
    /// tenantDefault (only for a tenant's default floor)}`.
    pub fn canonical_json(&self) -> String {
        let mut out = String::with_capacity(320);
        let text = crate::json::write_string_member;
        out.push('{');
        if !self.asset.is_default() {
            text(&mut out, "asset", &self.asset.key());
        }
        text(&mut out, "balance", &self.at.balance.to_string());
        text(&mut out, "code", self.failed.code().as_str());
        out.push_str("\"condition\":");
        let condition = self.failed.condition();
        condition.write_canonical(&mut out);
        out.push(',');
        text(&mut out, "customerId", &self.customer_id);
        text(&mut out, "delta", &self.delta.to_string());
        text(&mut out, "itemHash", &self.item_hash.to_hex());
        text(&mut out, "kind", REFUSAL_KIND);
        out.push_str("\"sequence\":");
        out.push_str(&self.at.sequence.to_string());
        if let Failed::Floor {
            tenant_default: true,
            ..
        } = self.failed
        {
            out.push_str(",\"tenantDefault\":true");
        }
        out.push('}');
        out
    }

    /// The refusal's item hash: SHA-256 of [`Refusal::canonical_json`].
    pub fn hash(&self) -> Hash32 {
        Hash32::digest(self.canonical_json().as_bytes())
    }

    /// Whether the refusal follows from its own fields: the position it
    /// names fails the condition it names for its delta.
    pub fn is_justified(&self) -> bool {
        let own = self.failed.condition();
        check(self.at, self.delta, &own, None).is_err()
    }
}

/// The positions of the ledgers (each a key `K`: tenant, customer, asset)
/// a round touches, and the deltas offered to them in ledger order: the
/// sequencer's set-based evaluation of the conditions (one read of every
/// position, then each delta checked and counted against the running
/// position of its own ledger).
#[derive(Debug, Clone, Default)]
pub struct Book<K: Ord> {
    positions: BTreeMap<K, Position>,
}

impl<K: Ord + Clone> Book<K> {
    /// A book over the positions read (a ledger not in it starts at 0).
    pub fn new(positions: BTreeMap<K, Position>) -> Self {
        Book { positions }
    }

    /// The position of `key` now.
    pub fn position(&self, key: &K) -> Position {
        self.positions.get(key).copied().unwrap_or_default()
    }

    /// Offers `delta` to `key`'s ledger: counted (its position after it)
    /// unless a condition refuses it (the position it met, unchanged).
    ///
    /// # Errors
    /// The refusal's condition and the position it met.
    pub fn offer(
        &mut self,
        key: &K,
        delta: Amount,
        own: &Conditions,
        default_floor: Option<Amount>,
    ) -> Result<Position, (Failed, Position)> {
        let at = self.position(key);
        check(at, delta, own, default_floor).map_err(|f| (f, at))?;
        let balance = at.balance.checked_add(delta).map_err(|_| {
            (
                Failed::Floor {
                    balance_at_least: Amount::ZERO,
                    tenant_default: false,
                },
                at,
            )
        })?;
        let after = Position {
            sequence: at.sequence + 1,
            balance,
        };
        self.positions.insert(key.clone(), after);
        Ok(after)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn a(t: &str) -> Amount {
        Amount::parse(t).unwrap()
    }

    #[test]
    fn floors_bind_debits_only_and_locks_count_verified_deltas() {
        let at = Position {
            sequence: 2,
            balance: a("5"),
        };
        let floor0 = Conditions {
            balance_at_least: Some(a("0")),
            expected_sequence: None,
        };
        assert!(check(at, a("-5"), &floor0, None).is_ok());
        assert_eq!(
            check(at, a("-5.01"), &floor0, None).unwrap_err().code(),
            RefusalCode::BalanceBelowFloor
        );
        // A credit below the floor is still a credit.
        let below = Position {
            sequence: 2,
            balance: a("-10"),
        };
        assert!(check(below, a("1"), &floor0, None).is_ok());
        // An overdraft line, and the tenant's default when the delta has none.
        let line = Conditions {
            balance_at_least: Some(a("-500")),
            expected_sequence: None,
        };
        assert!(check(at, a("-505"), &line, Some(a("0"))).is_ok());
        assert_eq!(
            check(at, a("-6"), &Conditions::default(), Some(a("0"))).unwrap_err(),
            Failed::Floor {
                balance_at_least: a("0"),
                tenant_default: true
            }
        );
        let lock = Conditions {
            balance_at_least: None,
            expected_sequence: Some(2),
        };
        assert!(check(at, a("-1"), &lock, None).is_ok());
        let stale = Conditions {
            balance_at_least: None,
            expected_sequence: Some(1),
        };
        assert_eq!(
            check(at, a("1"), &stale, None).unwrap_err().code(),
            RefusalCode::SequenceMismatch
        );
    }

    #[test]
    fn the_canonical_form_is_jcs_of_the_refusal() {
        let r = Refusal {
            item_hash: Hash32::digest(b"x"),
            customer_id: "cus_1".into(),
            asset: Asset::parse("asset", "USD/2").unwrap(),
            delta: a("-7.5"),
            failed: Failed::Floor {
                balance_at_least: a("0"),
                tenant_default: true,
            },
            at: Position {
                sequence: 3,
                balance: a("5"),
            },
        };
        let reference = serde_json_canonicalizer::to_string(&serde_json::json!({
            "asset": "USD/2", "balance": "5", "code": "balance_below_floor",
            "condition": {"balanceAtLeast": "0"}, "customerId": "cus_1", "delta": "-7.5",
            "itemHash": Hash32::digest(b"x").to_hex(), "kind": "bvs-refusal-v1", "sequence": 3,
            "tenantDefault": true,
        }))
        .unwrap();
        assert_eq!(r.canonical_json(), reference);
        assert!(r.is_justified());
        let lock = Refusal {
            asset: Asset::Default,
            failed: Failed::Sequence {
                expected_sequence: 2,
            },
            ..r.clone()
        };
        let reference = serde_json_canonicalizer::to_string(&serde_json::json!({
            "balance": "5", "code": "sequence_mismatch", "condition": {"expectedSequence": 2},
            "customerId": "cus_1", "delta": "-7.5", "itemHash": Hash32::digest(b"x").to_hex(),
            "kind": "bvs-refusal-v1", "sequence": 3,
        }))
        .unwrap();
        assert_eq!(lock.canonical_json(), reference);
        assert!(lock.is_justified());
        // A moved position no longer justifies it.
        let moved = Refusal {
            at: Position {
                sequence: 2,
                balance: a("5"),
            },
            ..lock
        };
        assert!(!moved.is_justified());
        let rich = Refusal {
            at: Position {
                sequence: 3,
                balance: a("8"),
            },
            ..r
        };
        assert!(!rich.is_justified());
    }
}
