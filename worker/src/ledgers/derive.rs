//! Derive: a ledger's balance replayed from a starting point (genesis, or
//! a verified delta named by itemsRoot or anchorId), paged, with its
//! per-window summaries.

use bvs_core::amount::Amount;
use bvs_core::derive;
use bvs_core::hash::Hash32;
use bvs_core::types::{
    Asset, CustomerId, Page, DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN, DERIVE_HINT_DELTAS_MIN,
};
use serde::Serialize;
use serde_json::{json, Value};
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::ids::{AnchorId, TenantId};
use crate::store::deltas::{DeltaRow, StartAt};
use crate::store::ledgers::{LedgerRow, WindowRow};
use crate::store::{self, ItemStatus};
use crate::views::{self, DeltaView};

/// Where a derivation starts, and which page of its deltas to list.
pub struct Start {
    pub starting_balance: Amount,
    /// `itemsRoot` or `anchorId`.
    pub checkpoint_type: String,
    /// `None`: genesis.
    pub checkpoint: Option<String>,
    pub page: Page,
    /// Which of the customer's balances (issue 43; the default asset
    /// when the request names none).
    pub asset: Asset,
}

/// A derivation of `customer_id`'s ledger from `start`.
///
/// # Errors
/// 404 for an unknown ledger or checkpoint; 422 for a long ledger without
/// a checkpoint, or a computed balance out of range.
pub async fn derive(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    start: Start,
) -> ApiResult<Derivation> {
    let Start {
        starting_balance,
        checkpoint_type,
        checkpoint,
        page,
        asset,
    } = start;
    let read = read(
        db,
        tenant_id,
        (customer_id, &asset),
        checkpoint.as_deref(),
        &checkpoint_type,
        &page,
    )
    .await?;
    let ledger_row = read.ledger;
    let balance_now = ledger_row.computed_balance;
    let (start_seq, start_balance) = start_of(
        customer_id,
        &ledger_row,
        checkpoint.as_deref(),
        &checkpoint_type,
        read.start.as_ref(),
    )?;
    let computed = derive::computed_balance(starting_balance, start_balance, balance_now)
        .map_err(|e| ApiError::Unprocessable(format!("computedBalance: {e}")))?;
    let total = ledger_row.verified_count.saturating_sub(start_seq);
    let to = (start_seq + page.offset() + page.limit()).min(ledger_row.verified_count);
    let rows: Vec<_> = read
        .deltas
        .into_iter()
        .filter(|d| d.ledger_seq <= Some(to))
        .collect();
    let deltas: Vec<DeltaView> = rows
        .iter()
        .map(DeltaView::from_row)
        .collect::<ApiResult<_>>()?;
    let refusals = refusals_until(&read.refusals, to)?;
    let windows = window_summaries(start_seq, read.windows, read.start, read.next)?;
    let latest = ledger_row.latest_items_root.map(|h| h.to_hex());
    let hint = hint(total, latest.as_deref(), computed);
    let data = Derivation {
        customer_id: customer_id.clone(),
        asset,
        ledger_id: ledger_row.ledger_id,
        starting_balance,
        starting_checkpoint: checkpoint.clone().unwrap_or_else(|| "genesis".to_string()),
        starting_checkpoint_type: checkpoint_type,
        computed_balance: computed,
        deltas_count: total,
        latest_checkpoint: latest.clone(),
        latest_receipt_id: latest.clone(),
        deltas,
        window_summaries: windows,
        verification_proof: verification_proof(latest.as_deref()),
        pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        hint,
        refusals,
        as_of: None,
    };
    Ok(data)
}

/// The refused deltas that met the page's positions up to `to` (issue 43).
fn refusals_until(rows: &[DeltaRow], to: u64) -> ApiResult<Vec<bvs_core::receipt::ProvenRefusal>> {
    rows.iter()
        .filter(|r| r.refusal_seq <= Some(to))
        .map(views::refusal_of)
        .collect()
}

