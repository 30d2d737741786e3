//! The running counts, balances and window frontiers of the ledgers and
//! tenants a sequencer round touches (see `sequencer`).

use std::collections::BTreeMap;

use bvs_core::amount::Amount;
use bvs_core::conditions::{Book, Failed, Position};
use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use worker::D1Result;

use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store::deltas::DeltaRow;
use crate::store::ledgers::{
    self, FloorRow, FrontierRow, LedgerRow, LedgerUpdate, TenantWindowRow,
};
use crate::store::rows;
use crate::store::Query;

/// A ledger's balance of one asset: tenant, customer, asset (issue 43).
type LedgerKey = (TenantId, CustomerId, Asset);

/// One ledger's state of one asset through a round.
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
pub struct Balances {
    ledgers: BTreeMap<LedgerKey, LedgerRound>,
    tenants: BTreeMap<TenantId, TenantRound>,
    /// The tenants' default floors, by asset code (`''`: the default asset).
    floors: BTreeMap<(TenantId, String), Amount>,
}

impl Balances {
    /// The reads of the ledgers and tenants `deltas` touch, for the round's
    /// read batch (four statements: [`Balances::from_results`] reads them).
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn reads<'a>(deltas: &[DeltaRow], window: &'a str) -> ApiResult<[Query<'a>; 4]> {
        let mut keys: Vec<(TenantId, CustomerId, String)> = deltas
            .iter()
            .map(|d| (d.tenant_id.clone(), d.customer_id.clone(), d.asset.key()))
            .collect();
        keys.sort();
        keys.dedup();
        let mut tenant_ids: Vec<TenantId> = keys.iter().map(|(t, _, _)| t.clone()).collect();
        tenant_ids.dedup();
        ledgers::round_reads(&keys, &tenant_ids, window)
    }

    /// The balances from the results of [`Balances::reads`] at `at`.
    ///
    /// # Errors
    /// Rows that do not read, or a stored frontier that does not parse.
    pub fn from_results(results: &[D1Result], at: usize) -> ApiResult<Balances> {
        let mut ledgers = BTreeMap::new();
        for l in rows::<LedgerRow>(results, at)? {
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
            ledgers.insert((l.tenant_id, l.customer_id, l.asset), round);
        }
        // The current window's frontiers, per ledger and per tenant.
        for f in rows::<FrontierRow>(results, at + 1)? {
            if let Some(l) = ledgers.get_mut(&(f.tenant_id, f.customer_id, f.asset)) {
                l.frontier = Frontier::from_text(&f.frontier).map_err(ApiError::internal)?;
            }
        }
        let mut tenants = BTreeMap::new();
        for w in rows::<TenantWindowRow>(results, at + 2)? {
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
        let floors = rows::<FloorRow>(results, at + 3)?
            .into_iter()
            .map(|f| ((f.tenant_id, f.code), f.balance_at_least))
            .collect();
        Ok(Balances {
            ledgers,
            tenants,
            floors,
        })
    }

    /// Checks the conditions of `deltas`, in ledger order, against the
    /// positions read and the tenants' default floors (core's
    /// [`Book`]: one delta at a time, each against its own ledger's
    /// running position, refusals not counted). Returns, per delta, the
    /// condition it fails and the position it met, or `None` when it is
    /// counted.
    pub fn screen(&self, deltas: &[DeltaRow]) -> Vec<Option<(Failed, Position)>> {
        // A round with no condition to check (no delta asks one, no tenant
        // has a floor) refuses nothing: no book to build.
        if self.floors.is_empty() && deltas.iter().all(|d| d.conditions.is_empty()) {
            return vec![None; deltas.len()];
        }
        let positions = self
            .ledgers
            .iter()
            .map(|(k, l)| {
                let at = Position {
                    sequence: l.count,
                    balance: l.balance,
                };
                (k.clone(), at)
            })
            .collect();
        let mut book = Book::new(positions);
        deltas
            .iter()
            .map(|d| {
                let key = (d.tenant_id.clone(), d.customer_id.clone(), d.asset.clone());
                let code = d.asset.code().unwrap_or("").to_string();
                let floor = self.floors.get(&(d.tenant_id.clone(), code)).copied();
                book.offer(&key, d.delta, &d.conditions, floor).err()
            })
            .collect()
    }

    /// Adds one delta at `leaf_index`; returns its sequence number in its
    /// ledger's asset and that asset's balance after it. The tenant's
    /// window nets the default asset's deltas only (amounts of different
    /// assets are never added), its frontier covers every asset.
    pub fn add(&mut self, d: &DeltaRow, leaf_index: u64, window: &str) -> ApiResult<(u64, Amount)> {
        let (item, delta) = (d.item_hash, d.delta);
        let entry = self
            .ledgers
            .get_mut(&(d.tenant_id.clone(), d.customer_id.clone(), d.asset.clone()))
            .ok_or_else(|| ApiError::internal(format!("no ledger for delta {}", d.anchor_id)))?;
        entry.count += 1;
        entry.balance = entry
            .balance
            .checked_add(delta)
            .map_err(|e| ApiError::internal(format!("balance overflow: {e}")))?;
        entry.latest_items_root = Some(d.proof_root());
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
        if d.asset.is_default() {
            tenant.net = tenant
                .net
                .checked_add(delta)
                .map_err(|e| ApiError::internal(format!("net overflow: {e}")))?;
        }
        Ok((entry.count, entry.balance))
    }

    /// The ledger aggregates and windows, and the tenant windows, as they
    /// stand after the round: one statement per table (issue 27).
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn statements<'a>(self, now: u64, window: &'a str) -> ApiResult<Vec<Query<'a>>> {
        let updates: Vec<LedgerUpdate<'_>> = self
            .ledgers
            .iter()
            .filter(|(_, l)| l.count > l.old_count)
            .map(|((tenant_id, customer_id, asset), l)| LedgerUpdate {
                tenant_id,
                customer_id,
                asset,
                old_count: l.old_count,
                new_count: l.count,
                old_balance: l.old_balance,
                new_balance: l.balance,
                latest_items_root: l.latest_items_root,
                frontier: l.frontier.to_text(),
                first_leaf: l.first_leaf.unwrap_or(l.last_leaf),
                last_leaf: l.last_leaf,
            })
            .collect();
        let mut out = Vec::new();
        if !updates.is_empty() {
            out.extend(ledgers::update_all(&updates, window, now)?);
        }
        let windows: Vec<TenantWindowRow> = self
            .tenants
            .into_values()
            .map(|mut t| {
                t.row.frontier = t.frontier.to_text();
                t.row.net_delta = t.net;
                t.row
            })
            .collect();
        if !windows.is_empty() {
            out.extend(ledgers::upsert_tenant_windows(&windows, window)?);
        }
        Ok(out)
    }
}
