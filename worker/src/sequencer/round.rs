//! One sequencer round's plan and writes (issue 27: set-based): whatever
//! the number of its items, ledgers and tenants, a round writes each table
//! with one statement per JSON set (`store::over_json`; one set unless a
//! set would pass D1's value size): the grown tiles, the leaves, the
//! deltas' VERIFIED marks, the facts' and checkpoints' marks, the ledger
//! aggregates and windows, the tenant windows, the event outbox, the
//! backlog meters, the tiles' size and the head.

use std::collections::BTreeMap;

use bvs_core::conditions::{Failed, Position, Refusal};
use bvs_core::hash::Hash32;
use bvs_core::types::Period;

use super::balances::Balances;
use super::queue::Item;
use crate::error::ApiResult;
use crate::ids::{EventId, TenantId};
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::deltas::{self, DeltaRow};
use crate::store::events::{self, NewEvent};
use crate::store::facts::{self, FactRow};
use crate::store::liabilities::{self as liabilities, StatementRow};
use crate::store::log::{HeadRow, LeafKind, NewLeaf};
use crate::store::Query;
use crate::store::{meters, CheckpointStatus, ItemStatus};
use crate::views;

/// DEV_MODE fault injection: a delta with this `reason`, a fact whose
/// content starts with it, or a checkpoint of the customer with this id
/// makes every round that holds it fail, as an item that can never be
/// appended would. Has no effect unless `DEV_MODE` is on.
pub const DEV_FAULT_REASON: &str = "dev:fail-sequencer";
/// DEV_MODE: a delta with this `reason` holds its round for
/// `sequencer::DEV_HOLD_SECS` before the round commits, as a slow or saturated shard
/// would: that shard's sequencer stays busy (tests/tests/shard_queues.rs:
/// another shard is sequenced meanwhile). No effect unless `DEV_MODE` is on.
pub const DEV_HOLD_REASON: &str = "dev:hold-sequencer";

/// A leaf's item hash, kind, reference and tenant.
type LeafParts<'a> = (Hash32, LeafKind, String, &'a TenantId);

/// What one round appends: the queued deltas, then facts, then checkpoints,
/// each in the order taken, at log positions from `old_size`.
pub struct Plan {
    pub old_size: u64,
    pub deltas: Vec<DeltaRow>,
    pub facts: Vec<FactRow>,
    pub checkpoints: Vec<CheckpointRow>,
    /// Liabilities statements (issue 31), after the checkpoints.
    pub statements: Vec<StatementRow>,
    /// Deltas a condition refused (issue 43: [`Plan::refuse`]), their
    /// refusal items last.
    pub refusals: Vec<Refused>,
}

/// A delta the round refused, and its refusal item.
pub struct Refused {
    pub row: DeltaRow,
    pub refusal: Refusal,
}

impl Refused {
    /// `failure` of the delta: its code and why, in words.
    pub fn failure(&self) -> views::Failure {
        let r = &self.refusal;
        let at = &r.at;
        let message = match r.failed {
            Failed::Floor {
                balance_at_least,
                tenant_default,
            } => format!(
                "balance {} with {} would fall below the floor {balance_at_least} ({}); refusal {}",
                at.balance,
                r.delta,
                if tenant_default {
                    "the tenant's default for the asset"
                } else {
                    "its own balanceAtLeast"
                },
                r.hash()
            ),
            Failed::Sequence { expected_sequence } => format!(
                "expectedSequence {expected_sequence}, but the asset has {} verified deltas; refusal {}",
                at.sequence,
                r.hash()
            ),
        };
        views::Failure {
            code: r.failed.code().as_str(),
            message,
        }
    }
}

impl Plan {
    pub fn of(old_size: u64, items: &[Item]) -> Plan {
        let mut plan = Plan {
            old_size,
            deltas: Vec::new(),
            facts: Vec::new(),
            checkpoints: Vec::new(),
            statements: Vec::new(),
            refusals: Vec::new(),
        };
        for item in items {
            match item {
                Item::Delta(d) => plan.deltas.push(d.clone()),
                Item::Fact(f) => plan.facts.push(f.clone()),
                Item::Checkpoint(c) => plan.checkpoints.push(c.clone()),
                Item::Statement(st) => plan.statements.push(st.clone()),
            }
        }
        plan
    }

    pub fn len(&self) -> u64 {
        (self.deltas.len()
            + self.facts.len()
            + self.checkpoints.len()
            + self.statements.len()
            + self.refusals.len()) as u64
    }

    /// Moves the deltas `screened` refuses (one entry per delta, in order:
    /// `Balances::screen`) to `refusals`, each with its refusal item.
    pub fn refuse(&mut self, screened: Vec<Option<(Failed, Position)>>) {
        let deltas = std::mem::take(&mut self.deltas);
        for (d, verdict) in deltas.into_iter().zip(screened) {
            match verdict {
                None => self.deltas.push(d),
                Some((failed, at)) => {
                    let refusal = Refusal {
                        item_hash: d.item_hash,
                        customer_id: d.customer_id.as_str().to_string(),
                        asset: d.asset.clone(),
                        delta: d.delta,
                        failed,
                        at,
                    };
                    self.refusals.push(Refused { row: d, refusal });
                }
            }
        }
    }

