//! A sequencer run's state across its rounds (its query budget, what it
//! appended, what it set aside) and what a round takes of the queue's
//! candidates within that budget (`budget::plan`).

use std::collections::BTreeSet;

use crate::sequencer::budget;
use crate::sequencer::queue::{costs, Item};

/// Queries a run keeps for marking isolated items FAILED.
const FAIL_QUERIES: usize = 3;

/// A run's state across its rounds.
pub struct Run {
    pub queries_left: usize,
    pub appended: u64,
    /// Some round of this run committed: the database takes writes.
    pub committed: bool,
    /// Items that failed alone, with why, and whether the failure is the
    /// item's for certain (too large) rather than judged by the run.
    pub isolated: Vec<(Item, String, bool)>,
    /// Keys of items not to read again in this run.
    pub skip: BTreeSet<String>,
    /// Items are left that the budget did not reach.
    pub more: bool,
    /// Where the next round's fair shares start (`queue`).
    pub cursor: String,
}

impl Run {
    pub fn new() -> Run {
        Run {
            queries_left: budget::RUN_QUERIES_MAX,
            appended: 0,
            committed: false,
            isolated: Vec::new(),
            skip: BTreeSet::new(),
            more: false,
            cursor: String::new(),
        }
    }

    /// Spends `queries` of the run's budget, keeping what marking the
    /// isolated items FAILED takes; `false` (items are left) if they do
    /// not fit.
    pub fn spend(&mut self, queries: usize) -> bool {
        if queries + FAIL_QUERIES > self.queries_left {
            self.more = true;
            return false;
        }
        self.queries_left -= queries;
        true
    }
}

/// What a round takes of the queue's candidates.
pub enum Taken {
    Items(Vec<Item>),
    /// The first can never be appended: set aside to be FAILED.
    SetAside,
    /// Nothing queued, or the run's budget is spent.
    Nothing,
}

/// The candidates that fit the round and what is left of the run's budget
/// (`budget::plan`).
pub fn take(run: &mut Run, mut items: Vec<Item>) -> Taken {
    if items.is_empty() {
        return Taken::Nothing;
    }
    match budget::plan(
        &costs(&items),
        run.queries_left.saturating_sub(FAIL_QUERIES),
    ) {
        budget::Take::Items(n) => {
            items.truncate(n);
            Taken::Items(items)
        }
        budget::Take::TooLarge => {
            // It can never be appended: set it aside to be FAILED, and go on.
            items.truncate(1);
            for item in items {
                run.skip.insert(item.key());
                let message = "the item is larger than one D1 statement allows".to_string();
                run.isolated.push((item, message, true));
            }
            Taken::SetAside
        }
        budget::Take::Nothing => {
            run.more = true;
            Taken::Nothing
        }
    }
}
