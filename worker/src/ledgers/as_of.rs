//! A ledger's balance as of a moment (issue 43, docs/balance.md "As of"),
//! with the proof a client checks offline (core's `verify::verify_as_of`).
//!
//! Basis `verified`: the boundary is the last delta verified at or before
//! the moment, found within one month's window (the stored balance after
//! it is the answer: no replay); the proof lists at most
//! `AS_OF_PROOF_DELTAS_MAX` deltas before it and the next one, each with
//! its inclusion into the newest witnessed head that covers them. Three
//! round trips: the boundary, the span, the proofs. Basis `declared`: the
//! ledger's deltas (at most `AS_OF_DECLARED_DELTAS_MAX`) are summed by
//! their declaredTimestamp at the latest head, which the answer names.

use bvs_core::amount::Amount;
use bvs_core::log::HASH_SCHEME;
use bvs_core::types::{Asset, CustomerId, Period};
use bvs_core::verify::{
    AsOf, AsOfBasis, AsOfDelta, AsOfFrom, AsOfProof, AS_OF_DECLARED_DELTAS_MAX,
    AS_OF_PROOF_DELTAS_MAX,
};
use bvs_core::LeafIndex;
use worker::D1Database;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::ledger::tiles::inclusion_proofs_with;
use crate::ledger::{LogId, LogKey};
use crate::store::as_of;
use crate::store::deltas::DeltaRow;
use crate::views;

/// Whose balance, of which asset, as of when and by which time.
pub struct AsOfRequest<'a> {
    pub tenant_id: &'a TenantId,
    pub log: LogId,
    pub customer_id: &'a CustomerId,
    pub asset: &'a Asset,
    pub at_ms: u64,
    pub basis: AsOfBasis,
}

/// The balance as of `r.at_ms` with its proof.
///
/// # Errors
/// 404 for an unknown ledger; 422 for a declared balance of a ledger with
/// more than `AS_OF_DECLARED_DELTAS_MAX` deltas; D1 errors.
pub async fn as_of(app: &App, db: &D1Database, r: &AsOfRequest<'_>) -> ApiResult<AsOf> {
    let key = (r.customer_id, r.asset);
    let (from, to, boundary) = match r.basis {
        AsOfBasis::Verified => {
            let b = boundary(db, r)
                .await?
                .and_then(|d| d.ledger_seq)
                .unwrap_or(0);
            (b.saturating_sub(AS_OF_PROOF_DELTAS_MAX), b + 1, b)
        }
        AsOfBasis::Declared => (0, AS_OF_DECLARED_DELTAS_MAX + 1, 0),
    };
    let span = as_of::span(db, r.tenant_id, key, (from.max(1), to)).await?;
    let ledger = span_ledger(r, span.ledger)?;
    let head = span.head.ok_or_else(|| {
        ApiError::Unprocessable(
            "The log has no signed tree head yet: nothing is verified to prove a balance with"
                .into(),
        )
    })?;
    // The delta at `from` gives the starting balance; the rest are listed.
    let (start, listed): (Vec<DeltaRow>, Vec<DeltaRow>) = span
        .deltas
        .into_iter()
        .filter(|d| d.ledger_seq.is_some_and(|s| s <= ledger.verified_count))
        .partition(|d| d.ledger_seq == Some(from) && from > 0);
    let from = AsOfFrom {
        sequence: from,
        balance: start
            .first()
            .and_then(|d| d.balance_after)
            .unwrap_or(Amount::ZERO),
    };
    let mut items = listed.iter().map(item).collect::<ApiResult<Vec<_>>>()?;
    let leaves: Vec<u64> = items.iter().map(|d| d.leaf_index.0).collect();
    let needed = leaves.iter().max().map_or(0, |l| l + 1);
    let (size, tree_head, witnessed) = crate::witness::proof_head(&head, &span.witnessed, needed);
    let proofs = inclusion_proofs_with(db, &leaves, size, Vec::new()).await?;
    for (d, p) in items.iter_mut().zip(proofs) {
        d.inclusion_proof = p;
    }
    let mut proof = AsOfProof {
        hash_scheme: HASH_SCHEME.name().to_string(),
        tree_head,
        public_key: LogKey::load(app, r.log)?.verifier_key()?,
        witnessed: Some(witnessed),
        from,
        deltas: Vec::new(),
        next: None,
        ledger_deltas: None,
    };
    let at = views::iso(r.at_ms);
    match r.basis {
        AsOfBasis::Verified => Ok(verified(at, boundary, &listed, items, proof)),
        AsOfBasis::Declared => {
            let totals = declared_totals(&listed, r.at_ms)?;
            proof.ledger_deltas = Some(items.len() as u64);
            proof.deltas = items;
            Ok(totals.with_proof(at, AsOfBasis::Declared, proof))
        }
    }
}

/// A balance as of a moment without its proof: what the customer route
/// lists for each asset (derive's `asOf` gives each its proof). Basis
/// `verified`: the boundary's one read, its stored balance-after; basis
/// `declared`: the ledger's sum, with no inclusion proof read.
pub struct Totals {
    pub balance: Amount,
    pub deltas_count: u64,
    pub last_delta: Option<String>,
}

impl Totals {
    fn with_proof(self, at: String, basis: AsOfBasis, proof: AsOfProof) -> AsOf {
        AsOf {
            at,
            basis,
            balance: self.balance,
            deltas_count: self.deltas_count,
            last_delta: self.last_delta,
            proof,
        }
    }
}