    /// The plan holds an item poisoned by the DEV_MODE fault injection
    /// (`DEV_FAULT_REASON`).
    pub fn has_dev_fault(&self) -> bool {
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
                .any(|c| c.customer_id.as_str() == DEV_FAULT_REASON)
    }

    /// The plan holds a delta that holds its round (`DEV_HOLD_REASON`).
    pub fn holds(&self) -> bool {
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

    fn statement_leaf(&self, i: usize) -> u64 {
        self.old_size + (self.deltas.len() + self.facts.len() + self.checkpoints.len() + i) as u64
    }

    fn refusal_leaf(&self, i: usize) -> u64 {
        self.statement_leaf(self.statements.len() + i)
    }

    pub fn leaves(&self) -> ApiResult<Vec<NewLeaf>> {
        let deltas = self.deltas.iter().map(|d| -> ApiResult<LeafParts<'_>> {
            Ok((
                d.item_hash,
                LeafKind::Delta,
                d.anchor_id.to_string(),
                &d.tenant_id,
            ))
        });
        let facts = self.facts.iter().map(|f| -> ApiResult<LeafParts<'_>> {
            Ok((
                f.content_hash,
                LeafKind::Fact,
                f.content_hash.to_hex(),
                &f.tenant_id,
            ))
        });
        let checkpoints = self
            .checkpoints
            .iter()
            .map(|c| -> ApiResult<LeafParts<'_>> {
                Ok((
                    c.merkle_root,
                    LeafKind::Checkpoint,
                    c.id.to_string(),
                    &c.tenant_id,
                ))
            });
        let statements = self
            .statements
            .iter()
            .map(|st| -> ApiResult<LeafParts<'_>> {
                let item = st.item_hash.ok_or_else(|| {
                    crate::error::ApiError::internal(format!("statement {} has no item", st.id))
                })?;
                Ok((
                    item,
                    LeafKind::Liabilities,
                    st.id.to_string(),
                    &st.tenant_id,
                ))
            });
        let refusals = self.refusals.iter().map(|r| -> ApiResult<LeafParts<'_>> {
            Ok((
                r.refusal.hash(),
                LeafKind::Refusal,
                r.row.anchor_id.to_string(),
                &r.row.tenant_id,
            ))
        });
        deltas
            .chain(facts)
            .chain(checkpoints)
            .chain(statements)
            .chain(refusals)
            .enumerate()
            .map(|(i, item)| {
                let (item_hash, kind, ref_id, tenant_id) = item?;
                Ok(NewLeaf {
                    leaf_index: self.old_size + i as u64,
                    item_hash,
                    kind,
                    ref_id,
                    tenant_id: tenant_id.clone(),
                })
            })
            .collect()
    }
}

/// The month a round verifies in: its ledger and tenant windows.
pub fn window_of(now: u64) -> String {
    Period::containing(i64::try_from(now).unwrap_or(i64::MAX)).to_string()
}

/// Everything the round's items change besides the log: the deltas'
/// verification with their ledgers' aggregates and windows and the
/// tenants' backlogs, the facts' and checkpoints' marks, and the outbox
/// events, each table in one statement per JSON set. `window` is the
/// round's month ([`window_of`] `now`).
///
/// # Errors
/// A ledger missing for a delta, a balance past its limits, or a value
/// that cannot be bound.
pub fn writes<'a>(
    plan: &'a Plan,
    head: &'a HeadRow,
    (now, window): (u64, &'a str),
    mut balances: Balances,
) -> ApiResult<Vec<Query<'a>>> {
    let mut outbox = Vec::new();
    let mut verified = Vec::with_capacity(plan.deltas.len());
    let mut released: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, d) in plan.deltas.iter().enumerate() {
        let leaf_index = plan.old_size + i as u64;
        let (ledger_seq, balance_after) = balances.add(d, leaf_index, window)?;
        let v = deltas::VerifiedDelta {
            anchor_id: &d.anchor_id,
            leaf_index,
            tree_size: head.tree_size,
            ledger_seq,
            balance_after,
            verified_at: now,
        };
        outbox.push(delta_verified_event(d, &v, &head.note_hash)?);
        verified.push(v);
        *released.entry(d.tenant_id.as_str()).or_insert(0) += 1;
    }
    let mut statements = Vec::new();
    if !verified.is_empty() {
        statements.extend(deltas::mark_verified_all(&verified, head.tree_size, now)?);
    }
    statements.extend(refusal_marks(plan, head, now)?);
    for r in &plan.refusals {
        *released.entry(r.row.tenant_id.as_str()).or_insert(0) += 1;
    }
    if !released.is_empty() {
        let released: Vec<(&str, u64)> = released.into_iter().collect();
        statements.extend(meters::release_backlog_all(&released)?);
    }
    statements.extend(balances.statements(now, window)?);
    if !plan.facts.is_empty() {
        let marks: Vec<(&str, &Hash32, u64)> = plan
            .facts
            .iter()
            .enumerate()
            .map(|(i, f)| (f.tenant_id.as_str(), &f.content_hash, plan.fact_leaf(i)))
            .collect();
        statements.extend(facts::mark_verified_all(&marks, head.tree_size, now)?);
    }
    if !plan.checkpoints.is_empty() {
        let mut marks = Vec::with_capacity(plan.checkpoints.len());
        for (i, c) in plan.checkpoints.iter().enumerate() {
            let leaf = plan.checkpoint_leaf(i);
            marks.push((c.id.as_str(), leaf));
            outbox.push(checkpoint_verified_event(c, leaf, head, now)?);
        }
        statements.extend(checkpoints::mark_committed_all(
            &marks,
            head.tree_size,
            now,
        )?);
    }
    statements.extend(statement_marks(plan, head, now)?);
    if !outbox.is_empty() {
        statements.extend(events::insert(&outbox, now)?);
    }
    Ok(statements)
}

