//! Pinpointing compare: where the caller's own record of a customer's
//! ledger first parts from the service's, in O(n) with exact amounts.
//!
//! Both sides give their deltas in ledger order, optionally starting after
//! a checkpoint both already agree on (a count of deltas and the balance
//! after them). The answer is the first divergent delta:
//!
//! - [`DivergenceKind::Missing`]: the service has it, the caller does not;
//! - [`DivergenceKind::Extra`]: the caller has it, the service does not;
//! - [`DivergenceKind::Changed`]: both have it, with different amounts;
//! - [`DivergenceKind::Reordered`]: both have it, but the caller lists it
//!   later (the balance at the end may still agree; intermediate ones do not);
//!
//! with the balance both agree on just before it, the difference
//! (caller − service) just after it, and both final totals.
//!
//! # How entries are matched
//!
//! A caller entry names its delta by any of `itemHash`, `anchorId` or
//! `referenceId`. When it gives several, the strongest one alone decides:
//! **itemHash, then anchorId, then referenceId**. The itemHash commits to the
//! delta's whole content, the anchorId is the service's unique name for it,
//! and the referenceId is the caller's own correlation id, which the service
//! does not require to be unique. Weaker ids given alongside a stronger one
//! are not used for matching, even when they name another delta (they are
//! the caller's annotations; the strongest id is what it vouches for).
//!
//! A referenceId (or any id) carried by more than one service delta cannot
//! name a delta and is refused ([`PinpointError::AmbiguousId`]); so is a
//! caller list naming the same service delta twice
//! ([`PinpointError::DuplicateEntry`]).
//!
//! # The walk
//!
//! Every caller entry is first resolved to a service position (hash maps,
//! O(n)). Then both lists are walked together: a caller entry resolved to
//! the current service delta with the same amount is agreement. Otherwise,
//! at that step, in this order: the same delta with another amount is
//! `Changed`; a current service delta no caller entry names is `Missing`
//! (the service's list is the log of record, so when both sides have an
//! unknown delta at the same step — a substitution — the missing one is
//! reported first); a current caller entry resolved to no service delta is
//! `Extra`; otherwise both name deltas the other lists later: `Reordered`.

use crate::amount::{Amount, AmountError};
use crate::error::FieldError;
use crate::hash::Hash32;
use crate::types::ReferenceId;
use serde::Serialize;
use std::collections::HashMap;

/// Most deltas per side in one pinpoint request. At ~150 bytes of JSON per
/// entry that is ~1.5 MB of body and a few MB of maps, well inside a
/// Worker's 128 MB and CPU budget, and it covers a month of a busy ledger
/// (issue 19 asks for 10,000). Longer histories are paged: pinpoint a page,
/// then start the next one after the last agreed delta as a checkpoint.
/// // spec: silent; issue 19 "documented limit"
pub const PINPOINT_ENTRIES_MAX: usize = 10_000;

/// One delta of the service's ledger, in ledger order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceDelta {
    pub item_hash: Hash32,
    pub anchor_id: String,
    pub reference_id: Option<String>,
    pub amount: Amount,
}

/// How a caller entry names its delta: the strongest id it gave.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "by", content = "id", rename_all = "camelCase")]
pub enum EntryId {
    ItemHash(Hash32),
    AnchorId(String),
    ReferenceId(String),
}

impl EntryId {
    /// The JSON field name of this kind of id.
    pub fn field(&self) -> &'static str {
        match self {
            EntryId::ItemHash(_) => "itemHash",
            EntryId::AnchorId(_) => "anchorId",
            EntryId::ReferenceId(_) => "referenceId",
        }
    }
}

/// One delta of the caller's own record, in the caller's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerEntry {
    id: EntryId,
    amount: Amount,
}

