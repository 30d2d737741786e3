//! The sequencer's set-based evaluation of conditions (core's `Book`, one
//! per round over the positions the round read) against a one-delta-at-a-
//! time model written here from docs/balance.md "Conditions", sharing no
//! code with core: integers for amounts, its own rules.
//!
//! The model's rules, as the doc states them: per ledger and asset, in
//! ledger order; `expectedSequence` must equal the number of verified
//! deltas so far (refusals not counted), checked first; a debit (< 0) must
//! leave the balance ≥ its own `balanceAtLeast`, else ≥ the tenant's
//! default floor of the asset when there is one; a credit is never refused
//! by a floor; a refused delta changes nothing.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use bvs_core::amount::Amount;
use bvs_core::conditions::{Book, Conditions, Position, Refusal};
use bvs_core::hash::Hash32;
use bvs_core::types::Asset;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Op {
    ledger: u8,
    asset: u8,
    delta: i64,
    floor: Option<i64>,
    lock: Option<u64>,
}

/// `(sequence, balance)` per (ledger, asset): the model's state.
type State = BTreeMap<(u8, u8), (u64, i64)>;

/// The model: `Some(code)` for a refused op.
fn model(state: &mut State, op: &Op, defaults: &BTreeMap<u8, i64>) -> Option<&'static str> {
    let (seq, balance) = state.get(&(op.ledger, op.asset)).copied().unwrap_or((0, 0));
    if let Some(lock) = op.lock {
        if lock != seq {
            return Some("sequence_mismatch");
        }
    }
    let floor = op.floor.or_else(|| defaults.get(&op.asset).copied());
    if let Some(floor) = floor {
        if op.delta < 0 && balance + op.delta < floor {
            return Some("balance_below_floor");
        }
    }
    state.insert((op.ledger, op.asset), (seq + 1, balance + op.delta));
    None
}

fn amount(n: i64) -> Amount {
    Amount::parse(&n.to_string()).unwrap()
}

fn asset(a: u8) -> Asset {
    match a {
        0 => Asset::Default,
        n => Asset::parse("asset", &format!("A{n}/0")).unwrap(),
    }
}

fn op() -> impl Strategy<Value = Op> {
    (
        0u8..3,
        0u8..3,
        -60i64..40,
        prop::option::weighted(0.4, -30i64..10),
        prop::option::weighted(0.3, 0u64..6),
    )
        .prop_map(|(ledger, asset, delta, floor, lock)| Op {
            ledger,
            asset,
            delta,
            floor,
            lock,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn rounds_of_any_size_equal_one_delta_at_a_time(
        ops in prop::collection::vec(op(), 1..60),
        cuts in prop::collection::vec(1usize..12, 1..20),
        defaults in prop::collection::btree_map(0u8..3, -20i64..5, 0..3),
    ) {
        let mut state = State::new();
        let expected: Vec<Option<&str>> = ops.iter().map(|o| model(&mut state, o, &defaults)).collect();

        // Rounds: each reads the positions the previous ones left, then
        // offers its deltas in order to one Book.
        let mut stored: BTreeMap<(u8, u8), Position> = BTreeMap::new();
        let mut got = Vec::new();
        let (mut at, mut cut) = (0, 0);
        while at < ops.len() {
            let n = cuts[cut % cuts.len()].min(ops.len() - at);
            cut += 1;
            let mut book = Book::new(stored.clone());
            for o in &ops[at..at + n] {
                let own = Conditions {
                    balance_at_least: o.floor.map(amount),
                    expected_sequence: o.lock,
                };
                let default = defaults.get(&o.asset).copied().map(amount);
                match book.offer(&(o.ledger, o.asset), amount(o.delta), &own, default) {
                    Ok(after) => {
                        stored.insert((o.ledger, o.asset), after);
                        got.push(None);
                    }
                    Err((failed, met)) => {
                        // The refusal it becomes follows from its own fields.
                        let r = Refusal {
                            item_hash: Hash32::digest(&[at as u8]),
                            customer_id: format!("cus_{}", o.ledger),
                            asset: asset(o.asset),
                            delta: amount(o.delta),
                            failed,
                            at: met,
                        };
                        prop_assert!(r.is_justified(), "{r:?}");
                        let (seq, balance) = state_before(&ops[..got.len()], o, &defaults);
                        prop_assert_eq!(met, Position { sequence: seq, balance: amount(balance) });
                        got.push(Some(failed.code().as_str()));
                    }
                }
            }
            at += n;
        }
        prop_assert_eq!(got, expected);
        for ((ledger, a), (seq, balance)) in &state {
            let p = stored.get(&(*ledger, *a)).copied().unwrap_or_default();
            prop_assert_eq!(p, Position { sequence: *seq, balance: amount(*balance) });
        }
    }
}

/// The model's position of `o`'s ledger after `before`.
fn state_before(before: &[Op], o: &Op, defaults: &BTreeMap<u8, i64>) -> (u64, i64) {
    let mut state = State::new();
    for b in before {
        model(&mut state, b, defaults);
    }
    state.get(&(o.ledger, o.asset)).copied().unwrap_or((0, 0))
}
