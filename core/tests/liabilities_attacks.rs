//! A dishonest vendor against the customers who check (issue 31): each
//! published attack on liabilities trees is built here with the tree's raw
//! hash functions, logged like an honest statement, and handed to every
//! customer as a proof document. Each attack must fail the proof of every
//! customer whose path touches the change, and, whatever passes, the
//! published total is at least the sum of what is owed to the customers
//! whose proofs pass (the guarantee docs/liabilities.md states).
#![cfg(all(feature = "server", feature = "liabilities"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::liabilities::proof::{verify_proof, Checker};
use bvs_core::liabilities::sample::log_statement;
use bvs_core::liabilities::{
    leaf_hash, ledger_id, node_hash, root_hash, LeafProof, LogEvidence, ProofDocument, Salt, Seed,
    Statement, SumNode, TreeKind, TreeSummary, AMOUNT_WHOLE_MAX, EMPTY_TOP,
};
use bvs_core::types::CustomerId;
use bvs_core::types::{Env, Period};
use bvs_core::{Amount, Hash32};
use std::collections::{BTreeMap, BTreeSet};

const TENANT: &str = "ten_attacks";
const ORIGIN: &str = "bvs.example/log/sandbox";
const KEY_SEED: [u8; 32] = [0x42; 32];
const L: TreeKind = TreeKind::Liabilities;

fn amount(s: &str) -> Amount {
    Amount::parse(s).unwrap()
}

struct Customer {
    id: String,
    ledger: Hash32,
    salt: Salt,
    balance: Amount,
}

fn customers(n: usize) -> Vec<Customer> {
    let seed = Seed([9; 32]);
    (0..n)
        .map(|i| {
            let id = format!("cust_{i:02}");
            let ledger = ledger_id(TENANT, &id);
            Customer {
                salt: seed.salt(L, &ledger),
                balance: Amount::from_int(10 + (i as i64 * 37) % 90).unwrap(),
                id,
                ledger,
            }
        })
        .collect()
}

/// A liabilities tree as a dishonest vendor builds it: any leaves (even
/// negative ones), nodes whose stated sum is not their children's, sums
/// added with wrapping arithmetic, and any leaf count in the statement.
struct Evil {
    leaves: Vec<SumNode>,
    /// Which customer each leaf belongs to (none for a fake leaf).
    owner: Vec<Option<usize>>,
    /// A node over leaves `[lo, hi)` that states this sum instead.
    lie: BTreeMap<(usize, usize), Amount>,
}

impl Evil {
    /// Every customer with a leaf of its balance, in order.
    fn honest(cs: &[Customer]) -> Evil {
        Evil {
            leaves: cs
                .iter()
                .map(|c| SumNode {
                    hash: leaf_hash(L, &c.salt, &c.ledger, c.balance),
                    sum: c.balance,
                })
                .collect(),
            owner: (0..cs.len()).map(Some).collect(),
            lie: BTreeMap::new(),
        }
    }

    fn node(&self, lo: usize, hi: usize) -> SumNode {
        if hi - lo == 1 {
            return self.leaves[lo];
        }
        let k = (hi - lo).next_power_of_two() / 2;
        let (l, r) = (self.node(lo, lo + k), self.node(lo + k, hi));
        let sum =
            self.lie.get(&(lo, hi)).copied().unwrap_or_else(|| {
                Amount::from_units(l.sum.to_units().wrapping_add(r.sum.to_units()))
            });
        SumNode {
            hash: node_hash(L, &l, &r),
            sum,
        }
    }

    fn top(&self) -> SumNode {
        if self.leaves.is_empty() {
            EMPTY_TOP
        } else {
            self.node(0, self.leaves.len())
        }
    }

    /// RFC 9162 PATH of leaf `m`, leaf side first, with the stated sums.
    fn path(&self, m: usize) -> Vec<SumNode> {
        let mut out = Vec::new();
        let (mut lo, mut hi) = (0, self.leaves.len());
        while hi - lo > 1 {
            let k = (hi - lo).next_power_of_two() / 2;
            if m < lo + k {
                out.push(self.node(lo + k, hi));
                hi = lo + k;
            } else {
                out.push(self.node(lo, lo + k));
                lo += k;
            }
        }
        out.reverse();
        out
    }
}

/// What the vendor publishes and hands out.
struct Published {
    statement: Statement,
    key: String,
    log: LogEvidence,
}