/// The [`Totals`] of `r`.
///
/// # Errors
/// As [`as_of`].
pub async fn totals(db: &D1Database, r: &AsOfRequest<'_>) -> ApiResult<Totals> {
    let key = (r.customer_id, r.asset);
    match r.basis {
        AsOfBasis::Verified => {
            let b = boundary(db, r).await?;
            Ok(Totals {
                balance: b
                    .as_ref()
                    .and_then(|d| d.balance_after)
                    .unwrap_or(Amount::ZERO),
                deltas_count: b.as_ref().and_then(|d| d.ledger_seq).unwrap_or(0),
                last_delta: b.map(|d| d.anchor_id.to_string()),
            })
        }
        AsOfBasis::Declared => {
            let span =
                as_of::span(db, r.tenant_id, key, (1, AS_OF_DECLARED_DELTAS_MAX + 1)).await?;
            let ledger = span_ledger(r, span.ledger)?;
            let listed: Vec<DeltaRow> = span
                .deltas
                .into_iter()
                .filter(|d| d.ledger_seq.is_some_and(|s| s <= ledger.verified_count))
                .collect();
            declared_totals(&listed, r.at_ms)
        }
    }
}

/// The span's ledger: 404 when there is none; for a declared balance, 422
/// past `AS_OF_DECLARED_DELTAS_MAX` deltas.
fn span_ledger(
    r: &AsOfRequest<'_>,
    ledger: Option<crate::store::ledgers::LedgerRow>,
) -> ApiResult<crate::store::ledgers::LedgerRow> {
    let ledger = ledger.ok_or_else(|| super::no_ledger(r.customer_id, r.asset))?;
    if r.basis == AsOfBasis::Declared && ledger.verified_count > AS_OF_DECLARED_DELTAS_MAX {
        return Err(ApiError::Unprocessable(format!(
            "A declared balance sums the ledger's every delta; this one has {} (at most \
             {AS_OF_DECLARED_DELTAS_MAX}). Ask with asOfBasis=verified",
            ledger.verified_count
        )));
    }
    Ok(ledger)
}

/// The boundary delta (`None` before the ledger's first).
async fn boundary(db: &D1Database, r: &AsOfRequest<'_>) -> ApiResult<Option<DeltaRow>> {
    let month = Period::containing(i64::try_from(r.at_ms).unwrap_or(i64::MAX));
    let key = (r.customer_id, r.asset);
    let read = as_of::boundary(db, r.tenant_id, key, &month.to_string(), r.at_ms).await?;
    if read.ledger.is_none() {
        return Err(super::no_ledger(r.customer_id, r.asset));
    }
    Ok(read.boundary)
}

/// The verified answer: `items` are the deltas after `proof.from` through
/// the boundary and the one after it (when there is one).
fn verified(
    at: String,
    boundary: u64,
    listed: &[DeltaRow],
    mut items: Vec<AsOfDelta>,
    mut proof: AsOfProof,
) -> AsOf {
    if items.last().is_some_and(|d| d.ledger_seq > boundary) {
        proof.next = items.pop();
    }
    let balance = listed
        .iter()
        .find(|d| d.ledger_seq == Some(boundary))
        .and_then(|d| d.balance_after)
        .unwrap_or(proof.from.balance);
    proof.deltas = items;
    AsOf {
        at,
        basis: AsOfBasis::Verified,
        balance,
        deltas_count: boundary,
        last_delta: proof.deltas.last().map(|d| d.anchor_id.clone()),
        proof,
    }
}

/// The sum of the ledger's deltas `listed` declared at or before `at_ms`,
/// their number and the last of them (by declared time, then ledger order).
fn declared_totals(listed: &[DeltaRow], at_ms: u64) -> ApiResult<Totals> {
    let mut balance = Amount::ZERO;
    let mut count = 0;
    let mut last: Option<(u64, Option<u64>, String)> = None;
    for d in listed.iter().filter(|d| d.declared_at <= at_ms) {
        count += 1;
        balance = balance
            .checked_add(d.delta)
            .map_err(|e| ApiError::Unprocessable(format!("balance: {e}")))?;
        if last
            .as_ref()
            .is_none_or(|(lt, ls, _)| (d.declared_at, d.ledger_seq) > (*lt, *ls))
        {
            last = Some((d.declared_at, d.ledger_seq, d.anchor_id.to_string()));
        }
    }
    Ok(Totals {
        balance,
        deltas_count: count,
        last_delta: last.map(|(_, _, id)| id),
    })
}

/// A verified row as the proof lists it (its inclusion proof added once
/// read).
fn item(d: &DeltaRow) -> ApiResult<AsOfDelta> {
    let missing = || ApiError::internal("a verified delta without its log position");
    Ok(AsOfDelta {
        anchor_id: d.anchor_id.to_string(),
        item_hash: d.item_hash,
        delta: d.delta,
        ledger_seq: d.ledger_seq.ok_or_else(missing)?,
        block_timestamp: views::iso(d.verified_at.ok_or_else(missing)?),
        declared_timestamp: views::iso(d.declared_at),
        leaf_index: LeafIndex(d.leaf_index.ok_or_else(missing)?),
        inclusion_proof: Vec::new(),
        raw: views::raw_content(d)?,
    })
}
