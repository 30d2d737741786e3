//! How big a sequencer round may be: pure planning, no D1, so a native unit
//! test holds every plan to D1's published limits (which `wrangler dev` does
//! not enforce). <https://developers.cloudflare.com/d1/platform/limits/>
//!
//! A round's cost is counted in queries (D1 counts each statement of a
//! batch) and in the bytes of its largest statement. The model is
//! conservative: it counts the statements the sequencer builds with the
//! same per-statement row counts the store uses (`store::chunked`).

use crate::store::events::NewEvent;
use crate::store::D1_BOUND_PARAMS_MAX;

/// D1: maximum SQL statement length, 100,000 bytes (we count the SQL text
/// and every bound value, which is stricter).
pub const D1_STATEMENT_BYTES_MAX: usize = 100_000;
/// D1: maximum string, BLOB or table row size, 1,000,000 bytes.
pub const D1_ROW_BYTES_MAX: usize = 1_000_000;
/// D1: queries per Worker invocation, 1,000 (Workers Paid).
pub const D1_QUERIES_PER_INVOCATION_MAX: usize = 1_000;

/// Our share of one invocation's queries for a sequencer run (rounds and
/// their retries); the rest is left to the webhook dispatch that follows
/// in the same invocation and to the request or consumer around it.
pub const RUN_QUERIES_MAX: usize = 700;
const _: () = assert!(RUN_QUERIES_MAX + 300 <= D1_QUERIES_PER_INVOCATION_MAX);
/// Queries of one round (its reads and its one atomic batch). Bounding the
/// round bounds its CPU time too (hashing, signing, JSON: linear in it).
pub const ROUND_QUERIES_MAX: usize = 400;
/// Bytes of the largest statement a round may build (margin under
/// [`D1_STATEMENT_BYTES_MAX`] for the SQL text).
pub const STATEMENT_BYTES_BUDGET: usize = D1_STATEMENT_BYTES_MAX - 10_000;
/// Items appended per round.
pub const ROUND_ITEMS_MAX: usize = 400;

/// Columns per row of the multi-row statements a round writes (see
/// `store::log` and `store::events`).
const HASH_COLS: usize = 2;
const LEAF_COLS: usize = 6;
const EVENT_COLS: usize = 5;
/// Bytes of one leaf row's values (index, 64-hex hash, kind, ref id up to
/// 64, tenant id, time) and of a ledger window row (its frontier is at most
/// 64 hashes of 64 hex).
const LEAF_ROW_BYTES: usize = 512;
const LEDGER_WINDOW_BYTES: usize = 64 * 65 + 1_024;
/// Everything in an event payload besides the item's own free text.
pub const EVENT_FIXED_BYTES: usize = 2_048;
/// Reads of a round besides the chunked ones: the head, the three queued
/// lists, the stored hashes the append and the root need (two batches of
/// at most two statements each).
const ROUND_FIXED_READS: usize = 8;

/// What an item costs a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemCost {
    /// The ledger (tenant, customer) a delta updates; `None` for facts and
    /// checkpoints.
    pub ledger: Option<(String, String)>,
    /// The tenant whose window a delta updates.
    pub tenant: Option<String>,
    /// The bytes of the event the item writes, `None` if it writes none.
    pub event_bytes: Option<usize>,
}

/// A round's cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundCost {
    pub queries: usize,
    pub largest_statement_bytes: usize,
    pub largest_row_bytes: usize,
}

impl RoundCost {
    /// Within D1's limits and the round's budget of `queries_max`.
    pub fn fits(&self, queries_max: usize) -> bool {
        self.queries <= queries_max.min(ROUND_QUERIES_MAX)
            && self.largest_statement_bytes <= STATEMENT_BYTES_BUDGET
            && self.largest_row_bytes <= D1_ROW_BYTES_MAX
    }
}

fn statements_for(rows: usize, cols: usize) -> usize {
    let per = D1_BOUND_PARAMS_MAX / cols;
    rows.div_ceil(per)
}