impl CallerEntry {
    /// Builds an entry from the ids the caller gave; the strongest decides
    /// (module docs).
    ///
    /// # Errors
    /// `itemHash: give at least one of itemHash, anchorId or referenceId`
    /// when none is given, `anchorId: ...` for an empty anchorId.
    pub fn new(
        item_hash: Option<Hash32>,
        anchor_id: Option<&str>,
        reference_id: Option<ReferenceId>,
        amount: Amount,
    ) -> Result<Self, FieldError> {
        let id = match (item_hash, anchor_id, reference_id) {
            (Some(h), _, _) => EntryId::ItemHash(h),
            (None, Some(a), _) => {
                if a.is_empty() || a.len() > crate::types::REFERENCE_ID_CHARS_MAX {
                    return Err(FieldError::new("anchorId", "must be 1 to 128 characters"));
                }
                EntryId::AnchorId(a.to_owned())
            }
            (None, None, Some(r)) => EntryId::ReferenceId(r.into_string()),
            (None, None, None) => {
                return Err(FieldError::new(
                    "itemHash",
                    "give at least one of itemHash, anchorId or referenceId",
                ))
            }
        };
        Ok(Self { id, amount })
    }

    pub fn id(&self) -> &EntryId {
        &self.id
    }

    pub fn amount(&self) -> Amount {
        self.amount
    }
}

/// Where both lists start: after `deltas` deltas of the ledger, at
/// `balance`. [`Start::ORIGIN`] is the empty ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub deltas: u64,
    pub balance: Amount,
}

impl Start {
    pub const ORIGIN: Start = Start {
        deltas: 0,
        balance: Amount::ZERO,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DivergenceKind {
    Missing,
    Extra,
    Changed,
    Reordered,
}

impl DivergenceKind {
    pub const ALL: [DivergenceKind; 4] = [
        DivergenceKind::Missing,
        DivergenceKind::Extra,
        DivergenceKind::Changed,
        DivergenceKind::Reordered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Missing => "missing",
            DivergenceKind::Extra => "extra",
            DivergenceKind::Changed => "changed",
            DivergenceKind::Reordered => "reordered",
        }
    }
}

/// The first divergent delta.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// Deltas of the ledger both agree on before it, counted from the
    /// ledger's start (the checkpoint's count plus the agreed ones).
    pub agreed_deltas: u64,
    /// The balance both agree on just before it.
    pub agreed_balance: Amount,
    /// The service's delta at this step (none for `Extra`).
    pub service: Option<DivergentDelta>,
    /// Index of the caller's entry at this step in the caller's list (none
    /// for `Missing` when the caller's list ended or names other deltas).
    pub caller_index: Option<usize>,
    /// The caller's amount at this step (none for `Missing`).
    pub caller_amount: Option<Amount>,
    /// The caller's id of its entry at this step (none for `Missing`).
    pub caller_id: Option<EntryId>,
    /// Caller balance − service balance just after this step: −amount for
    /// a missing delta, +amount for an extra one, the amount difference for
    /// a changed one, caller's − service's amount for a reordered step.
    pub difference_after: Amount,
}

/// The service's side of a divergent step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DivergentDelta {
    pub item_hash: Hash32,
    pub anchor_id: String,
    pub amount: Amount,
}

/// The answer: the first divergence (none when the lists agree) and both
/// final totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pinpoint {
    pub divergence: Option<Divergence>,
    pub service_balance: Amount,
    pub caller_balance: Amount,
    /// caller − service at the end.
    pub difference: Amount,
}

