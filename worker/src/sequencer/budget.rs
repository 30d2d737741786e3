//! How big a sequencer round may be: pure planning, no D1, so a native unit
//! test holds every plan to D1's published limits (which `wrangler dev` does
//! not enforce). <https://developers.cloudflare.com/d1/platform/limits/>
//!
//! A round is set-based (issue 27, `sequencer::round`): each table is written
//! with one statement per JSON set, a set being at most
//! [`JSON_PARAM_BYTES_MAX`] bytes (one value, under D1's largest string);
//! tiles with multi-row inserts of at most 100 bound parameters. So a
//! round's queries grow with the bytes it writes, not with its items,
//! ledgers or tenants. The model counts them from each item's bytes,
//! conservatively (every set may leave room for its largest row unused).
//! A round's CPU time (hashing, signing, JSON) grows with its items, which
//! [`ROUND_ITEMS_MAX`] bounds.

use bvs_core::types::CustomerId;

use crate::ids::TenantId;
use crate::store::{D1_BOUND_PARAMS_MAX, JSON_PARAM_BYTES_MAX};

/// D1: maximum SQL statement length, 100,000 bytes (the SQL text; every
/// statement of a round is a constant or a tile insert's placeholders).
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
/// Queries of one round's attempt (its reads and its one atomic batch).
pub const ROUND_QUERIES_MAX: usize = 100;
/// Items appended per round: bounds its CPU time (a round's hashing,
/// signing and JSON grow with it) and how long a tenant's new delta waits
/// behind another's round (bench/README.md, "throughput").
pub const ROUND_ITEMS_MAX: usize = 1_000;
/// The largest value a round binds: a JSON set (the SQL text is constant).
pub const VALUE_BYTES_MAX: usize = JSON_PARAM_BYTES_MAX;
const _: () = assert!(VALUE_BYTES_MAX < D1_ROW_BYTES_MAX);

/// Everything in an event payload besides the item's own free text.
pub const EVENT_FIXED_BYTES: usize = 2_048;
/// Bytes of one row of each JSON set, at most: a leaf (index, 64-hex hash,
/// kind, ref id up to 64, tenant id), a delta's mark (anchor id, index,
/// sequence, balance), a ledger's aggregates, a ledger or tenant window
/// (its frontier is at most 64 hashes of 64 hex), a backlog release, a
/// fact's or checkpoint's mark, a proof root.
const LEAF_JSON: usize = 300;
const MARK_JSON: usize = 200;
const LEDGER_JSON: usize = 400;
const WINDOW_JSON: usize = 64 * 65 + 600;
const TENANT_JSON: usize = 100;
const ROOT_JSON: usize = 70;
/// Reads of an attempt: the ledgers, their frontiers, the tenant windows
/// and the log's tiles (one batch).
const ATTEMPT_READS: usize = 5;
/// Writes of an attempt besides its sets: the tiles' narrower copies,
/// the tiles' size, the head.
const FIXED_WRITES: usize = 3;
/// Columns of a tile insert's row (level, index, width, bytes).
const TILE_COLS: usize = 4;
/// A tile insert's SQL text at most: its constant and 100 placeholders.
const TILE_INSERT_SQL_BYTES: usize = 100 + 6 * D1_BOUND_PARAMS_MAX;
const _: () = assert!(TILE_INSERT_SQL_BYTES < D1_STATEMENT_BYTES_MAX);

/// What an item costs a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemCost {
    /// The ledger (tenant, customer) a delta updates; `None` for facts and
    /// checkpoints.
    pub ledger: Option<(TenantId, CustomerId)>,
    /// The tenant whose window a delta updates.
    pub tenant: Option<TenantId>,
    /// The bytes of the event the item writes, `None` if it writes none.
    pub event_bytes: Option<usize>,
}

/// A round's cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundCost {
    /// Queries of the attempt: its read batch, its write batch, and the
    /// proof roots' index write.
    pub queries: usize,
    /// Statements of the write batch.
    pub writes: usize,
    /// The largest value bound: a JSON set, a tile.
    pub largest_value_bytes: usize,
    /// The largest row written: an event, a window.
    pub largest_row_bytes: usize,
    /// Bound parameters of the statement with the most.
    pub most_params: usize,
}

impl RoundCost {
    /// Within D1's limits and the round's budget of `queries_max`.
    pub fn fits(&self, queries_max: usize) -> bool {
        self.queries <= queries_max.min(ROUND_QUERIES_MAX)
            && self.largest_value_bytes <= VALUE_BYTES_MAX
            && self.largest_row_bytes <= D1_ROW_BYTES_MAX
            && self.most_params <= D1_BOUND_PARAMS_MAX
    }
}