/// The hint a long derivation carries: start from the latest checkpoint
/// next time.
fn hint(total: u64, latest: Option<&str>, computed: Amount) -> Option<Hint> {
    (total >= DERIVE_HINT_DELTAS_MIN).then(|| Hint {
        message: format!(
            "This derivation replays {total} deltas. Store latestCheckpoint and computedBalance, then pass them as \
             startingCheckpoint and startingBalance next time so only newer deltas are replayed."
        ),
        starting_checkpoint: latest.map(str::to_string),
        starting_checkpoint_type: "itemsRoot",
        starting_balance: computed,
    })
}

/// Where the derivation's deltas can be checked: the latest items root.
fn verification_proof(latest: Option<&str>) -> Value {
    json!({
        "itemsRoot": latest,
        "message": match latest {
            Some(r) => format!("Every delta listed is included in this environment's signed Merkle log; \
                check the latest one publicly at /api/v1/verify/{r}, and fetch a receipt for full inclusion proofs."),
            None => "No verified deltas yet.".to_string(),
        },
    })
}

/// What a derivation reads, in one round trip (one batch): the ledger,
/// the page of deltas after the starting point (its bounds are known up
/// front, counted from the start; rows past the ledger's count do not
/// exist), the windows ending after it and, from a checkpoint, the
/// starting delta and the one after it.
struct Read {
    ledger: LedgerRow,
    start: Option<DeltaRow>,
    next: Option<DeltaRow>,
    deltas: Vec<DeltaRow>,
    windows: Vec<WindowRow>,
    refusals: Vec<DeltaRow>,
}

async fn read(
    db: &D1Database,
    tenant_id: &TenantId,
    key: (&CustomerId, &Asset),
    checkpoint: Option<&str>,
    checkpoint_type: &str,
    page: &Page,
) -> ApiResult<Read> {
    let range = (page.offset() + 1, page.offset() + page.limit());
    let no_ledger = || super::no_ledger(key.0, key.1);
    let Some(c) = checkpoint else {
        let read = store::ledgers::ledger_page(db, tenant_id, key, range, 0).await?;
        return Ok(Read {
            ledger: read.ledger.ok_or_else(no_ledger)?,
            start: None,
            next: None,
            deltas: read.deltas,
            windows: read.windows,
            refusals: read.refusals,
        });
    };
    let start = if checkpoint_type == "anchorId" {
        StartAt::AnchorId(c)
    } else {
        StartAt::ItemsRoot(c)
    };
    let read = store::ledgers::ledger_page_from(db, tenant_id, key, start, range).await?;
    Ok(Read {
        ledger: read.ledger.ok_or_else(no_ledger)?,
        start: read.start,
        next: read.next,
        deltas: read.deltas,
        windows: read.windows,
        refusals: read.refusals,
    })
}

/// The starting point of a derivation (or a comparison) read from D1:
/// (ledger_seq, balance after it).
pub(super) async fn start_point(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    ledger_row: &LedgerRow,
    checkpoint: Option<&str>,
    checkpoint_type: &str,
) -> ApiResult<(u64, Amount)> {
    let row = match checkpoint {
        None => None,
        Some(c) if checkpoint_type == "anchorId" => {
            store::deltas::delta(db, tenant_id, &AnchorId::from_text(c))
                .await?
                .filter(|d| {
                    &d.customer_id == customer_id
                        && &d.asset == asset
                        && d.status == ItemStatus::Verified
                })
        }
        Some(c) => {
            store::deltas::of_ledger_by_items_root(db, tenant_id, customer_id, c, asset).await?
        }
    };
    start_of(
        customer_id,
        ledger_row,
        checkpoint,
        checkpoint_type,
        row.as_ref(),
    )
}

