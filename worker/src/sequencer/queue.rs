//! What a sequencer round may take: the shard's queued items, read in one
//! batch round trip with the latest head (one snapshot), in the order the
//! round takes them (issue 27, fair across tenants):
//!
//! - queued facts and checkpoints first (few; never starved by deltas);
//! - then the first [`FAIR_PER_TENANT`] queued deltas of each of up to
//!   [`FAIR_TENANTS`] tenants with deltas queued, round-robin from a cursor
//!   the run carries (the tenants after the last round's);
//! - then the shard's queued deltas in arrival order.
//!
//! Each tenant's deltas among them are a prefix of its queue in arrival
//! order, and stay one under any prefix of the list (its fair share comes
//! first, the rest after), so a ledger's sequence and balance-after keep
//! emit order; and a tenant's new delta is taken by the next round
//! whatever another tenant has queued.

use std::collections::BTreeSet;

use serde::Deserialize;
use worker::D1Database;

use super::budget::{self, ItemCost};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::deltas::{self, DeltaRow};
use crate::store::facts::{self, FactRow};
use crate::store::liabilities::{self as liabilities, StatementRow};
use crate::store::log::{self as log_store, HeadRow};
use crate::store::{self, rows};

/// Tenants whose fair share a round reads.
pub const FAIR_TENANTS: u64 = 64;
/// Each such tenant's fair share of a round: its first deltas queued.
pub const FAIR_PER_TENANT: u64 = 16;
/// Facts, and checkpoints, a round takes at most.
pub const OTHER_ITEMS_MAX: u64 = 100;

/// One queued item.
#[derive(Clone)]
pub enum Item {
    Delta(DeltaRow),
    Fact(FactRow),
    Checkpoint(CheckpointRow),
    /// A liabilities statement (issue 31): its item hash.
    Statement(StatementRow),
}

impl Item {
    pub fn key(&self) -> String {
        match self {
            Item::Delta(d) => format!("delta:{}", d.anchor_id),
            Item::Fact(f) => format!("fact:{}:{}", f.tenant_id, f.content_hash),
            Item::Checkpoint(c) => format!("checkpoint:{}", c.id),
            Item::Statement(s) => format!("liabilities:{}", s.id),
        }
    }

    pub fn tenant(&self) -> &TenantId {
        match self {
            Item::Delta(d) => &d.tenant_id,
            Item::Fact(f) => &f.tenant_id,
            Item::Checkpoint(c) => &c.tenant_id,
            Item::Statement(s) => &s.tenant_id,
        }
    }

    pub fn cost(&self) -> ItemCost {
        match self {
            Item::Delta(d) => {
                let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
                let free = text(&d.metadata)
                    + 2 * (text(&d.reason) + text(&d.reference_id) + d.customer_id.as_str().len());
                ItemCost {
                    ledger: Some((d.tenant_id.clone(), d.customer_id.clone())),
                    tenant: Some(d.tenant_id.clone()),
                    event_bytes: Some(budget::EVENT_FIXED_BYTES + free),
                }
            }
            Item::Fact(_) | Item::Statement(_) => ItemCost {
                ledger: None,
                tenant: None,
                event_bytes: None,
            },
            Item::Checkpoint(c) => ItemCost {
                ledger: None,
                tenant: None,
                event_bytes: Some(budget::EVENT_FIXED_BYTES + c.customer_id.as_str().len()),
            },
        }
    }
}

pub fn costs(items: &[Item]) -> Vec<ItemCost> {
    items.iter().map(Item::cost).collect()
}

/// One read of the queue.
pub struct Snapshot {
    pub head: HeadRow,
    /// The tree size the log's tiles cover (below the head's: a log still
    /// migrating to tiles, `ledger::tiles`).
    pub tiles_size: u64,
    /// The candidates, in the order a round takes them.
    pub items: Vec<Item>,
    /// Where the next round's fair shares start.
    pub next_cursor: String,
}

/// Queries [`read`] makes (one batch).
pub const READ_QUERIES: usize = 7;

