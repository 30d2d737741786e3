//! The sequencer: appends every QUEUED item of an environment to its log,
//! signs the new tree head, and marks the items VERIFIED, all in one atomic
//! D1 batch per round.
//!
//! Safe under redelivery and races: a round reads the tree size before the
//! queued items, and writes leaves, stored hashes and the head under primary
//! keys, so two rounds starting from the same size cannot both commit, and
//! an item already VERIFIED is never read again.

use std::collections::BTreeMap;

use bvs_core::amount::Amount;
use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::TreeSize;
use bvs_core::note;
use bvs_core::types::{Env, Period};
use worker::Date;

use super::{db, fetch_missing, head_or_init, LogKey};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::store::ledger as store;
use crate::{ids, views};

/// Items appended per round: keeps one D1 batch well within its limits.
pub const ROUND_ITEMS_MAX: usize = 400;
/// Rounds per invocation; the next doorbell or sweep continues.
pub const ROUNDS_MAX: usize = 25;

/// Runs rounds until nothing is queued (or `ROUNDS_MAX`). Returns the number
/// of items appended.
pub async fn run(app: &App, env: Env) -> ApiResult<u64> {
    let mut total = 0;
    for _ in 0..ROUNDS_MAX {
        let n = round(app, env).await?;
        if n == 0 {
            break;
        }
        total += n;
    }
    Ok(total)
}

struct Pending {
    item: Hash32,
    kind: &'static str,
    ref_id: String,
    tenant_id: String,
}

