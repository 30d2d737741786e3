//! The sequencer: appends every QUEUED item of a shard to its log,
//! signs the new tree head, and marks the items VERIFIED, all in one atomic
//! D1 batch per round. A round is planned (what is queued, in rowid order,
//! as much as fits D1's limits: see `budget`) then applied (the append, and
//! what each item's verification changes).
//!
//! Safe under redelivery and races: a round reads the tree size before the
//! queued items, and writes leaves, stored hashes and the head under primary
//! keys, so two rounds starting from the same size cannot both commit, and
//! an item already VERIFIED is never read again.
//!
//! A failing round cannot block the log: its items are split in halves,
//! each applied on its own, until the failing item is alone. An item
//! (delta, fact or checkpoint) that fails alone ends FAILED with why and a
//! once-only `verification.failed` event (once some other round of the run
//! committed, so an outage of the database does not fail everything;
//! until then it stays QUEUED and is skipped for the rest of the run). A
//! round that failed because another run moved the log meanwhile (a race)
//! is not split: it stops.

use std::collections::BTreeSet;

use bvs_core::hash::Hash32;
use bvs_core::types::Period;
use worker::{D1Database, D1PreparedStatement};

use super::balances::Balances;
use super::budget::{self, ItemCost};
use super::{append_and_sign, db, head_or_init, LogId, LogKey};
use crate::app::{self, App};
use crate::error::{ApiError, ApiResult};
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::deltas::{self, DeltaRow};
use crate::store::events::{self, FailedItem, NewEvent};
use crate::store::facts::{self, FactRow};
use crate::store::log::{self as log_store, HeadRow, NewLeaf};
use crate::store::{self, parse_hash, CheckpointStatus, ItemStatus};
use crate::{ids, views};

pub use super::budget::ROUND_ITEMS_MAX;
/// Rounds per invocation; the next doorbell or sweep continues.
pub const ROUNDS_MAX: usize = 25;
/// DEV_MODE fault injection: a delta with this `reason`, a fact whose
/// content starts with it, or a checkpoint of the customer with this id
/// makes every round that holds it fail, as an item that can never be
/// appended would. Has no effect unless `DEV_MODE` is on.
pub const DEV_FAULT_REASON: &str = "dev:fail-sequencer";
/// DEV_MODE: a delta with this `reason` holds its round for
/// `DEV_HOLD_SECS` before the round commits, as a slow or saturated shard
/// would: that shard's sequencer stays busy (tests/tests/shard_queues.rs:
/// another shard is sequenced meanwhile). No effect unless `DEV_MODE` is on.
pub const DEV_HOLD_REASON: &str = "dev:hold-sequencer";
pub const DEV_HOLD_SECS: u64 = 30;
/// Queries a run keeps for marking isolated items FAILED.
const FAIL_QUERIES: usize = 3;