/// Reads the head and the queued items after the tenant `cursor` (see the
/// module docs), leaving out those `skip` names (set aside by this run).
///
/// # Errors
/// D1 errors, or a log without a head.
pub async fn read(db: &D1Database, cursor: &str, skip: &BTreeSet<String>) -> ApiResult<Snapshot> {
    #[derive(Deserialize)]
    struct Tenant {
        tenant: String,
    }
    #[derive(Deserialize)]
    struct Value {
        value: String,
    }
    let extra = skip.len() as u64;
    let first = budget::ROUND_ITEMS_MAX as u64 + extra;
    let others = OTHER_ITEMS_MAX + extra;
    let results = store::batch(
        db,
        vec![
            log_store::latest_head_statement()?,
            log_store::tiles_size_statement()?,
            deltas::queued_tenants_statement(cursor, FAIR_TENANTS)?,
            deltas::queued_fair_statement(cursor, FAIR_TENANTS, FAIR_PER_TENANT, first)?,
            facts::queued_statement(others)?,
            checkpoints::queued_statement(others)?,
            liabilities::queued_statement(others)?,
        ],
    )
    .await?;
    let head: HeadRow = rows::<HeadRow>(&results, 0)?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("the log has no head"))?;
    let tiles_size = match rows::<Value>(&results, 1)?.into_iter().next() {
        Some(v) => v
            .value
            .parse()
            .map_err(|_| ApiError::internal(format!("tiles_size {:?}", v.value)))?,
        None => 0,
    };
    let tenants: Vec<Tenant> = rows(&results, 2)?;
    let next_cursor = match tenants.last() {
        Some(t) if tenants.len() as u64 >= FAIR_TENANTS => t.tenant.clone(),
        _ => String::new(),
    };
    let facts = rows::<FactRow>(&results, 4)?.into_iter().map(Item::Fact);
    let checkpoints = rows::<CheckpointRow>(&results, 5)?
        .into_iter()
        .map(Item::Checkpoint);
    let statements = rows::<StatementRow>(&results, 6)?
        .into_iter()
        .map(Item::Statement);
    let deltas = rows::<DeltaRow>(&results, 3)?.into_iter().map(Item::Delta);
    let items = facts
        .take(OTHER_ITEMS_MAX as usize + skip.len())
        .chain(checkpoints)
        .chain(statements)
        .chain(deltas)
        .filter(|i| !skip.contains(&i.key()))
        .collect();
    Ok(Snapshot {
        head,
        tiles_size,
        items,
        next_cursor,
    })
}

/// One shard's sequencer progress (`GET /admin/shards`, issue 27).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardProgress {
    pub log: String,
    pub env: &'static str,
    pub shard: u32,
    pub queued_deltas: u64,
    pub queued_facts: u64,
    pub queued_checkpoints: u64,
    /// How long the oldest queued item has waited, in milliseconds.
    pub oldest_queued_age_ms: Option<u64>,
    /// Events the webhook dispatcher has not moved yet.
    pub outbox_pending: u64,
    pub tree_size: u64,
    /// The tree size the log's tiles cover: below `treeSize` while a log
    /// kept before tiles is migrated.
    pub tiles_size: u64,
}

/// Every shard's progress, read one after the other.
///
/// # Errors
/// D1 errors.
pub async fn progress(app: &App) -> ApiResult<Vec<ShardProgress>> {
    let mut out = Vec::new();
    for log in crate::ledger::shard::all(app) {
        let db = crate::ledger::db(app, log)?;
        let p = deltas::progress(&db)
            .await?
            .ok_or_else(|| ApiError::internal("progress row missing"))?;
        out.push(ShardProgress {
            log: log.path_name(),
            env: log.env.as_str(),
            shard: log.shard,
            queued_deltas: p.queued_deltas,
            queued_facts: p.queued_facts,
            queued_checkpoints: p.queued_checkpoints,
            oldest_queued_age_ms: p.oldest_queued_at.map(|at| app.now_ms.saturating_sub(at)),
            outbox_pending: p.outbox_pending,
            tree_size: p.tree_size.unwrap_or(0),
            tiles_size: p.tiles_size.and_then(|t| t.parse().ok()).unwrap_or(0),
        });
    }
    Ok(out)
}