/// Groups consecutive rows of `sizes` bytes into statements of at most
/// `per_statement` rows and [`STATEMENT_BYTES_BUDGET`] bytes (a row larger
/// than that is alone). Returns each group's `(start, end)`.
pub fn pack_by_bytes(sizes: &[usize], per_statement: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, size) in sizes.iter().enumerate() {
        let rows = i - start;
        if rows > 0 && (rows >= per_statement || bytes + size > STATEMENT_BYTES_BUDGET) {
            out.push((start, i));
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < sizes.len() {
        out.push((start, sizes.len()));
    }
    out
}

/// Rows per multi-row event insert.
pub const EVENTS_PER_STATEMENT: usize = D1_BOUND_PARAMS_MAX / EVENT_COLS;

/// `events` in consecutive groups that each fit one multi-row insert
/// ([`EVENTS_PER_STATEMENT`] rows, [`STATEMENT_BYTES_BUDGET`] bytes):
/// each group's `(start, end)`.
pub fn event_groups(events: &[NewEvent]) -> Vec<(usize, usize)> {
    let sizes: Vec<usize> = events
        .iter()
        .map(|e| e.payload.len() + e.id.len() + e.tenant_id.len() + e.kind.len() + 32)
        .collect();
    pack_by_bytes(&sizes, EVENTS_PER_STATEMENT)
}

/// The cost of appending `items` in one round.
pub fn round_cost(items: &[ItemCost]) -> RoundCost {
    let n = items.len();
    let mut ledgers: Vec<&(String, String)> =
        items.iter().filter_map(|i| i.ledger.as_ref()).collect();
    ledgers.sort();
    ledgers.dedup();
    let mut tenants: Vec<&String> = items.iter().filter_map(|i| i.tenant.as_ref()).collect();
    tenants.sort();
    tenants.dedup();
    let events: Vec<usize> = items.iter().filter_map(|i| i.event_bytes).collect();
    let event_statements = pack_by_bytes(&events, EVENTS_PER_STATEMENT);
    let largest_event_statement = event_statements
        .iter()
        .map(|(a, b)| events[*a..*b].iter().sum::<usize>())
        .max()
        .unwrap_or(0);
    let l = ledgers.len();
    let t = tenants.len();
    // Reads: ledgers by key (2 columns), their window frontiers (2 columns
    // after the window), tenant windows (1 column after the window).
    let reads = ROUND_FIXED_READS
        + statements_for(l, 2)
        + (l * 2).div_ceil(D1_BOUND_PARAMS_MAX - 1)
        + t.div_ceil(D1_BOUND_PARAMS_MAX - 1);
    // Writes: an append of n leaves writes at most 2n stored hashes; the
    // leaves; one mark per item; two statements per ledger; one per tenant
    // window; the events; the head.
    let writes = statements_for(2 * n, HASH_COLS)
        + statements_for(n, LEAF_COLS)
        + n
        + 2 * l
        + t
        + event_statements.len()
        + 1;
    let largest_statement_bytes = largest_event_statement
        .max((D1_BOUND_PARAMS_MAX / LEAF_COLS) * LEAF_ROW_BYTES)
        .max(LEDGER_WINDOW_BYTES);
    let largest_row_bytes = events
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(LEDGER_WINDOW_BYTES);
    RoundCost {
        queries: reads + writes,
        largest_statement_bytes,
        largest_row_bytes,
    }
}

/// What the next round takes of the queued items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// The first `n` items (n >= 1).
    Items(usize),
    /// The first item does not fit D1's size limits even alone: it can
    /// never be appended.
    TooLarge,
    /// Nothing is queued, or the run's query budget is spent.
    Nothing,
}

/// The next round of `items` within `queries_left`: see [`Take`].
pub fn plan(items: &[ItemCost], queries_left: usize) -> Take {
    match take(items, queries_left) {
        0 if items.is_empty() => Take::Nothing,
        0 => {
            let alone = round_cost(&items[..1]);
            let queries_ok = alone.queries <= queries_left.min(ROUND_QUERIES_MAX);
            if queries_ok && !alone.fits(queries_left) {
                Take::TooLarge
            } else {
                Take::Nothing
            }
        }
        n => Take::Items(n),
    }
}