/// Runs rounds until nothing is queued, `ROUNDS_MAX` rounds, or the run's
/// query budget is spent (then it rings the doorbell again). Returns the
/// number of items appended.
pub async fn run(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    let mut run = Run {
        queries_left: budget::RUN_QUERIES_MAX,
        appended: 0,
        committed: false,
        isolated: Vec::new(),
        skip: BTreeSet::new(),
        more: false,
    };
    let mut result = Ok(());
    for _ in 0..ROUNDS_MAX {
        match round(app, log, &db, &mut run).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let failed = fail_isolated(&db, &mut run).await;
    if run.more {
        super::submit::ring(app, log).await;
    }
    result?;
    failed?;
    Ok(run.appended)
}

/// A run's state across its rounds.
struct Run {
    queries_left: usize,
    appended: u64,
    /// Some round of this run committed: the database takes writes.
    committed: bool,
    /// Items that failed alone, with why, and whether the failure is the
    /// item's for certain (too large) rather than judged by the run.
    isolated: Vec<(Item, String, bool)>,
    /// Keys of items not to read again in this run.
    skip: BTreeSet<String>,
    /// Items are left that the budget did not reach.
    more: bool,
}

impl Run {
    fn spend(&mut self, queries: usize) -> bool {
        if queries + FAIL_QUERIES > self.queries_left {
            self.more = true;
            return false;
        }
        self.queries_left -= queries;
        true
    }
}

/// One queued item.
#[derive(Clone)]
enum Item {
    Delta(DeltaRow),
    Fact(FactRow),
    Checkpoint(CheckpointRow),
}

impl Item {
    fn key(&self) -> String {
        match self {
            Item::Delta(d) => format!("delta:{}", d.anchor_id),
            Item::Fact(f) => format!("fact:{}:{}", f.tenant_id, f.content_hash),
            Item::Checkpoint(c) => format!("checkpoint:{}", c.id),
        }
    }

    fn cost(&self) -> ItemCost {
        match self {
            Item::Delta(d) => {
                let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
                let free = text(&d.metadata)
                    + 2 * (text(&d.reason) + text(&d.reference_id) + d.customer_id.len());
                ItemCost {
                    ledger: Some((d.tenant_id.clone(), d.customer_id.clone())),
                    tenant: Some(d.tenant_id.clone()),
                    event_bytes: Some(budget::EVENT_FIXED_BYTES + free),
                }
            }
            Item::Fact(_) => ItemCost {
                ledger: None,
                tenant: None,
                event_bytes: None,
            },
            Item::Checkpoint(c) => ItemCost {
                ledger: None,
                tenant: None,
                event_bytes: Some(budget::EVENT_FIXED_BYTES + c.customer_id.len()),
            },
        }
    }
}

fn costs(items: &[Item]) -> Vec<ItemCost> {
    items.iter().map(Item::cost).collect()
}

/// The queued items in append order: deltas, then facts, then checkpoints,
/// each in rowid order, skipping those this run set aside.
async fn read_queued(db: &D1Database, skip: &BTreeSet<String>) -> ApiResult<Vec<Item>> {
    let limit = ROUND_ITEMS_MAX + skip.len();
    let deltas = deltas::queued(db, limit).await?;
    let facts = facts::queued(db, limit.saturating_sub(deltas.len()).max(skip.len())).await?;
    let left = limit
        .saturating_sub(deltas.len() + facts.len())
        .max(skip.len());
    let checkpoints = checkpoints::queued(db, left).await?;
    let items = deltas
        .into_iter()
        .map(Item::Delta)
        .chain(facts.into_iter().map(Item::Fact))
        .chain(checkpoints.into_iter().map(Item::Checkpoint))
        .filter(|i| !skip.contains(&i.key()))
        .take(ROUND_ITEMS_MAX)
        .collect();
    Ok(items)
}

/// One round: plans what fits, applies it, and splits what fails. Returns
/// whether the run should go on.
async fn round(app: &App, log: LogId, db: &D1Database, run: &mut Run) -> ApiResult<bool> {
    if !run.spend(3) {
        return Ok(false);
    }
    let mut items = read_queued(db, &run.skip).await?;
    if items.is_empty() {
        return Ok(false);
    }
    match budget::plan(
        &costs(&items),
        run.queries_left.saturating_sub(FAIL_QUERIES),
    ) {
        budget::Take::Items(n) => items.truncate(n),
        budget::Take::TooLarge => {
            // It can never be appended: set it aside to be FAILED, and go on.
            items.truncate(1);
            for item in items {
                run.skip.insert(item.key());
                let message = "the item is larger than one D1 statement allows".to_string();
                run.isolated.push((item, message, true));
            }
            return Ok(true);
        }
        budget::Take::Nothing => {
            run.more = true;
            return Ok(false);
        }
    }
    let mut stack = vec![items];
    while let Some(mut group) = stack.pop() {
        // An attempt's queries, and one more to tell a race from a failure.
        if !run.spend(budget::round_cost(&costs(&group)).queries + 1) {
            return Ok(false);
        }
        match attempt(app, log, db, &group).await? {
            Outcome::Appended => {
                run.appended += group.len() as u64;
                run.committed = true;
            }
            Outcome::Raced => return Ok(false),
            Outcome::Failed(e) if group.len() == 1 => {
                worker::console_error!("sequencer {}: item failed alone: {e:?}", log.path_name());
                let message = match &e {
                    ApiError::Internal(text) => text.clone(),
                    other => format!("{other:?}"),
                };
                for item in group {
                    run.skip.insert(item.key());
                    run.isolated.push((item, message.clone(), false));
                }
            }
            Outcome::Failed(e) => {
                worker::console_warn!(
                    "sequencer {}: a round of {} failed, splitting it: {e:?}",
                    log.path_name(),
                    group.len()
                );
                let second = group.split_off(group.len() / 2);
                stack.push(second);
                stack.push(group);
            }
        }
    }
    Ok(true)
}

enum Outcome {
    Appended,
    /// Another run moved the log meanwhile.
    Raced,
    Failed(ApiError),
}

/// Appends `items` in one atomic batch. A failure of the batch (or of
/// building it) is `Failed` unless the log moved meanwhile (`Raced`);
/// failing to read the log at all is an error of the run.
async fn attempt(app: &App, log: LogId, db: &D1Database, items: &[Item]) -> ApiResult<Outcome> {
    // The size first, then the items: see the module docs.
    let head = head_or_init(app, log).await?;
    let plan = Plan::of(head.tree_size, items);
    match apply_plan(app, log, db, &plan).await {
        Ok(()) => {
            let roots = plan
                .deltas
                .iter()
                .flat_map(|d| [d.items_root.to_hex(), d.proof_root().to_hex()]);
            super::submit::backfill_roots(app, log, roots).await;
            Ok(Outcome::Appended)
        }
        Err(e) => {
            let now = log_store::latest_head(db).await?;
            if now.map(|h| h.tree_size) == Some(plan.old_size) {
                Ok(Outcome::Failed(e))
            } else {
                Ok(Outcome::Raced)
            }
        }
    }
}

async fn apply_plan(app: &App, log: LogId, db: &D1Database, plan: &Plan) -> ApiResult<()> {
    if app.dev_mode() && plan.has_dev_fault() {
        return Err(ApiError::internal(
            "DEV_MODE fault injection: this item cannot be appended",
        ));
    }
    if app.dev_mode() && plan.holds() {
        worker::console_log!("sequencer {}: DEV_MODE hold reached", log.path_name());
        worker::Delay::from(std::time::Duration::from_secs(DEV_HOLD_SECS)).await;
    }
    let key = LogKey::load(app, log)?;
    let now = app::clock_ms();
    let appended = append_and_sign(db, &key, plan.old_size, &plan.leaves()?, now).await?;
    let mut statements = appended.statements;
    let mut outbox = Vec::new();
    statements.extend(apply(db, plan, &appended.head, now, &mut outbox).await?);
    // Events packed so that no statement passes D1's size limit.
    for (a, b) in budget::event_groups(&outbox) {
        statements.extend(events::insert(db, &outbox[a..b], now)?);
    }
    statements.push(log_store::insert_head(db, &appended.head)?);
    store::batch(db, statements).await?;
    Ok(())
}

/// Marks the items that failed alone FAILED, each with why and its
/// `verification.failed` event (once: the event's id is the item's), if
/// the database takes writes, so that the failure is the item's: some
/// round of the run committed, or else a probe write succeeds (a lone
/// poisoned item on a quiet shard has no other round to commit; without
/// the probe it stayed QUEUED for ever). Otherwise they stay QUEUED for
/// the next run, and the run reports the failure.
async fn fail_isolated(db: &D1Database, run: &mut Run) -> ApiResult<()> {
    let isolated = std::mem::take(&mut run.isolated);
    if isolated.is_empty() {
        return Ok(());
    }
    let now = app::clock_ms();
    let takes_writes = run.committed
        || isolated.iter().all(|(_, _, certain)| *certain)
        || match log_store::probe_write(db, now).await {
            Ok(()) => true,
            Err(e) => {
                worker::console_error!("sequencer: the probe write failed too: {e:?}");
                false
            }
        };
    let (isolated, unsure): (Vec<_>, Vec<_>) = isolated
        .into_iter()
        .partition(|(_, _, certain)| *certain || takes_writes);
    let mut statements = Vec::new();
    for (item, message, _) in &isolated {
        statements.extend(mark_failed(db, item, message, now)?);
    }
    if !statements.is_empty() {
        store::batch(db, statements).await?;
    }
    if !unsure.is_empty() {
        return Err(ApiError::internal(format!(
            "{} item(s) failed alone and the database took no write: left QUEUED",
            unsure.len()
        )));
    }
    Ok(())
}

/// The statements that mark one item FAILED with why, then add its
/// `verification.failed` event if (and only if) the item is FAILED.
fn mark_failed(
    db: &D1Database,
    item: &Item,
    message: &str,
    now: u64,
) -> ApiResult<[D1PreparedStatement; 2]> {
    let failed = |id: String, tenant_id: &String, payload: String| NewEvent {
        id,
        tenant_id: tenant_id.clone(),
        kind: crate::webhooks::EVENT_VERIFICATION_FAILED,
        payload,
    };
    Ok(match item {
        Item::Delta(d) => {
            let payload = views::delta_failed_event_payload(d, message)?;
            let event = failed(format!("evt_failed_{}", d.anchor_id), &d.tenant_id, payload);
            [
                deltas::mark_failed(db, &d.anchor_id)?,
                events::insert_if_failed(db, &event, FailedItem::Delta(&d.anchor_id), now)?,
            ]
        }
        Item::Fact(f) => {
            let payload = views::fact_failed_event_payload(f, message)?;
            // A content hash is per tenant: the tenant is part of the id.
            let id = format!("evt_failed_fact_{}_{}", f.tenant_id, f.content_hash);
            let event = failed(id, &f.tenant_id, payload);
            [
                facts::mark_failed(db, &f.tenant_id, &f.content_hash, message)?,
                events::insert_if_failed(db, &event, FailedItem::Fact(&f.content_hash), now)?,
            ]
        }
        Item::Checkpoint(c) => {
            let payload = views::checkpoint_failed_event_payload(c, message)?;
            let event = failed(format!("evt_failed_{}", c.id), &c.tenant_id, payload);
            [
                checkpoints::mark_failed(db, &c.id, message)?,
                events::insert_if_failed(db, &event, FailedItem::Checkpoint(&c.id), now)?,
            ]
        }
    })
}

/// A leaf's item hash, kind, reference and tenant.
type LeafParts<'a> = (Hash32, &'static str, &'a String, &'a String);