/// The JSON sets of `rows` rows of `total` bytes, the largest `largest`:
/// each set is at most [`JSON_PARAM_BYTES_MAX`] and closes before a row
/// that would pass it, so it holds at least that less the largest row.
fn sets(rows: usize, total: usize, largest: usize) -> usize {
    if rows == 0 {
        return 0;
    }
    if largest >= JSON_PARAM_BYTES_MAX / 2 {
        // Rows this large may each be alone.
        return rows;
    }
    total.div_ceil(JSON_PARAM_BYTES_MAX - largest).max(1)
}

/// An event's row in its JSON set: its payload escaped as a JSON string
/// (at most twice as long), and its id, tenant and type.
fn event_json(bytes: usize) -> usize {
    2 * bytes + 200
}

/// Tiles an append of `n` leaves writes at most: the level-0 tiles it
/// fills or widens, and one per higher level (a log of at most 2^50
/// leaves has 7 tile levels).
fn tiles_written(n: usize) -> usize {
    n / 256 + 2 + 6
}

/// The cost of appending `items` in one round.
pub fn round_cost(items: &[ItemCost]) -> RoundCost {
    let n = items.len();
    let mut ledgers: Vec<&(TenantId, CustomerId)> =
        items.iter().filter_map(|i| i.ledger.as_ref()).collect();
    ledgers.sort();
    ledgers.dedup();
    let mut tenants: Vec<&TenantId> = items.iter().filter_map(|i| i.tenant.as_ref()).collect();
    tenants.sort();
    tenants.dedup();
    let deltas = items.iter().filter(|i| i.ledger.is_some()).count();
    let others = n - deltas;
    let events: Vec<usize> = items
        .iter()
        .filter_map(|i| i.event_bytes)
        .map(event_json)
        .collect();
    let largest_event = events.iter().copied().max().unwrap_or(0);
    let (l, t) = (ledgers.len(), tenants.len());
    let tile_statements = tiles_written(n).div_ceil(D1_BOUND_PARAMS_MAX / TILE_COLS);
    let writes = FIXED_WRITES
        + tile_statements
        + sets(n, n * LEAF_JSON, LEAF_JSON)
        + sets(deltas, deltas * MARK_JSON, MARK_JSON)
        + sets(t, t * TENANT_JSON, TENANT_JSON)
        + sets(l, l * LEDGER_JSON, LEDGER_JSON)
        + sets(l, l * WINDOW_JSON, WINDOW_JSON)
        + sets(t, t * WINDOW_JSON, WINDOW_JSON)
        // Facts', checkpoints' and liabilities statements' marks (and the
        // statements they supersede): a set each.
        + 4 * sets(others, others * MARK_JSON, MARK_JSON)
        + sets(events.len(), events.iter().sum(), largest_event);
    let roots = sets(deltas, deltas * ROOT_JSON, ROOT_JSON);
    let largest_row_bytes = events
        .iter()
        .map(|e| e / 2)
        .max()
        .unwrap_or(0)
        .max(WINDOW_JSON);
    RoundCost {
        queries: ATTEMPT_READS + writes + roots,
        writes,
        largest_value_bytes: largest_event.max(WINDOW_JSON),
        largest_row_bytes,
        most_params: (D1_BOUND_PARAMS_MAX / TILE_COLS) * TILE_COLS,
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bvs_core::types::METADATA_BYTES_MAX;

    fn delta(tenant: usize, customer: usize, bytes: usize) -> ItemCost {
        ItemCost {
            ledger: Some((
                TenantId::from_text(format!("t{tenant}")),
                CustomerId::parse(&format!("c{customer}")).unwrap(),
            )),
            tenant: Some(TenantId::from_text(format!("t{tenant}"))),
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
    /// Reads of a round besides its attempts: the queue's snapshot.
    const SNAPSHOT_READS: usize = 6;

    /// Plans every round of a run over `queue` and checks each against D1's
    /// limits and the run's query budget. Returns the rounds' sizes.
    fn plan_all(queue: &[ItemCost]) -> Vec<usize> {
        let mut rounds = Vec::new();
        let mut left = RUN_QUERIES_MAX;
        let mut at = 0;
        while at < queue.len() && left > SNAPSHOT_READS {
            left -= SNAPSHOT_READS;
            let n = take(&queue[at..], left);
            if n == 0 {
                break;
            }
            let cost = round_cost(&queue[at..at + n]);
            assert!(cost.queries <= ROUND_QUERIES_MAX, "{cost:?}");
            assert!(cost.queries <= left, "{cost:?} over {left}");
            assert!(cost.largest_value_bytes < D1_ROW_BYTES_MAX, "{cost:?}");
            assert!(cost.largest_row_bytes <= D1_ROW_BYTES_MAX, "{cost:?}");
            assert!(cost.most_params <= D1_BOUND_PARAMS_MAX, "{cost:?}");
            assert!(n <= ROUND_ITEMS_MAX);
            left -= cost.queries;
            rounds.push(n);
            at += n;
        }
        assert!(RUN_QUERIES_MAX - left <= D1_QUERIES_PER_INVOCATION_MAX);
        rounds
    }

    #[test]
    fn a_round_takes_a_constant_number_of_statements_whatever_its_ledgers() {
        // One ledger, or a thousand: the same few statements per table.
        let one: Vec<ItemCost> = (0..ROUND_ITEMS_MAX).map(|_| delta(0, 0, 300)).collect();
        let many: Vec<ItemCost> = (0..ROUND_ITEMS_MAX).map(|i| delta(i % 7, i, 300)).collect();
        let (a, b) = (round_cost(&one), round_cost(&many));
        assert!(a.writes <= 20, "{a:?}");
        assert!(b.writes <= 25, "{b:?}");
        // Before issue 27 a round wrote about one statement per item.
        assert!(b.writes * 20 < ROUND_ITEMS_MAX, "{b:?}");
    }

    #[test]
    fn a_run_does_many_full_rounds_within_its_query_budget() {
        let queue: Vec<ItemCost> = (0..60_000).map(|i| delta(i % 7, i % 500, 300)).collect();
        let rounds = plan_all(&queue);
        // 25 full rounds where a run took one or two before issue 27.
        assert!(rounds.len() >= 20, "{rounds:?}");
        let full = &rounds[..rounds.len() - 1];
        assert!(full.iter().all(|n| *n == ROUND_ITEMS_MAX), "{rounds:?}");
    }

    #[test]
    fn maximal_events_are_packed_under_the_value_size_limit() {
        let queue: Vec<ItemCost> = (0..2_000)
            .map(|i| delta(0, i % 3, MAX_DELTA_EVENT))
            .collect();
        let rounds = plan_all(&queue);
        assert!(!rounds.is_empty());
        // Their sets: several statements, each value under the limit.
        let cost = round_cost(&queue[..rounds[0]]);
        assert!(cost.largest_value_bytes < JSON_PARAM_BYTES_MAX, "{cost:?}");
    }

    #[test]
    fn many_deltas_of_one_ledger_and_facts_take_full_rounds() {
        let mut queue: Vec<ItemCost> = (0..1_000).map(|_| delta(1, 1, 400)).collect();
        queue.extend((0..1_000).map(|_| fact()));
        let rounds = plan_all(&queue);
        assert_eq!(rounds[0], ROUND_ITEMS_MAX, "{rounds:?}");
        let facts: Vec<ItemCost> = (0..1_000).map(|_| fact()).collect();
        let rounds = plan_all(&facts);
        assert_eq!(rounds[0], ROUND_ITEMS_MAX, "{rounds:?}");
    }

    #[test]
    fn an_event_over_the_value_budget_is_alone_and_an_empty_budget_takes_nothing() {
        let json_sets = |sizes: &[usize]| {
            let rows: Vec<String> = sizes.iter().map(|n| "x".repeat(*n)).collect();
            crate::store::sets::json_sets(&rows)
                .map(|s| s.len())
                .unwrap_or(0)
        };
        assert_eq!(json_sets(&[10, 899_990, 10]), 3);
        assert_eq!(json_sets(&[]), 0);
        assert_eq!(take(&[delta(0, 0, 10)], 5), 0);
        assert_eq!(take(&[delta(0, 0, 10)], RUN_QUERIES_MAX), 1);
        assert_eq!(plan(&[], RUN_QUERIES_MAX), Take::Nothing);
        assert_eq!(plan(&[delta(0, 0, 10)], 5), Take::Nothing);
        let huge = [delta(0, 0, D1_ROW_BYTES_MAX), delta(0, 1, 10)];
        assert_eq!(plan(&huge, RUN_QUERIES_MAX), Take::TooLarge);
        assert_eq!(plan(&huge[1..], RUN_QUERIES_MAX), Take::Items(1));
    }

    #[test]
    fn a_tile_insert_is_the_one_statement_with_bound_placeholders() {
        // Every other statement of a round is a constant with at most four
        // parameters; a tile insert's placeholders (`store::chunked`) stay
        // at 100 parameters and far under the statement length.
        let placeholders = (1..=D1_BOUND_PARAMS_MAX)
            .map(|i| format!("?{i}, "))
            .collect::<String>();
        assert!(placeholders.len() + 1_000 < D1_STATEMENT_BYTES_MAX);
        assert!(round_cost(&[delta(0, 0, 10)]).most_params <= D1_BOUND_PARAMS_MAX);
    }
}