/// The round's refused deltas FAILED with their refusal items and why,
/// their monthly quota given back (to the month each was charged to),
/// and their once-only `verification.failed` events (issue 43).
fn refusal_marks<'a>(plan: &'a Plan, head: &'a HeadRow, now: u64) -> ApiResult<Vec<Query<'a>>> {
    if plan.refusals.is_empty() {
        return Ok(Vec::new());
    }
    let mut marks = Vec::with_capacity(plan.refusals.len());
    let mut refunds: BTreeMap<(&str, String), u64> = BTreeMap::new();
    let mut events = Vec::with_capacity(plan.refusals.len());
    for (i, r) in plan.refusals.iter().enumerate() {
        let failure = r.failure();
        marks.push(crate::store::refusals::RefusedDelta {
            anchor_id: r.row.anchor_id.as_str(),
            leaf_index: plan.refusal_leaf(i),
            sequence: r.refusal.at.sequence,
            refusal: r.refusal.canonical_json(),
            failure: serde_json::to_string(&failure)?,
        });
        let month = crate::quota::period(r.row.received_at).to_string();
        *refunds
            .entry((r.row.tenant_id.as_str(), month))
            .or_insert(0) += 1;
        events.push(NewEvent {
            id: EventId::from_text(format!("evt_failed_{}", r.row.anchor_id)),
            tenant_id: r.row.tenant_id.clone(),
            kind: events::EventKind::VerificationFailed,
            payload: views::delta_failed_event_payload(&r.row, failure)?,
        });
    }
    let mut out = crate::store::refusals::mark_refused_all(&marks, head.tree_size, now)?;
    let refunds: Vec<(&str, String, u64)> =
        refunds.into_iter().map(|((t, m), n)| (t, m, n)).collect();
    out.extend(meters::refund_deltas_all(&refunds)?);
    out.extend(events::insert_once_all(&events, now)?);
    Ok(out)
}

/// The round's liabilities statements PUBLISHED, and those they supersede
/// marked so (issue 31).
fn statement_marks<'a>(plan: &'a Plan, head: &'a HeadRow, now: u64) -> ApiResult<Vec<Query<'a>>> {
    if plan.statements.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<(&str, u64)> = plan
        .statements
        .iter()
        .enumerate()
        .map(|(i, st)| (st.id.as_str(), plan.statement_leaf(i)))
        .collect();
    let superseded: Vec<(&Hash32, &Hash32)> = plan
        .statements
        .iter()
        .filter_map(|st| Some((st.supersedes.as_ref()?, st.item_hash.as_ref()?)))
        .collect();
    liabilities::mark_published_all(&marks, &superseded, head.tree_size, now)
}

/// `delta.verified`: the delta as it reads once this round commits.
fn delta_verified_event(
    d: &DeltaRow,
    v: &deltas::VerifiedDelta<'_>,
    note_hash: &Hash32,
) -> ApiResult<NewEvent> {
    let mut row = d.clone();
    row.status = ItemStatus::Verified;
    row.leaf_index = Some(v.leaf_index);
    row.tree_size = Some(v.tree_size);
    row.ledger_seq = Some(v.ledger_seq);
    row.balance_after = Some(v.balance_after);
    row.verified_at = Some(v.verified_at);
    Ok(NewEvent {
        id: EventId::new()?,
        tenant_id: d.tenant_id.clone(),
        kind: events::EventKind::DeltaVerified,
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
        id: EventId::new()?,
        tenant_id: c.tenant_id.clone(),
        kind: events::EventKind::CheckpointVerified,
        payload: serde_json::to_string(&view)?,
    })
}