/// What one round appends: the queued deltas, then facts, then checkpoints,
/// each in rowid order, at log positions from `old_size`.
struct Plan {
    old_size: u64,
    deltas: Vec<DeltaRow>,
    facts: Vec<FactRow>,
    checkpoints: Vec<CheckpointRow>,
}

impl Plan {
    fn of(old_size: u64, items: &[Item]) -> Plan {
        let mut plan = Plan {
            old_size,
            deltas: Vec::new(),
            facts: Vec::new(),
            checkpoints: Vec::new(),
        };
        for item in items {
            match item {
                Item::Delta(d) => plan.deltas.push(d.clone()),
                Item::Fact(f) => plan.facts.push(f.clone()),
                Item::Checkpoint(c) => plan.checkpoints.push(c.clone()),
            }
        }
        plan
    }

    /// The plan holds an item poisoned by the DEV_MODE fault injection
    /// (`DEV_FAULT_REASON`).
    fn has_dev_fault(&self) -> bool {
        self.deltas
            .iter()
            .any(|d| d.reason.as_deref() == Some(DEV_FAULT_REASON))
            || self
                .facts
                .iter()
                .any(|f| f.content.starts_with(DEV_FAULT_REASON))
            || self
                .checkpoints
                .iter()
                .any(|c| c.customer_id == DEV_FAULT_REASON)
    }

