//! The sequencer: appends every QUEUED item of an environment to its log,
//! signs the new tree head, and marks the items VERIFIED, all in one atomic
//! D1 batch per round. A round is planned (what is queued, in rowid order)
//! then applied (the append, and what each item's verification changes).
//!
//! Safe under redelivery and races: a round reads the tree size before the
//! queued items, and writes leaves, stored hashes and the head under primary
//! keys, so two rounds starting from the same size cannot both commit, and
//! an item already VERIFIED is never read again.

use std::collections::BTreeMap;

use bvs_core::amount::Amount;
use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::types::Period;
use worker::{D1Database, D1PreparedStatement};

use super::{append_and_sign, db, head_or_init, LogId, LogKey};
use crate::app::{self, App};
use crate::error::{ApiError, ApiResult};
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::deltas::{self, DeltaRow};
use crate::store::events::{self, NewEvent};
use crate::store::facts::{self, FactRow};
use crate::store::ledgers::{self, LedgerUpdate, TenantWindowRow};
use crate::store::log::{self as log_store, HeadRow, NewLeaf};
use crate::store::{self, parse_hash, CheckpointStatus, ItemStatus};
use crate::{ids, views};

/// Items appended per round: keeps one D1 batch well within its limits.
pub const ROUND_ITEMS_MAX: usize = 400;
/// Rounds per invocation; the next doorbell or sweep continues.
pub const ROUNDS_MAX: usize = 25;

/// Runs rounds until nothing is queued (or `ROUNDS_MAX`). Returns the number
/// of items appended.
pub async fn run(app: &App, log: LogId) -> ApiResult<u64> {
    let mut total = 0;
    for _ in 0..ROUNDS_MAX {
        let n = round(app, log).await?;
        if n == 0 {
            break;
        }
        total += n;
    }
    Ok(total)
}