impl Pinpoint {
    pub fn agrees(&self) -> bool {
        self.divergence.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinpointError {
    #[error("{side} has more than {max} deltas; page from a checkpoint")]
    TooMany { side: &'static str, max: usize },
    #[error("deltas[{index}].{field} names more than one of the service's deltas; use itemHash or anchorId")]
    AmbiguousId { index: usize, field: &'static str },
    #[error("deltas[{index}] names the same delta as deltas[{first}]")]
    DuplicateEntry { index: usize, first: usize },
    #[error("balance {0}")]
    Amount(#[from] AmountError),
    #[error("the checkpoint's delta count is too large")]
    CountOverflow,
}

/// Which service positions an id names: one, or several (ambiguous).
#[derive(Clone, Copy)]
enum Named {
    One(usize),
    Several,
}

fn index<K: std::hash::Hash + Eq>(keys: impl Iterator<Item = (K, usize)>) -> HashMap<K, Named> {
    let mut map = HashMap::new();
    for (k, i) in keys {
        map.entry(k)
            .and_modify(|n| *n = Named::Several)
            .or_insert(Named::One(i));
    }
    map
}

/// Finds the first divergent delta between the service's deltas and the
/// caller's entries, both after `start`. O(n) time and memory.
///
/// # Errors
/// [`PinpointError::TooMany`] beyond [`PINPOINT_ENTRIES_MAX`] a side,
/// [`PinpointError::AmbiguousId`] / [`PinpointError::DuplicateEntry`] for a
/// caller list that cannot be matched (module docs),
/// [`PinpointError::Amount`] if a total overflows.
pub fn pinpoint(
    start: Start,
    service: &[ServiceDelta],
    caller: &[CallerEntry],
) -> Result<Pinpoint, PinpointError> {
    for (side, n) in [("service", service.len()), ("deltas", caller.len())] {
        if n > PINPOINT_ENTRIES_MAX {
            return Err(PinpointError::TooMany {
                side,
                max: PINPOINT_ENTRIES_MAX,
            });
        }
    }
    let (resolved, named_by) = resolve(service, caller)?;

    let service_balance = start
        .balance
        .checked_add(Amount::checked_sum(service.iter().map(|d| d.amount))?)?;
    let caller_balance = start
        .balance
        .checked_add(Amount::checked_sum(caller.iter().map(|e| e.amount))?)?;
    let difference = caller_balance.checked_sub(service_balance)?;

    let (mut i, mut j) = (0usize, 0usize);
    let mut agreed = start.balance;
    let divergence = loop {
        let s = service.get(i);
        let c = caller.get(j);
        let kind = match (s, c) {
            (None, None) => break None,
            (Some(_), None) => DivergenceKind::Missing,
            (None, Some(_)) => DivergenceKind::Extra,
            (Some(s), Some(c)) => {
                if resolved[j] == Some(i) {
                    if s.amount == c.amount {
                        agreed = agreed.checked_add(s.amount)?;
                        i += 1;
                        j += 1;
                        continue;
                    }
                    DivergenceKind::Changed
                } else if named_by[i].is_none() {
                    DivergenceKind::Missing
                } else if resolved[j].is_none() {
                    DivergenceKind::Extra
                } else {
                    DivergenceKind::Reordered
                }
            }
        };
        break Some(divergence_at(kind, s, c, (i, j), start, agreed)?);
    };
    Ok(Pinpoint {
        divergence,
        service_balance,
        caller_balance,
        difference,
    })
}

/// Which service position each caller entry names (`resolved[j]`), and
/// which caller entry names each service position (`named_by[i]`).
#[allow(clippy::type_complexity)]
fn resolve(
    service: &[ServiceDelta],
    caller: &[CallerEntry],
) -> Result<(Vec<Option<usize>>, Vec<Option<usize>>), PinpointError> {
    let by_hash = index(service.iter().enumerate().map(|(i, d)| (d.item_hash, i)));
    let by_anchor = index(
        service
            .iter()
            .enumerate()
            .map(|(i, d)| (d.anchor_id.as_str(), i)),
    );
    let by_reference = index(
        service
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.reference_id.as_deref().map(|r| (r, i))),
    );

    // resolved[j]: the service position caller entry j names, if any;
    // named_by[i]: the caller entry naming service position i, if any.
    let mut resolved: Vec<Option<usize>> = Vec::with_capacity(caller.len());
    let mut named_by: Vec<Option<usize>> = vec![None; service.len()];
    for (j, entry) in caller.iter().enumerate() {
        let named = match &entry.id {
            EntryId::ItemHash(h) => by_hash.get(h),
            EntryId::AnchorId(a) => by_anchor.get(a.as_str()),
            EntryId::ReferenceId(r) => by_reference.get(r.as_str()),
        };
        let position = match named {
            None => None,
            Some(Named::Several) => {
                return Err(PinpointError::AmbiguousId {
                    index: j,
                    field: entry.id.field(),
                })
            }
            Some(Named::One(i)) => {
                if let Some(first) = named_by[*i] {
                    return Err(PinpointError::DuplicateEntry { index: j, first });
                }
                named_by[*i] = Some(j);
                Some(*i)
            }
        };
        resolved.push(position);
    }
    Ok((resolved, named_by))
}

/// The divergence of `kind` found at service position `i` and caller
/// entry `j`, after the agreed balance `agreed`.
fn divergence_at(
    kind: DivergenceKind,
    s: Option<&ServiceDelta>,
    c: Option<&CallerEntry>,
    (i, j): (usize, usize),
    start: Start,
    agreed: Amount,
) -> Result<Divergence, PinpointError> {
    let service_side = match kind {
        DivergenceKind::Extra => None,
        _ => s,
    };
    let caller_side = match kind {
        DivergenceKind::Missing => None,
        _ => c,
    };
    let service_amount = service_side.map_or(Amount::ZERO, |d| d.amount);
    let caller_amount = caller_side.map_or(Amount::ZERO, |e| e.amount);
    let agreed_deltas = u64::try_from(i)
        .ok()
        .and_then(|n| start.deltas.checked_add(n))
        .ok_or(PinpointError::CountOverflow)?;
    Ok(Divergence {
        kind,
        agreed_deltas,
        agreed_balance: agreed,
        service: service_side.map(|d| DivergentDelta {
            item_hash: d.item_hash,
            anchor_id: d.anchor_id.clone(),
            amount: d.amount,
        }),
        caller_index: caller_side.map(|_| j),
        caller_amount: caller_side.map(|e| e.amount),
        caller_id: caller_side.map(|e| e.id.clone()),
        difference_after: caller_amount.checked_sub(service_amount)?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn amt(units: i64) -> Amount {
        Amount::from_units(i128::from(units) * 10_000_000_000_000_000)
    }

    fn ledger(amounts: &[i64]) -> Vec<ServiceDelta> {
        amounts
            .iter()
            .enumerate()
            .map(|(k, a)| ServiceDelta {
                item_hash: Hash32::digest(format!("item {k}").as_bytes()),
                anchor_id: format!("anc_{k}"),
                reference_id: Some(format!("ref-{k}")),
                amount: amt(*a),
            })
            .collect()
    }

    /// The caller's copy, naming each delta by a rotating kind of id.
    fn copy(service: &[ServiceDelta]) -> Vec<CallerEntry> {
        service
            .iter()
            .enumerate()
            .map(|(k, d)| match k % 3 {
                0 => CallerEntry::new(Some(d.item_hash), None, None, d.amount),
                1 => CallerEntry::new(None, Some(&d.anchor_id), None, d.amount),
                _ => CallerEntry::new(
                    None,
                    None,
                    Some(ReferenceId::parse(d.reference_id.as_deref().unwrap()).unwrap()),
                    d.amount,
                ),
            })
            .map(Result::unwrap)
            .collect()
    }

    fn by_anchor(anchor: &str, units: i64) -> CallerEntry {
        CallerEntry::new(None, Some(anchor), None, amt(units)).unwrap()
    }

    #[test]
    fn equal_lists_agree_and_total_the_same() {
        let s = ledger(&[100, -1, -2, 1234]);
        let p = pinpoint(Start::ORIGIN, &s, &copy(&s)).unwrap();
        assert!(p.agrees());
        assert_eq!(p.service_balance, amt(1331));
        assert_eq!(p.caller_balance, amt(1331));
        assert_eq!(p.difference, Amount::ZERO);
        let empty = pinpoint(Start::ORIGIN, &[], &[]).unwrap();
        assert!(empty.agrees());
    }

    #[test]
    fn a_missing_delta_is_named_with_the_balance_before_it() {
        // 1 + 2 agreed, then the caller lacks the 4, then both have 8.
        let s = ledger(&[1, 2, 4, 8]);
        let mut c = copy(&s);
        c.remove(2);
        let start = Start {
            deltas: 10,
            balance: amt(100),
        };
        let p = pinpoint(start, &s, &c).unwrap();
        let d = p.divergence.unwrap();
        assert_eq!(d.kind, DivergenceKind::Missing);
        assert_eq!(d.agreed_deltas, 12);
        assert_eq!(d.agreed_balance, amt(103));
        assert_eq!(d.service.unwrap().anchor_id, "anc_2");
        assert_eq!(d.caller_index, None);
        assert_eq!(d.difference_after, amt(-4));
        assert_eq!(p.service_balance, amt(115));
        assert_eq!(p.caller_balance, amt(111));
        assert_eq!(p.difference, amt(-4));
    }

    #[test]
    fn an_extra_and_a_changed_delta_are_named() {
        let s = ledger(&[1, 2, 4]);
        let mut c = copy(&s);
        c.insert(1, by_anchor("anc_mine", 50));
        let d = pinpoint(Start::ORIGIN, &s, &c).unwrap().divergence.unwrap();
        assert_eq!(d.kind, DivergenceKind::Extra);
        assert_eq!((d.agreed_deltas, d.agreed_balance), (1, amt(1)));
        assert_eq!(d.caller_index, Some(1));
        assert_eq!(d.caller_id, Some(EntryId::AnchorId("anc_mine".into())));
        assert_eq!(d.service, None);
        assert_eq!(d.difference_after, amt(50));

        let mut c = copy(&s);
        c[2] = by_anchor("anc_2", 5);
        let p = pinpoint(Start::ORIGIN, &s, &c).unwrap();
        let d = p.divergence.unwrap();
        assert_eq!(d.kind, DivergenceKind::Changed);
        assert_eq!((d.agreed_deltas, d.agreed_balance), (2, amt(3)));
        assert_eq!(d.difference_after, amt(1));
        assert_eq!(p.difference, amt(1));
    }

    #[test]
    fn trailing_lists_are_missing_or_extra_and_swaps_are_reordered() {
        let s = ledger(&[1, 2]);
        let c = copy(&s[..1]);
        let d = pinpoint(Start::ORIGIN, &s, &c).unwrap().divergence.unwrap();
        assert_eq!((d.kind, d.agreed_deltas), (DivergenceKind::Missing, 1));
        let d = pinpoint(Start::ORIGIN, &s[..1], &copy(&s))
            .unwrap()
            .divergence
            .unwrap();
        assert_eq!((d.kind, d.agreed_deltas), (DivergenceKind::Extra, 1));
        let mut c = copy(&s);
        c.swap(0, 1);
        let p = pinpoint(Start::ORIGIN, &s, &c).unwrap();
        assert_eq!(p.divergence.unwrap().kind, DivergenceKind::Reordered);
        assert_eq!(p.difference, Amount::ZERO);
        // A substitution: the service's unknown delta is reported first.
        let c = vec![copy(&s).remove(0), by_anchor("anc_x", 2)];
        let d = pinpoint(Start::ORIGIN, &s, &c).unwrap().divergence.unwrap();
        assert_eq!(d.kind, DivergenceKind::Missing);
    }

    #[test]
    fn the_strongest_id_decides_and_unusable_lists_are_refused() {
        let s = ledger(&[1, 2]);
        // itemHash of delta 0 wins over an anchorId naming delta 1.
        let e = CallerEntry::new(Some(s[0].item_hash), Some("anc_1"), None, amt(1)).unwrap();
        assert_eq!(e.id(), &EntryId::ItemHash(s[0].item_hash));
        let c = vec![e, by_anchor("anc_1", 2)];
        assert!(pinpoint(Start::ORIGIN, &s, &c).unwrap().agrees());
        assert_eq!(
            CallerEntry::new(None, None, None, amt(1))
                .unwrap_err()
                .field,
            "itemHash"
        );
        let c = vec![by_anchor("anc_0", 1), by_anchor("anc_0", 1)];
        assert_eq!(
            pinpoint(Start::ORIGIN, &s, &c),
            Err(PinpointError::DuplicateEntry { index: 1, first: 0 })
        );
        let mut shared = ledger(&[1, 2]);
        shared[1].reference_id = Some("ref-0".into());
        let c = vec![CallerEntry::new(
            None,
            None,
            Some(ReferenceId::parse("ref-0").unwrap()),
            amt(1),
        )
        .unwrap()];
        assert_eq!(
            pinpoint(Start::ORIGIN, &shared, &c),
            Err(PinpointError::AmbiguousId {
                index: 0,
                field: "referenceId"
            })
        );
        let long = ledger(&vec![1; PINPOINT_ENTRIES_MAX + 1]);
        assert!(matches!(
            pinpoint(Start::ORIGIN, &long, &[]),
            Err(PinpointError::TooMany {
                side: "service",
                ..
            })
        ));
    }

    #[test]
    fn ten_thousand_deltas_pinpoint_a_missing_an_extra_and_a_changed_one() {
        let amounts: Vec<i64> = (0..10_000).map(|k| (k % 97) - 40).collect();
        let s = ledger(&amounts);
        let c = copy(&s);
        assert!(pinpoint(Start::ORIGIN, &s, &c).unwrap().agrees());
        let before = |k: usize| amt(amounts[..k].iter().sum());

        let mut missing = c.clone();
        missing.remove(7_001);
        // An extra entry on a 9,999-delta ledger keeps the caller's list
        // at the 10,000 limit.
        let mut extra = c[..9_999].to_vec();
        extra.insert(4_242, by_anchor("anc_mine", 3));
        let mut changed = c.clone();
        changed[9_998] = by_anchor("anc_9998", 1_000);
        for (service, list, kind, at) in [
            (&s[..], missing, DivergenceKind::Missing, 7_001),
            (&s[..9_999], extra, DivergenceKind::Extra, 4_242),
            (&s[..], changed, DivergenceKind::Changed, 9_998),
        ] {
            assert!(list.len() <= PINPOINT_ENTRIES_MAX);
            let d = pinpoint(Start::ORIGIN, service, &list)
                .unwrap()
                .divergence
                .unwrap();
            assert_eq!(d.kind, kind);
            assert_eq!(d.agreed_deltas, at as u64);
            assert_eq!(d.agreed_balance, before(at));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn one_injected_divergence_is_pinpointed_exactly(
            amounts in proptest::collection::vec(-1000i64..1000, 1..200),
            at in any::<prop::sample::Index>(),
            kind in 0usize..3,
            bump in 1i64..500,
            start_deltas in 0u64..1000,
            start_units in -1000i64..1000,
        ) {
            let s = ledger(&amounts);
            let mut c = copy(&s);
            let start = Start { deltas: start_deltas, balance: amt(start_units) };
            let k = at.index(s.len());
            let (want, diff) = match kind {
                0 => { c.remove(k); (DivergenceKind::Missing, -amounts[k]) }
                1 => { c.insert(k, by_anchor("anc_extra", bump)); (DivergenceKind::Extra, bump) }
                _ => {
                    c[k] = by_anchor(&s[k].anchor_id, amounts[k] + bump);
                    (DivergenceKind::Changed, bump)
                }
            };
            let p = pinpoint(start, &s, &c).unwrap();
            let d = p.divergence.clone().unwrap();
            prop_assert_eq!(d.kind, want);
            prop_assert_eq!(d.agreed_deltas, start_deltas + k as u64);
            let before: i64 = start_units + amounts[..k].iter().sum::<i64>();
            prop_assert_eq!(d.agreed_balance, amt(before));
            prop_assert_eq!(d.difference_after, amt(diff));
            prop_assert_eq!(p.difference, amt(diff));
            let total: i64 = start_units + amounts.iter().sum::<i64>();
            prop_assert_eq!(p.service_balance, amt(total));
            prop_assert_eq!(p.caller_balance, amt(total + diff));
        }
    }
}