    /// The plan holds a delta that holds its round (`DEV_HOLD_REASON`).
    fn holds(&self) -> bool {
        self.deltas
            .iter()
            .any(|d| d.reason.as_deref() == Some(DEV_HOLD_REASON))
    }

    /// The log position of the `i`-th fact and checkpoint.
    fn fact_leaf(&self, i: usize) -> u64 {
        self.old_size + (self.deltas.len() + i) as u64
    }

    fn checkpoint_leaf(&self, i: usize) -> u64 {
        self.old_size + (self.deltas.len() + self.facts.len() + i) as u64
    }

    fn leaves(&self) -> ApiResult<Vec<NewLeaf>> {
        let deltas = self.deltas.iter().map(|d| -> ApiResult<LeafParts<'_>> {
            Ok((d.item_hash, "delta", &d.anchor_id, &d.tenant_id))
        });
        let facts = self.facts.iter().map(|f| -> ApiResult<LeafParts<'_>> {
            let hash = parse_hash(&f.content_hash)?;
            Ok((hash, "fact", &f.content_hash, &f.tenant_id))
        });
        let checkpoints = self
            .checkpoints
            .iter()
            .map(|c| -> ApiResult<LeafParts<'_>> {
                Ok((c.merkle_root, "checkpoint", &c.id, &c.tenant_id))
            });
        deltas
            .chain(facts)
            .chain(checkpoints)
            .enumerate()
            .map(|(i, item)| {
                let (item_hash, kind, ref_id, tenant_id) = item?;
                Ok(NewLeaf {
                    leaf_index: self.old_size + i as u64,
                    item_hash,
                    kind,
                    ref_id: ref_id.clone(),
                    tenant_id: tenant_id.clone(),
                })
            })
            .collect()
    }
}