async fn round(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    // The size first, then the items: see the module docs.
    let head = head_or_init(app, log).await?;
    let Some(plan) = Plan::read(&db, head.tree_size).await? else {
        return Ok(0);
    };
    let key = LogKey::load(app, log)?;
    let now = app::clock_ms();
    let appended = append_and_sign(&db, &key, plan.old_size, &plan.leaves()?, now).await?;
    let mut statements = appended.statements;
    let mut outbox = Vec::new();
    statements.extend(apply(&db, &plan, &appended.head, now, &mut outbox).await?);
    statements.extend(events::insert(&db, &outbox, now)?);
    statements.push(log_store::insert_head(&db, &appended.head)?);
    store::batch(&db, statements).await?;
    Ok(plan.count())
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
    /// `None` when nothing is queued.
    async fn read(db: &D1Database, old_size: u64) -> ApiResult<Option<Plan>> {
        let deltas = deltas::queued(db, ROUND_ITEMS_MAX).await?;
        let facts = facts::queued(db, ROUND_ITEMS_MAX - deltas.len()).await?;
        let left = ROUND_ITEMS_MAX - deltas.len() - facts.len();
        let checkpoints = checkpoints::queued(db, left).await?;
        if deltas.is_empty() && facts.is_empty() && checkpoints.is_empty() {
            return Ok(None);
        }
        Ok(Some(Plan {
            old_size,
            deltas,
            facts,
            checkpoints,
        }))
    }

    fn count(&self) -> u64 {
        (self.deltas.len() + self.facts.len() + self.checkpoints.len()) as u64
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

/// One ledger's state through a round.
struct LedgerRound {
    old_count: u64,
    old_balance: Amount,
    count: u64,
    balance: Amount,
    latest_items_root: Option<Hash32>,
    frontier: Frontier,
    first_leaf: Option<u64>,
    last_leaf: u64,
}

/// One tenant's current window through a round.
struct TenantRound {
    row: TenantWindowRow,
    frontier: Frontier,
    net: Amount,
}

/// The running counts, balances and window frontiers of every ledger and
/// tenant the round's deltas touch.
struct Balances {
    ledgers: BTreeMap<(String, String), LedgerRound>,
    tenants: BTreeMap<String, TenantRound>,
}

impl Balances {
    async fn load(db: &D1Database, deltas: &[DeltaRow], window: &str) -> ApiResult<Balances> {
        let mut keys: Vec<(String, String)> = deltas
            .iter()
            .map(|d| (d.tenant_id.clone(), d.customer_id.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        let mut ledgers = BTreeMap::new();
        for l in ledgers::for_keys(db, &keys).await? {
            let balance = l.computed_balance;
            let round = LedgerRound {
                old_count: l.verified_count,
                old_balance: balance,
                count: l.verified_count,
                balance,
                latest_items_root: None,
                frontier: Frontier::new(),
                first_leaf: None,
                last_leaf: 0,
            };
            ledgers.insert((l.tenant_id, l.customer_id), round);
        }
        // The current window's frontiers, per ledger and per tenant.
        for (t, c, text) in ledgers::window_frontiers(db, &keys, window).await? {
            if let Some(l) = ledgers.get_mut(&(t, c)) {
                l.frontier = Frontier::from_text(&text).map_err(ApiError::internal)?;
            }
        }
        let mut tenant_ids: Vec<String> = keys.iter().map(|(t, _)| t.clone()).collect();
        tenant_ids.dedup();
        let mut tenants = BTreeMap::new();
        for w in ledgers::tenant_windows_for(db, &tenant_ids, window).await? {
            let frontier = Frontier::from_text(&w.frontier).map_err(ApiError::internal)?;
            let net = w.net_delta;
            tenants.insert(
                w.tenant_id.clone(),
                TenantRound {
                    row: w,
                    frontier,
                    net,
                },
            );
        }
        Ok(Balances { ledgers, tenants })
    }

    /// Adds one delta at `leaf_index`; returns its ledger sequence number
    /// and the balance after it.
    fn add(&mut self, d: &DeltaRow, leaf_index: u64, window: &str) -> ApiResult<(u64, Amount)> {
        let (item, delta) = (d.item_hash, d.delta);
        let entry = self
            .ledgers
            .get_mut(&(d.tenant_id.clone(), d.customer_id.clone()))
            .ok_or_else(|| ApiError::internal(format!("no ledger for delta {}", d.anchor_id)))?;
        entry.count += 1;
        entry.balance = entry
            .balance
            .checked_add(delta)
            .map_err(|e| ApiError::internal(format!("balance overflow: {e}")))?;
        entry.latest_items_root = Some(d.items_root);
        entry.frontier.push(&item);
        entry.first_leaf.get_or_insert(leaf_index);
        entry.last_leaf = leaf_index;
        let tenant = self
            .tenants
            .entry(d.tenant_id.clone())
            .or_insert_with(|| TenantRound {
                row: TenantWindowRow {
                    tenant_id: d.tenant_id.clone(),
                    window: window.to_string(),
                    deltas_count: 0,
                    net_delta: Amount::ZERO,
                    first_leaf: leaf_index,
                    last_leaf: leaf_index,
                    frontier: String::new(),
                },
                frontier: Frontier::new(),
                net: Amount::ZERO,
            });
        tenant.row.deltas_count += 1;
        tenant.row.last_leaf = leaf_index;
        tenant.frontier.push(&item);
        tenant.net = tenant
            .net
            .checked_add(delta)
            .map_err(|e| ApiError::internal(format!("net overflow: {e}")))?;
        Ok((entry.count, entry.balance))
    }

    /// The ledger aggregates and windows, and the tenant windows, as they
    /// stand after the round.
    fn statements(
        self,
        db: &D1Database,
        now: u64,
        window: &str,
    ) -> ApiResult<Vec<D1PreparedStatement>> {
        let mut out = Vec::new();
        for ((tenant_id, customer_id), l) in &self.ledgers {
            let latest_items_root = l.latest_items_root.map(|h| h.to_hex()).unwrap_or_default();
            out.extend(ledgers::update(
                db,
                &LedgerUpdate {
                    tenant_id,
                    customer_id,
                    old_count: l.old_count,
                    new_count: l.count,
                    old_balance: l.old_balance,
                    new_balance: l.balance,
                    verified_at: now,
                    latest_items_root: &latest_items_root,
                    window: window.to_string(),
                    frontier: l.frontier.to_text(),
                    first_leaf: l.first_leaf.unwrap_or(l.last_leaf),
                    last_leaf: l.last_leaf,
                },
            )?);
        }
        for mut t in self.tenants.into_values() {
            t.row.frontier = t.frontier.to_text();
            t.row.net_delta = t.net;
            out.push(ledgers::upsert_tenant_window(db, &t.row)?);
        }
        Ok(out)
    }
}