fn publish(evil: &Evil) -> Published {
    let top = evil.top();
    let count = evil.leaves.len() as u64;
    let statement = Statement::new(
        TENANT,
        Env::Sandbox,
        Period::parse("2026-11").unwrap(),
        TreeSummary {
            root: root_hash(L, &top, count),
            total: top.sum,
            leaf_count: count,
        },
        TreeSummary {
            root: root_hash(TreeKind::Receivables, &EMPTY_TOP, 0),
            total: Amount::ZERO,
            leaf_count: 0,
        },
        None,
    )
    .unwrap();
    let (key, log) = log_statement(ORIGIN, &KEY_SEED, &statement.item_hash(), 3).unwrap();
    Published {
        statement,
        key,
        log,
    }
}

fn document(
    p: &Published,
    c: &Customer,
    index: usize,
    amount: Amount,
    path: Vec<SumNode>,
) -> ProofDocument {
    ProofDocument {
        statement: p.statement.clone(),
        statement_hash: p.statement.item_hash(),
        customer_id: Some(c.id.clone()),
        ledger_id: c.ledger,
        balance: c.balance,
        liabilities: LeafProof {
            index: index as u64,
            salt: c.salt,
            amount,
            path,
        },
        receivables: None,
        log: Some(p.log.clone()),
    }
}

/// Every customer's proof as the vendor hands it out (a customer the tree
/// omits is handed `omitted(customer)`), checked by the customer against
/// its own balance and the pinned log key. Returns who failed, and checks
/// the guarantee over those who passed.
fn check_everyone(
    cs: &[Customer],
    evil: &Evil,
    omitted: impl Fn(&Published, &Customer) -> ProofDocument,
) -> BTreeSet<usize> {
    let p = publish(evil);
    let mut failed = BTreeSet::new();
    let mut passed_owed = Amount::ZERO;
    for (i, c) in cs.iter().enumerate() {
        let doc = match evil.owner.iter().position(|o| *o == Some(i)) {
            Some(m) => document(&p, c, m, evil.leaves[m].sum, evil.path(m)),
            None => omitted(&p, c),
        };
        let me = CustomerId::parse(&c.id).unwrap();
        let report = verify_proof(&doc, Checker::Customer(&me), Some(&p.key), Some(c.balance));
        if report.ok {
            passed_owed = passed_owed.checked_add(c.balance).unwrap();
        } else {
            failed.insert(i);
        }
    }
    assert!(
        p.statement.liabilities.total >= passed_owed,
        "the guarantee: the total {} covers the {} owed to the customers who passed",
        p.statement.liabilities.total,
        passed_owed
    );
    failed
}

fn no_omission(_: &Published, _: &Customer) -> ProofDocument {
    unreachable!("every customer has a leaf")
}

#[test]
fn an_honest_statement_passes_every_customer() {
    let cs = customers(11);
    let evil = Evil::honest(&cs);
    assert!(check_everyone(&cs, &evil, no_omission).is_empty());
}

#[test]
fn omitting_a_customer_fails_that_customer_whatever_proof_it_is_handed() {
    let cs = customers(11);
    let omitted = 4;
    let mut evil = Evil::honest(&cs);
    evil.leaves.remove(omitted);
    evil.owner.remove(omitted);
    // The vendor hands the omitted customer another customer's place ...
    let failed = check_everyone(&cs, &evil, |p, c| {
        document(p, c, 0, c.balance, evil.path(0))
    });
    assert_eq!(failed, BTreeSet::from([omitted]));
    // ... or a place past the end, or the path of a place with its amount.
    let failed = check_everyone(&cs, &evil, |p, c| {
        document(
            p,
            c,
            evil.leaves.len(),
            c.balance,
            evil.path(evil.leaves.len() - 1),
        )
    });
    assert_eq!(failed, BTreeSet::from([omitted]));
    let failed = check_everyone(&cs, &evil, |p, c| {
        document(p, c, 3, c.balance, evil.path(3))
    });
    assert_eq!(failed, BTreeSet::from([omitted]));
}