async fn round(app: &App, env: Env) -> ApiResult<u64> {
    let db = db(app, env)?;
    // The size first, then the items: see the module docs.
    let head = head_or_init(app, env).await?;
    let old_size = head.tree_size;
    let deltas = store::queued_deltas(&db, ROUND_ITEMS_MAX).await?;
    let facts = store::queued_facts(&db, ROUND_ITEMS_MAX - deltas.len()).await?;
    let checkpoints =
        store::queued_checkpoints(&db, ROUND_ITEMS_MAX - deltas.len() - facts.len()).await?;
    if deltas.is_empty() && facts.is_empty() && checkpoints.is_empty() {
        return Ok(0);
    }

    let mut pending = Vec::with_capacity(deltas.len() + facts.len());
    for d in &deltas {
        pending.push(Pending {
            item: store::parse_hash(&d.item_hash)?,
            kind: "delta",
            ref_id: d.anchor_id.clone(),
            tenant_id: d.tenant_id.clone(),
        });
    }
    for f in &facts {
        pending.push(Pending {
            item: store::parse_hash(&f.content_hash)?,
            kind: "fact",
            ref_id: f.content_hash.clone(),
            tenant_id: f.tenant_id.clone(),
        });
    }
    for c in &checkpoints {
        pending.push(Pending {
            item: store::parse_hash(&c.merkle_root)?,
            kind: "checkpoint",
            ref_id: c.id.clone(),
            tenant_id: c.tenant_id.clone(),
        });
    }
    let count = pending.len() as u64;
    let new_size = old_size + count;

    // The new stored hashes, root and signed head.
    let mut hashes = StoredHashes::new();
    let need = log::indexes_for_append(TreeSize(old_size), count).map_err(ApiError::internal)?;
    fetch_missing(&db, &mut hashes, &need).await?;
    let items: Vec<Hash32> = pending.iter().map(|p| p.item).collect();
    let written = log::append(TreeSize(old_size), &items, &hashes).map_err(ApiError::internal)?;
    for (i, h) in &written {
        hashes.insert(*i, *h);
    }
    let need_root = log::indexes_for_root(TreeSize(new_size)).map_err(ApiError::internal)?;
    fetch_missing(&db, &mut hashes, &need_root).await?;
    let root = log::tree_root(TreeSize(new_size), &hashes).map_err(ApiError::internal)?;
    let key = LogKey::load(app, env)?;
    let note_text = key.sign(new_size, &root)?;
    let note_hash = note::tree_head_hash(&note_text).to_hex();
    let now = Date::now().as_millis();
    let window = Period::containing(i64::try_from(now).unwrap_or(i64::MAX)).to_string();

    let mut statements = store::insert_stored_hashes(&db, &written)?;
    let leaves: Vec<store::NewLeaf> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| store::NewLeaf {
            leaf_index: old_size + i as u64,
            item_hash: p.item.to_hex(),
            kind: p.kind,
            ref_id: p.ref_id.clone(),
            tenant_id: p.tenant_id.clone(),
        })
        .collect();
    statements.extend(store::insert_leaves(&db, &leaves, now)?);

    // Ledger sequence numbers and running balances.
    let keys: Vec<(String, String)> = {
        let mut k: Vec<(String, String)> = deltas
            .iter()
            .map(|d| (d.tenant_id.clone(), d.customer_id.clone()))
            .collect();
        k.sort();
        k.dedup();
        k
    };
    let mut ledgers: BTreeMap<(String, String), LedgerRound> = BTreeMap::new();
    for l in store::ledgers_for(&db, &keys).await? {
        let balance = amount(&l.computed_balance)?;
        ledgers.insert(
            (l.tenant_id.clone(), l.customer_id.clone()),
            LedgerRound {
                old_count: l.verified_count,
                old_balance: balance,
                count: l.verified_count,
                balance,
                latest_items_root: String::new(),
                frontier: Frontier::new(),
                first_leaf: None,
                last_leaf: 0,
            },
        );
    }
    // The current window's frontiers, per ledger and per tenant.
    for (t, c, text) in store::window_frontiers(&db, &keys, &window).await? {
        if let Some(l) = ledgers.get_mut(&(t, c)) {
            l.frontier = Frontier::from_text(&text).map_err(ApiError::internal)?;
        }
    }
    let tenants: Vec<String> = {
        let mut t: Vec<String> = keys.iter().map(|(t, _)| t.clone()).collect();
        t.dedup();
        t
    };
    let mut tenant_windows: BTreeMap<String, (store::TenantWindowRow, Frontier, Amount)> =
        BTreeMap::new();
    for w in store::tenant_windows_for(&db, &tenants, &window).await? {
        let f = Frontier::from_text(&w.frontier).map_err(ApiError::internal)?;
        let net = amount(&w.net_delta)?;
        tenant_windows.insert(w.tenant_id.clone(), (w, f, net));
    }
    let mut events = Vec::with_capacity(deltas.len());
    for (i, d) in deltas.iter().enumerate() {
        let leaf_index = old_size + i as u64;
        let item = store::parse_hash(&d.item_hash)?;
        let delta = amount(&d.delta)?;
        let entry = ledgers
            .get_mut(&(d.tenant_id.clone(), d.customer_id.clone()))
            .ok_or_else(|| ApiError::internal(format!("no ledger for delta {}", d.anchor_id)))?;
        entry.count += 1;
        entry.balance = entry
            .balance
            .checked_add(delta)
            .map_err(|e| ApiError::internal(format!("balance overflow: {e}")))?;
        entry.latest_items_root.clone_from(&d.items_root);
        entry.frontier.push(&item);
        entry.first_leaf.get_or_insert(leaf_index);
        entry.last_leaf = leaf_index;
        let tw = tenant_windows
            .entry(d.tenant_id.clone())
            .or_insert_with(|| {
                (
                    store::TenantWindowRow {
                        tenant_id: d.tenant_id.clone(),
                        window: window.clone(),
                        deltas_count: 0,
                        net_delta: String::new(),
                        first_leaf: leaf_index,
                        last_leaf: leaf_index,
                        frontier: String::new(),
                    },
                    Frontier::new(),
                    Amount::ZERO,
                )
            });
        tw.0.deltas_count += 1;
        tw.0.last_leaf = leaf_index;
        tw.1.push(&item);
        tw.2 =
            tw.2.checked_add(delta)
                .map_err(|e| ApiError::internal(format!("net overflow: {e}")))?;
        let verified = store::VerifiedDelta {
            anchor_id: &d.anchor_id,
            leaf_index,
            tree_size: new_size,
            ledger_seq: entry.count,
            balance_after: entry.balance.to_string(),
            verified_at: now,
        };
        statements.push(store::mark_delta_verified(&db, &verified)?);
        let mut row = d.clone();
        row.status = "VERIFIED".to_string();
        row.leaf_index = Some(verified.leaf_index);
        row.tree_size = Some(new_size);
        row.ledger_seq = Some(verified.ledger_seq);
        row.balance_after = Some(verified.balance_after.clone());
        row.verified_at = Some(now);
        let payload = views::delta_event_payload(&row, &note_hash)?;
        events.push(store::NewEvent {
            id: ids::new_id("evt")?,
            tenant_id: d.tenant_id.clone(),
            kind: "delta.verified",
            payload,
        });
    }
    for ((tenant_id, customer_id), l) in &ledgers {
        statements.extend(store::update_ledger(
            &db,
            &store::LedgerUpdate {
                tenant_id,
                customer_id,
                old_count: l.old_count,
                new_count: l.count,
                old_balance: l.old_balance.to_string(),
                new_balance: l.balance.to_string(),
                verified_at: now,
                latest_items_root: &l.latest_items_root,
                window: window.clone(),
                frontier: l.frontier.to_text(),
                first_leaf: l.first_leaf.unwrap_or(l.last_leaf),
                last_leaf: l.last_leaf,
            },
        )?);
    }
    for (mut row, frontier, net) in tenant_windows.into_values() {
        row.frontier = frontier.to_text();
        row.net_delta = net.to_string();
        statements.push(store::upsert_tenant_window(&db, &row)?);
    }
    for (i, f) in facts.iter().enumerate() {
        let leaf_index = old_size + deltas.len() as u64 + i as u64;
        statements.push(store::mark_fact_verified(
            &db,
            &f.tenant_id,
            &f.content_hash,
            leaf_index,
            new_size,
            now,
        )?);
    }
    for (i, c) in checkpoints.iter().enumerate() {
        let leaf_index = old_size + (deltas.len() + facts.len() + i) as u64;
        statements.push(store::mark_checkpoint_committed(
            &db, &c.id, leaf_index, new_size, now,
        )?);
        let mut row = c.clone();
        row.status = "COMMITTED".to_string();
        row.leaf_index = Some(leaf_index);
        row.tree_size = Some(new_size);
        row.committed_at = Some(now);
        events.push(store::NewEvent {
            id: ids::new_id("evt")?,
            tenant_id: c.tenant_id.clone(),
            kind: "checkpoint.verified",
            payload: serde_json::to_string(&views::CheckpointView::from_row(
                &row,
                Some(&note_hash),
            ))?,
        });
    }
    statements.extend(store::insert_events(&db, &events, now)?);
    statements.push(store::insert_head(
        &db,
        &store::HeadRow {
            tree_size: new_size,
            root: root.to_hex(),
            note: note_text,
            note_hash,
            created_at: now,
        },
    )?);
    crate::store::batch(&db, statements).await?;
    Ok(count)
}

/// One ledger's state through a round.
struct LedgerRound {
    old_count: u64,
    old_balance: Amount,
    count: u64,
    balance: Amount,
    latest_items_root: String,
    frontier: Frontier,
    first_leaf: Option<u64>,
    last_leaf: u64,
}

fn amount(text: &str) -> ApiResult<Amount> {
    Amount::from_db_text(text)
        .map_err(|e| ApiError::internal(format!("stored amount {text:?}: {e}")))
}