/// Everything the round's items change besides the log: each delta's
/// verification and its ledger's aggregates and windows, each fact's and
/// checkpoint's mark, and the outbox events.
async fn apply(
    db: &D1Database,
    plan: &Plan,
    head: &HeadRow,
    now: u64,
    outbox: &mut Vec<NewEvent>,
) -> ApiResult<Vec<D1PreparedStatement>> {
    let window = Period::containing(i64::try_from(now).unwrap_or(i64::MAX)).to_string();
    let mut balances = Balances::load(db, &plan.deltas, &window).await?;
    let mut statements = Vec::new();
    for (i, d) in plan.deltas.iter().enumerate() {
        let leaf_index = plan.old_size + i as u64;
        let (ledger_seq, balance_after) = balances.add(d, leaf_index, &window)?;
        let verified = deltas::VerifiedDelta {
            anchor_id: &d.anchor_id,
            leaf_index,
            tree_size: head.tree_size,
            ledger_seq,
            balance_after,
            verified_at: now,
        };
        statements.push(deltas::mark_verified(db, &verified)?);
        outbox.push(delta_verified_event(d, &verified, &head.note_hash)?);
    }
    statements.extend(balances.statements(db, now, &window)?);
    for (i, f) in plan.facts.iter().enumerate() {
        let leaf = plan.fact_leaf(i);
        let (tenant, hash) = (&f.tenant_id, &f.content_hash);
        statements.push(facts::mark_verified(
            db,
            tenant,
            hash,
            leaf,
            head.tree_size,
            now,
        )?);
    }
    for (i, c) in plan.checkpoints.iter().enumerate() {
        let leaf = plan.checkpoint_leaf(i);
        statements.push(checkpoints::mark_committed(
            db,
            &c.id,
            leaf,
            head.tree_size,
            now,
        )?);
        outbox.push(checkpoint_verified_event(c, leaf, head, now)?);
    }
    Ok(statements)
}

/// `delta.verified`: the delta as it reads once this round commits.
fn delta_verified_event(
    d: &DeltaRow,
    v: &deltas::VerifiedDelta<'_>,
    note_hash: &str,
) -> ApiResult<NewEvent> {
    let mut row = d.clone();
    row.status = ItemStatus::Verified;
    row.leaf_index = Some(v.leaf_index);
    row.tree_size = Some(v.tree_size);
    row.ledger_seq = Some(v.ledger_seq);
    row.balance_after = Some(v.balance_after);
    row.verified_at = Some(v.verified_at);
    Ok(NewEvent {
        id: ids::new_id("evt")?,
        tenant_id: d.tenant_id.clone(),
        kind: "delta.verified",
        payload: views::delta_event_payload(&row, note_hash)?,
    })
}

/// `checkpoint.verified`: the checkpoint as it reads once this round commits.
fn checkpoint_verified_event(
    c: &CheckpointRow,
    leaf_index: u64,
    head: &HeadRow,
    now: u64,
) -> ApiResult<NewEvent> {
    let mut row = c.clone();
    row.status = CheckpointStatus::Committed;
    row.leaf_index = Some(leaf_index);
    row.tree_size = Some(head.tree_size);
    row.committed_at = Some(now);
    let view = views::CheckpointView::from_row(&row, Some(&head.note_hash));
    Ok(NewEvent {
        id: ids::new_id("evt")?,
        tenant_id: c.tenant_id.clone(),
        kind: "checkpoint.verified",
        payload: serde_json::to_string(&view)?,
    })
}