#[test]
fn changing_an_amount_fails_the_customer_whose_leaf_it_is() {
    let cs = customers(11);
    let changed = 6;
    let mut evil = Evil::honest(&cs);
    let c = &cs[changed];
    let less = c.balance.checked_sub(amount("5")).unwrap();
    evil.leaves[changed] = SumNode {
        hash: leaf_hash(L, &c.salt, &c.ledger, less),
        sum: less,
    };
    assert_eq!(
        check_everyone(&cs, &evil, no_omission),
        BTreeSet::from([changed])
    );

    // Claiming the customer's balance is the smaller amount does not help:
    // the customer checks against its own balance (its receipt).
    let p = publish(&evil);
    let mut doc = document(&p, c, changed, less, evil.path(changed));
    doc.balance = less;
    let me = CustomerId::parse(&c.id).unwrap();
    let r = verify_proof(&doc, Checker::Customer(&me), Some(&p.key), Some(c.balance));
    assert_eq!(r.first_failure().unwrap().name, "balance");
}

#[test]
fn a_negative_leaf_fails_every_customer_whose_path_shows_a_negative_sum() {
    let cs = customers(11);
    let mut evil = Evil::honest(&cs);
    // A fake customer owing 60 next to customer 8, netted against the rest.
    let at = 9;
    let fake = Hash32::digest(b"fake ledger");
    let minus = amount("-60");
    evil.leaves.insert(
        at,
        SumNode {
            hash: leaf_hash(L, &Salt([1; 32]), &fake, minus),
            sum: minus,
        },
    );
    evil.owner.insert(at, None);
    let shows_negative: BTreeSet<usize> = (0..evil.leaves.len())
        .filter_map(|m| {
            let owner = evil.owner[m]?;
            evil.path(m)
                .iter()
                .any(|s| s.sum.signum() < 0)
                .then_some(owner)
        })
        .collect();
    // Its leaf neighbour sees it directly.
    assert!(shows_negative.contains(&8), "{shows_negative:?}");
    let failed = check_everyone(&cs, &evil, no_omission);
    assert_eq!(failed, shows_negative);

    // Nor can the vendor give a customer's own leaf a negative amount.
    let mut evil = Evil::honest(&cs);
    let c = &cs[2];
    evil.leaves[2] = SumNode {
        hash: leaf_hash(L, &c.salt, &c.ledger, minus),
        sum: minus,
    };
    assert!(check_everyone(&cs, &evil, no_omission).contains(&2));
}

#[test]
fn a_sum_that_does_not_match_its_children_fails_every_customer_under_it() {
    let cs = customers(11);
    // Every node of an 11-leaf tree, each shrunk in turn.
    let mut nodes = Vec::new();
    fn walk(lo: usize, hi: usize, out: &mut Vec<(usize, usize)>) {
        if hi - lo > 1 {
            out.push((lo, hi));
            let k = (hi - lo).next_power_of_two() / 2;
            walk(lo, lo + k, out);
            walk(lo + k, hi, out);
        }
    }
    walk(0, cs.len(), &mut nodes);
    for (lo, hi) in nodes {
        let mut evil = Evil::honest(&cs);
        let honest = evil.node(lo, hi).sum;
        let smaller = honest.checked_sub(amount("1")).unwrap();
        evil.lie.insert((lo, hi), smaller);
        let under: BTreeSet<usize> = (lo..hi).collect();
        assert_eq!(
            check_everyone(&cs, &evil, no_omission),
            under,
            "node [{lo}, {hi})"
        );
    }
}

#[test]
fn an_overflowing_sum_fails_every_customer_whose_path_meets_it() {
    let cs = customers(11);
    let honest = Evil::honest(&cs).top().sum;
    let mut evil = Evil::honest(&cs);
    // Three fake leaves whose sum, added with wrapping i128 arithmetic, is
    // 2^128 - 100: the total comes out 100 lower than what is owed, and
    // every amount the statement shows looks fine (the overflow that
    // Summa's range checks and Binance's missing one are about).
    let target: u128 = 0u128.wrapping_sub(100 * 1_000_000_000_000_000_000);
    let third = target / 3;
    let fakes = [third, third, target - 2 * third];
    for (k, f) in fakes.iter().enumerate() {
        let sum = Amount::from_units(i128::try_from(*f).unwrap());
        evil.leaves.insert(
            3 + k,
            SumNode {
                hash: leaf_hash(L, &Salt([2; 32]), &Hash32::digest(&[k as u8]), sum),
                sum,
            },
        );
        evil.owner.insert(3 + k, None);
    }
    let top = evil.top();
    assert_eq!(
        top.sum,
        honest.checked_sub(amount("100")).unwrap(),
        "the wrapped total understates by 100"
    );
    let max = Amount::from_units(AMOUNT_WHOLE_MAX * 1_000_000_000_000_000_000);
    let out_of_range = |s: &SumNode| s.sum.signum() < 0 || s.sum > max;
    let sees_it: BTreeSet<usize> = (0..evil.leaves.len())
        .filter_map(|m| {
            let owner = evil.owner[m]?;
            evil.path(m).iter().any(out_of_range).then_some(owner)
        })
        .collect();
    // The fakes' neighbours see them directly.
    assert!(sees_it.contains(&2) && sees_it.contains(&3), "{sees_it:?}");
    let failed = check_everyone(&cs, &evil, no_omission);
    assert_eq!(failed, sees_it);
}

