//! Pinpointing compare: the caller's own list of a customer's deltas
//! against the ledger's verified ones, the first divergent delta named by
//! `bvs_core::pinpoint` (docs/balance.md, "Pinpointing a disagreement").
//!
//! A request compares at most [`PINPOINT_ENTRIES_MAX`] deltas a side. A
//! ledger with more verified deltas after the start is compared a page at
//! a time: the answer says `more` and, when the page agrees, where the next
//! page starts (`next.deltasAfter`, `next.startingBalance`).

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::pinpoint::{
    self, CallerEntry, Pinpoint, PinpointError, ServiceDelta, Start, PINPOINT_ENTRIES_MAX,
};
use bvs_core::types::{Asset, CustomerId};
use serde::Serialize;
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store;
use crate::store::ledgers::LedgerRow;

/// Where the caller's list starts: after the verified delta named by
/// `deltas_after` (its anchorId or itemsRoot; `None`: the ledger's first
/// delta), with `starting_balance` added to the ledger's balances (as
/// compare's `computedBalance` adds it).
pub struct Request {
    pub starting_balance: Amount,
    pub deltas_after: Option<String>,
    pub entries: Vec<CallerEntry>,
    /// Which of the customer's balances the list is of (issue 43).
    pub asset: Asset,
}

/// Where the next page starts when this one agrees.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Next {
    pub deltas_after: String,
    pub starting_balance: Amount,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub agrees: bool,
    /// Ledger deltas before the compared ones (the start's position).
    pub starting_deltas: u64,
    /// Ledger deltas compared (this page of the service's side).
    pub compared_deltas: u64,
    /// Entries of the caller's list.
    pub your_deltas: u64,
    /// The ledger has verified deltas after this page.
    pub more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Next>,
    #[serde(flatten)]
    pub pinpoint: Pinpoint,
}

/// Pinpoints `req.entries` against `customer_id`'s verified deltas.
///
/// # Errors
/// 404 for an unknown ledger or `deltasAfter`; 400 naming the entry that
/// cannot be matched (ambiguous or duplicate ids) or `deltas` beyond the
/// limit; 422 if a balance overflows.
pub async fn pinpoint(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    req: Request,
) -> ApiResult<Answer> {
    if req.entries.len() > PINPOINT_ENTRIES_MAX {
        return Err(too_many(req.entries.len()));
    }
    let key = (customer_id, &req.asset);
    let ledger_row = super::require_ledger(db, tenant_id, customer_id, &req.asset).await?;
    let (start_seq, ledger_balance) =
        start_after(db, tenant_id, key, &ledger_row, req.deltas_after.as_deref()).await?;
    let window = PINPOINT_ENTRIES_MAX as u64;
    let last = ledger_row
        .verified_count
        .min(start_seq.saturating_add(window));
    let service = service_deltas(db, tenant_id, key, start_seq, last).await?;
    let balance = req
        .starting_balance
        .checked_add(ledger_balance)
        .map_err(|e| ApiError::Unprocessable(format!("startingBalance: {e}")))?;
    let start = Start {
        deltas: start_seq,
        balance,
    };
    let found = pinpoint::pinpoint(start, &service, &req.entries).map_err(|e| match e {
        PinpointError::TooMany { .. } => too_many(req.entries.len()),
        PinpointError::AmbiguousId { index, field } => ApiError::field(
            format!("deltas[{index}].{field}"),
            "names more than one of the ledger's deltas; name it by itemHash or anchorId",
        ),
        PinpointError::DuplicateEntry { index, first } => ApiError::field(
            format!("deltas[{index}]"),
            format!("names the same delta as deltas[{first}]"),
        ),
        PinpointError::Amount(e) => ApiError::Unprocessable(format!("balance: {e}")),
        PinpointError::CountOverflow => ApiError::internal("delta count overflow"),
    })?;
    let more = ledger_row.verified_count > last;
    let next = match (more, found.agrees(), service.last()) {
        (true, true, Some(d)) => Some(Next {
            deltas_after: d.anchor_id.clone(),
            starting_balance: req.starting_balance,
        }),
        _ => None,
    };
    Ok(Answer {
        agrees: found.agrees(),
        starting_deltas: start_seq,
        compared_deltas: service.len() as u64,
        your_deltas: req.entries.len() as u64,
        more,
        next,
        pinpoint: found,
    })
}

/// Where the comparison starts: after `deltas_after` (an anchorId or an
/// itemsRoot), or at the ledger's beginning; its position and balance.
async fn start_after(
    db: &D1Database,
    tenant_id: &TenantId,
    key: (&CustomerId, &Asset),
    ledger_row: &LedgerRow,
    deltas_after: Option<&str>,
) -> ApiResult<(u64, Amount)> {
    let Some(after) = deltas_after else {
        return Ok((0, Amount::ZERO));
    };
    let kind = if Hash32::parse(after).is_ok() {
        "itemsRoot"
    } else {
        "anchorId"
    };
    super::derive::start_point(db, tenant_id, key, ledger_row, Some(after), kind)
        .await
        .map_err(|e| match e {
            ApiError::NotFound(_) => ApiError::NotFound(format!(
                "deltasAfter {after} is not a verified delta (anchorId or itemsRoot) of customer {}",
                key.0.as_str()
            )),
            other => other,
        })
}

/// The ledger's verified deltas at positions `start_seq + 1 ..= last`, as
/// the comparison reads them.
async fn service_deltas(
    db: &D1Database,
    tenant_id: &TenantId,
    key: (&CustomerId, &Asset),
    start_seq: u64,
    last: u64,
) -> ApiResult<Vec<ServiceDelta>> {
    let lines = if last > start_seq {
        store::deltas::lines_of_ledger(db, tenant_id, key, start_seq + 1, last).await?
    } else {
        Vec::new()
    };
    if lines.len() as u64 != last - start_seq {
        return Err(ApiError::internal(format!(
            "ledger {} has {} deltas at seq {}..={last}",
            key.0.as_str(),
            lines.len(),
            start_seq + 1
        )));
    }
    Ok(lines
        .into_iter()
        .map(|l| ServiceDelta {
            item_hash: l.item_hash,
            anchor_id: l.anchor_id.into_string(),
            reference_id: l.reference_id,
            amount: l.delta,
        })
        .collect())
}

fn too_many(n: usize) -> ApiError {
    ApiError::field(
        "deltas",
        format!(
            "must contain at most {PINPOINT_ENTRIES_MAX} entries (got {n}); compare a page at a time with deltasAfter"
        ),
    )
}