/// How many of the queued `items` (in order) the next round takes: the
/// longest prefix of at most [`ROUND_ITEMS_MAX`] whose cost fits in
/// `queries_left`; 0 when not even one does.
pub fn take(items: &[ItemCost], queries_left: usize) -> usize {
    let most = items.len().min(ROUND_ITEMS_MAX);
    // Cost grows with the prefix: binary search the longest that fits.
    let (mut lo, mut hi) = (0, most);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if round_cost(&items[..mid]).fits(queries_left) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use bvs_core::types::METADATA_BYTES_MAX;

    fn delta(tenant: usize, customer: usize, bytes: usize) -> ItemCost {
        ItemCost {
            ledger: Some((format!("t{tenant}"), format!("c{customer}"))),
            tenant: Some(format!("t{tenant}")),
            event_bytes: Some(bytes),
        }
    }

    fn fact() -> ItemCost {
        ItemCost {
            ledger: None,
            tenant: None,
            event_bytes: None,
        }
    }

    /// The largest delta event: the largest metadata, reason, reference
    /// and customer id, JSON-escaped at worst (6 bytes per char).
    /// (Metadata is a JSON value inside the payload: copied, not escaped.)
    const MAX_DELTA_EVENT: usize = METADATA_BYTES_MAX + 500 * 6 + 128 * 6 * 2 + EVENT_FIXED_BYTES;

    /// Plans every round of a run over `queue` and checks each against D1's
    /// limits and the run's query budget. Returns the rounds' sizes.
    fn plan_all(queue: &[ItemCost]) -> Vec<usize> {
        let mut rounds = Vec::new();
        let mut left = RUN_QUERIES_MAX;
        let mut at = 0;
        while at < queue.len() {
            let n = take(&queue[at..], left);
            if n == 0 {
                break;
            }
            let cost = round_cost(&queue[at..at + n]);
            assert!(cost.queries <= ROUND_QUERIES_MAX, "{cost:?}");
            assert!(cost.queries <= left, "{cost:?} over {left}");
            assert!(
                cost.largest_statement_bytes <= D1_STATEMENT_BYTES_MAX,
                "{cost:?}"
            );
            assert!(cost.largest_row_bytes <= D1_ROW_BYTES_MAX, "{cost:?}");
            assert!(n <= ROUND_ITEMS_MAX);
            left -= cost.queries;
            rounds.push(n);
            at += n;
        }
        assert!(RUN_QUERIES_MAX - left <= D1_QUERIES_PER_INVOCATION_MAX);
        rounds
    }

    #[test]
    fn many_customers_split_into_rounds_within_the_query_limits() {
        let queue: Vec<ItemCost> = (0..5_000).map(|i| delta(i % 7, i, 300)).collect();
        let rounds = plan_all(&queue);
        assert!(rounds.len() >= 2, "{rounds:?}");
        assert!(rounds.iter().all(|n| *n > 50), "{rounds:?}");
    }

    #[test]
    fn maximal_events_are_packed_under_the_statement_size_limit() {
        let queue: Vec<ItemCost> = (0..2_000)
            .map(|i| delta(0, i % 3, MAX_DELTA_EVENT))
            .collect();
        let rounds = plan_all(&queue);
        assert!(!rounds.is_empty());
        let events = vec![MAX_DELTA_EVENT; 400];
        for (a, b) in pack_by_bytes(&events, EVENTS_PER_STATEMENT) {
            assert!(events[a..b].iter().sum::<usize>() <= D1_STATEMENT_BYTES_MAX);
            assert!(b - a <= EVENTS_PER_STATEMENT);
        }
    }

    #[test]
    fn many_deltas_of_one_ledger_and_facts_take_full_rounds() {
        let mut queue: Vec<ItemCost> = (0..1_000).map(|_| delta(1, 1, 400)).collect();
        queue.extend((0..1_000).map(|_| fact()));
        let rounds = plan_all(&queue);
        assert!(rounds[0] > 300, "{rounds:?}");
        let facts: Vec<ItemCost> = (0..1_000).map(|_| fact()).collect();
        let rounds = plan_all(&facts);
        assert!(rounds[0] > 300, "{rounds:?}");
    }

    #[test]
    fn an_event_over_the_statement_budget_is_alone_and_an_empty_budget_takes_nothing() {
        assert_eq!(
            pack_by_bytes(&[10, 95_000, 10], 20),
            vec![(0, 1), (1, 2), (2, 3)]
        );
        assert_eq!(pack_by_bytes(&[], 20), Vec::<(usize, usize)>::new());
        assert_eq!(take(&[delta(0, 0, 10)], 5), 0);
        assert_eq!(take(&[delta(0, 0, 10)], RUN_QUERIES_MAX), 1);
        assert_eq!(plan(&[], RUN_QUERIES_MAX), Take::Nothing);
        assert_eq!(plan(&[delta(0, 0, 10)], 5), Take::Nothing);
        let huge = [delta(0, 0, D1_STATEMENT_BYTES_MAX), delta(0, 1, 10)];
        assert_eq!(plan(&huge, RUN_QUERIES_MAX), Take::TooLarge);
        assert_eq!(plan(&huge[1..], RUN_QUERIES_MAX), Take::Items(1));
    }
}