#[test]
fn showing_two_customers_different_sums_for_one_node_fails_one_of_them() {
    // Maxwell's flaw (Hu, Zhang and Guo): a node that commits only to its
    // total lets the vendor show customer 4 its sibling 5 with a sum of 0
    // and customer 5 its own amount, shrinking the total by customer 5's
    // balance. Here a node commits to both children's sums, so the hash
    // customer 4 recomputes (sibling sum 0) and the one customer 5
    // recomputes (its own amount) cannot both be the published node.
    let cs = customers(11);
    let mut evil = Evil::honest(&cs);
    evil.leaves[5].sum = Amount::ZERO;
    let failed = check_everyone(&cs, &evil, no_omission);
    assert_eq!(failed, BTreeSet::from([5]));
    // The other way round, customer 4 is shown customer 5's true sum and
    // customer 5 is shown 0 as customer 4's: the published node then
    // commits to one of the two views, and the other customer fails.
    let mut evil = Evil::honest(&cs);
    evil.leaves[4].sum = Amount::ZERO;
    assert_eq!(check_everyone(&cs, &evil, no_omission), BTreeSet::from([4]));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Any mix of the attacks above: the total still covers what is owed to
    /// every customer whose proof passes (`check_everyone` asserts it), and
    /// a customer whose own leaf was dropped or changed never passes.
    #[test]
    fn whatever_the_vendor_does_the_total_covers_the_customers_who_pass(
        ops in proptest::collection::vec((0u8..4, 0usize..64, 1i64..200), 1..4)
    ) {
        let cs = customers(13);
        let mut evil = Evil::honest(&cs);
        let mut touched = BTreeSet::new();
        for (op, at, x) in ops {
            let n = evil.leaves.len();
            match op {
                0 if n > 1 => {
                    let m = at % n;
                    if let Some(o) = evil.owner[m] { touched.insert(o); }
                    evil.leaves.remove(m);
                    evil.owner.remove(m);
                    evil.lie.clear();
                }
                1 => {
                    let m = at % n;
                    evil.leaves[m].sum = Amount::from_int(x).unwrap();
                    if let Some(o) = evil.owner[m] { touched.insert(o); }
                }
                2 => {
                    let sum = Amount::from_int(-x).unwrap();
                    evil.leaves.insert(at % (n + 1), SumNode {
                        hash: leaf_hash(L, &Salt([3; 32]), &Hash32::digest(&x.to_be_bytes()), sum),
                        sum,
                    });
                    evil.owner.insert(at % (n + 1), None);
                    evil.lie.clear();
                }
                _ if n > 1 => {
                    let lo = at % (n - 1);
                    let hi = lo + 2;
                    if lo.is_multiple_of(2) {
                        let s = evil.node(lo, hi).sum.checked_sub(Amount::from_int(x).unwrap()).unwrap();
                        evil.lie.insert((lo, hi), s);
                    }
                }
                _ => {}
            }
        }
        if evil.top().sum.signum() < 0 || evil.top().sum > Amount::from_int(1_000_000).unwrap() {
            // Not publishable: Statement::new refuses a negative total.
            return Ok(());
        }
        let failed = check_everyone(&cs, &evil, |p, c| {
            let m = evil.leaves.len() - 1;
            document(p, c, m, c.balance, evil.path(m))
        });
        for t in touched {
            // A changed leaf can land on the customer's own amount again
            // (x equal to its balance): only a real change must fail.
            let still_honest = evil.owner.iter().position(|o| *o == Some(t)).is_some_and(|m| {
                evil.leaves[m].sum == cs[t].balance
            });
            if !still_honest {
                proptest::prop_assert!(failed.contains(&t), "customer {t} passed: {failed:?}");
            }
        }
    }
}