/// The starting point of a derivation, `row` being the delta `checkpoint`
/// names (None from genesis, or when it names no verified delta of this
/// ledger): (ledger_seq, balance after it).
fn start_of(
    customer_id: &CustomerId,
    ledger_row: &LedgerRow,
    checkpoint: Option<&str>,
    checkpoint_type: &str,
    row: Option<&DeltaRow>,
) -> ApiResult<(u64, Amount)> {
    let balance_now = ledger_row.computed_balance;
    Ok(match checkpoint {
        None => {
            if ledger_row.verified_count >= DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN {
                return Err(ApiError::Unprocessable(format!(
                    "This ledger has {} verified deltas; derivations of {DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN} or more \
                     require a startingCheckpoint. Use startingCheckpoint={} with startingBalance={} \
                     (the latestCheckpoint and computedBalance of your last derivation).",
                    ledger_row.verified_count,
                    ledger_row.latest_items_root.map(|h| h.to_hex()).unwrap_or_default(),
                    balance_now
                )));
            }
            (0, Amount::ZERO)
        }
        Some(c) => {
            let row = row.ok_or_else(|| {
                ApiError::NotFound(format!(
                    "startingCheckpoint {c} is not a verified {checkpoint_type} of customer {}",
                    customer_id.as_str()
                ))
            })?;
            let seq = row
                .ledger_seq
                .ok_or_else(|| ApiError::internal("verified delta without ledger_seq"))?;
            let bal = row.balance_after.unwrap_or(Amount::ZERO);
            (seq, bal)
        }
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Hint {
    message: String,
    starting_checkpoint: Option<String>,
    starting_checkpoint_type: &'static str,
    starting_balance: Amount,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Derivation {
    customer_id: CustomerId,
    /// Absent for the default asset.
    #[serde(skip_serializing_if = "Asset::is_default")]
    asset: Asset,
    ledger_id: Hash32,
    starting_balance: Amount,
    starting_checkpoint: String,
    starting_checkpoint_type: String,
    computed_balance: Amount,
    deltas_count: u64,
    latest_checkpoint: Option<String>,
    latest_receipt_id: Option<String>,
    deltas: Vec<DeltaView>,
    window_summaries: Vec<WindowView>,
    verification_proof: Value,
    pagination: Value,
    #[serde(rename = "_hint", skip_serializing_if = "Option::is_none")]
    hint: Option<Hint>,
    /// The debits refused at the page's positions (issue 43), each with
    /// its refusal item's hash and leaf (a receipt adds the proofs);
    /// absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refusals: Vec<bvs_core::receipt::ProvenRefusal>,
    /// The balance as of `asOf` with its proof (issue 43); only when asked.
    #[serde(rename = "asOf", skip_serializing_if = "Option::is_none")]
    as_of: Option<bvs_core::verify::AsOf>,
}

impl Derivation {
    /// The derivation with its `asOf` answer.
    pub fn with_as_of(self, as_of: bvs_core::verify::AsOf) -> Derivation {
        Derivation {
            as_of: Some(as_of),
            ..self
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WindowView {
    window: String,
    deltas_count: u64,
    net_delta: Amount,
    first_block_timestamp: String,
    last_block_timestamp: String,
}

/// Window summaries of the deltas after ledger_seq `after`, from the
/// per-window aggregates (O(windows), never O(history)); `start` and
/// `next` are the deltas at `after` and `after + 1` (read in the same
/// batch), needed when the starting point falls inside a window.
fn window_summaries(
    after: u64,
    windows: Vec<WindowRow>,
    start: Option<DeltaRow>,
    next: Option<DeltaRow>,
) -> ApiResult<Vec<WindowView>> {
    let mut out = Vec::new();
    for w in windows {
        let (first_seq, before, first_at) = if w.first_seq > after {
            (w.first_seq, w.balance_before, w.first_verified_at)
        } else {
            // The starting point falls inside this window: count from it.
            let start = start
                .as_ref()
                .ok_or_else(|| ApiError::internal("checkpoint delta vanished"))?;
            let next = next
                .as_ref()
                .ok_or_else(|| ApiError::internal("window delta vanished"))?;
            (
                after + 1,
                start.balance_after.unwrap_or(Amount::ZERO),
                next.verified_at.unwrap_or(w.first_verified_at),
            )
        };
        let net = w
            .balance_after
            .checked_sub(before)
            .map_err(|e| ApiError::internal(format!("window net: {e}")))?;
        out.push(WindowView {
            deltas_count: w.last_seq + 1 - first_seq,
            net_delta: net,
            first_block_timestamp: views::iso(first_at),
            last_block_timestamp: views::iso(w.last_verified_at),
            window: w.window,
        });
    }
    Ok(out)
}
