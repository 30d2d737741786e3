//! Ledgers as read: derive (balance from a starting point), compare
//! (client vs computed balance), and the customer ledger list.

use bvs_core::amount::Amount;
use bvs_core::derive;
use bvs_core::hash::Hash32;
use bvs_core::types::{
    CustomerId, Page, DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN, DERIVE_HINT_DELTAS_MIN,
};
use serde::Serialize;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::{self};
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::ledger;
use crate::store::{self, ItemStatus};
use crate::views::{self, DeltaView};

// ------------------------------------------------------------------ derive

/// `GET /api/v1/balance/derive/:customerId`.
pub async fn derive(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let q = |name: &str| http::query_param(&req, name);
    let mut problems = Vec::new();
    let starting_balance = match q("startingBalance")? {
        None => Amount::ZERO,
        Some(t) => Amount::parse_field("startingBalance", &t).unwrap_or_else(|e| {
            problems.push(FieldProblem::from(e));
            Amount::ZERO
        }),
    };
    let checkpoint_type = q("startingCheckpointType")?.unwrap_or_else(|| "itemsRoot".to_string());
    if checkpoint_type != "itemsRoot" && checkpoint_type != "anchorId" {
        problems.push(FieldProblem::new(
            "startingCheckpointType",
            "must be itemsRoot or anchorId",
        ));
    }
    let checkpoint = q("startingCheckpoint")?.filter(|c| !c.is_empty() && c != "genesis");
    let page = match Page::for_derive(q("limit")?.as_deref(), q("offset")?.as_deref()) {
        Ok(p) => Some(p),
        Err(e) => {
            problems.push(e.into());
            None
        }
    };
    if let (Some(c), "itemsRoot") = (&checkpoint, checkpoint_type.as_str()) {
        if Hash32::parse(c).is_err() {
            problems.push(FieldProblem::new(
                "startingCheckpoint",
                "must be a 64-character hex itemsRoot (or set startingCheckpointType=anchorId)",
            ));
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    let page = page.ok_or_else(|| ApiError::internal("page missing"))?;
    let db = ledger::db(app, ctx.env)?;
    let ledger_row = ledger::require_ledger(&db, &ctx.tenant_id, &customer_id).await?;
    let balance_now = ledger_row.computed_balance;

    // The starting point: (ledger_seq, balance after it).
    let (start_seq, start_balance) = match &checkpoint {
        None => {
            if ledger_row.verified_count >= DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN {
                return Err(ApiError::Unprocessable(format!(
                    "This ledger has {} verified deltas; derivations of {DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN} or more \
                     require a startingCheckpoint. Use startingCheckpoint={} with startingBalance={} \
                     (the latestCheckpoint and computedBalance of your last derivation).",
                    ledger_row.verified_count,
                    ledger_row.latest_items_root.clone().unwrap_or_default(),
                    balance_now
                )));
            }
            (0, Amount::ZERO)
        }
        Some(c) => {
            let row = if checkpoint_type == "anchorId" {
                store::deltas::delta(&db, &ctx.tenant_id, c)
                    .await?
                    .filter(|d| {
                        d.customer_id == customer_id.as_str() && d.status == ItemStatus::Verified
                    })
            } else {
                store::deltas::of_ledger_by_items_root(&db, &ctx.tenant_id, customer_id.as_str(), c)
                    .await?
            };
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
    };
    let computed = derive::computed_balance(starting_balance, start_balance, balance_now)
        .map_err(|e| ApiError::Unprocessable(format!("computedBalance: {e}")))?;
    let total = ledger_row.verified_count.saturating_sub(start_seq);
    let from = start_seq + page.offset() + 1;
    let to = (start_seq + page.offset() + page.limit()).min(ledger_row.verified_count);
    let rows = if from <= to {
        store::deltas::of_ledger(&db, &ctx.tenant_id, customer_id.as_str(), from, to).await?
    } else {
        Vec::new()
    };
    let deltas: Vec<DeltaView> = rows
        .iter()
        .map(DeltaView::from_row)
        .collect::<ApiResult<_>>()?;
    let windows = window_summaries(&db, &ctx.tenant_id, customer_id.as_str(), start_seq).await?;
    let latest = ledger_row.latest_items_root.clone();
    let hint = (total >= DERIVE_HINT_DELTAS_MIN).then(|| Hint {
        message: format!(
            "This derivation replays {total} deltas. Store latestCheckpoint and computedBalance, then pass them as \
             startingCheckpoint and startingBalance next time so only newer deltas are replayed."
        ),
        starting_checkpoint: latest.clone(),
        starting_checkpoint_type: "itemsRoot",
        starting_balance: computed,
    });
    let data = Derivation {
        customer_id: customer_id.as_str().to_string(),
        ledger_id: ledger_row.ledger_id.clone(),
        starting_balance,
        starting_checkpoint: checkpoint.clone().unwrap_or_else(|| "genesis".to_string()),
        starting_checkpoint_type: checkpoint_type,
        computed_balance: computed,
        deltas_count: total,
        latest_checkpoint: latest.clone(),
        latest_receipt_id: latest.clone(),
        deltas,
        window_summaries: windows,
        verification_proof: json!({
            "itemsRoot": latest,
            "message": match &latest {
                Some(r) => format!("Every delta listed is included in this environment's signed Merkle log; \
                    check the latest one publicly at /api/v1/verify/{r}, and fetch a receipt for full inclusion proofs."),
                None => "No verified deltas yet.".to_string(),
            },
        }),
        pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        hint,
    };
    http::balance(200, &data)
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
struct Derivation {
    customer_id: String,
    ledger_id: String,
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
/// per-window aggregates (O(windows), never O(history)).
async fn window_summaries(
    db: &worker::D1Database,
    tenant_id: &str,
    customer_id: &str,
    after: u64,
) -> ApiResult<Vec<WindowView>> {
    let mut out = Vec::new();
    for w in store::ledgers::windows_after(db, tenant_id, customer_id, after).await? {
        let (first_seq, before, first_at) = if w.first_seq > after {
            (w.first_seq, w.balance_before, w.first_verified_at)
        } else {
            // The starting point falls inside this window: count from it.
            let start = store::deltas::of_ledger_at(db, tenant_id, customer_id, after)
                .await?
                .ok_or_else(|| ApiError::internal("checkpoint delta vanished"))?;
            let next = store::deltas::of_ledger_at(db, tenant_id, customer_id, after + 1)
                .await?
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

// ------------------------------------------------------------------ compare

/// `POST /api/v1/balance/compare`.
pub async fn compare(app: &App, mut req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let bytes = http::body_bytes(&mut req, http::BODY_BYTES_MAX).await?;
    let mut f = Fields::from_bytes(&bytes)?;
    let yours_t = f.number("yourBalance", true);
    let yours = f.parse("yourBalance", yours_t, |t| {
        Amount::parse_field("yourBalance", t)
    });
    let theirs_t = f.number("theirBalance", true);
    let theirs = f.parse("theirBalance", theirs_t, |t| {
        Amount::parse_field("theirBalance", t)
    });
    let start_t = f.number("startingBalance", false);
    let starting = f.parse("startingBalance", start_t, |t| {
        Amount::parse_field("startingBalance", t)
    });
    let customer_t = f.string("customerId", false);
    let customer = f.parse("customerId", customer_t, CustomerId::parse);
    f.finish()?;
    let (yours, theirs) = match (yours, theirs) {
        (Some(y), Some(t)) => (y, t),
        _ => return Err(ApiError::internal("validated balances missing")),
    };
    let starting = starting.unwrap_or(Amount::ZERO);
    let (computed, ledger_view) = match &customer {
        None => (starting, None),
        Some(c) => {
            let db = ledger::db(app, ctx.env)?;
            let l = ledger::require_ledger(&db, &ctx.tenant_id, c).await?;
            let now = l.computed_balance;
            let computed = derive::computed_balance(starting, Amount::ZERO, now)
                .map_err(|e| ApiError::Unprocessable(format!("computedBalance: {e}")))?;
            (
                computed,
                Some(
                    json!({ "deltasCount": l.verified_count, "latestCheckpoint": l.latest_items_root }),
                ),
            )
        }
    };
    let cmp = derive::compare(computed, yours, theirs)
        .map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    let data = CompareView {
        customer_id: customer.as_ref().map(|c| c.as_str().to_string()),
        starting_balance: starting,
        your_balance: yours,
        their_balance: theirs,
        computed_balance: cmp.computed_balance,
        matches_yours: cmp.matches_yours,
        matches_theirs: cmp.matches_theirs,
        discrepancy: cmp.discrepancy,
        ledger: ledger_view,
    };
    http::balance(200, &data)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompareView {
    customer_id: Option<String>,
    starting_balance: Amount,
    your_balance: Amount,
    their_balance: Amount,
    computed_balance: Amount,
    matches_yours: bool,
    matches_theirs: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    discrepancy: Option<derive::Discrepancy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger: Option<Value>,
}

// ------------------------------------------------------------------ customers

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomerView {
    customer_id: String,
    ledger_id: String,
    total_deltas: u64,
    computed_balance: Amount,
    first_activity_at: Option<String>,
    last_activity_at: Option<String>,
    latest_receipt_id: Option<String>,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending_deltas: Option<u64>,
}

fn customer_view(l: &store::ledgers::LedgerRow) -> ApiResult<CustomerView> {
    Ok(CustomerView {
        customer_id: l.customer_id.clone(),
        ledger_id: l.ledger_id.clone(),
        total_deltas: l.verified_count,
        computed_balance: l.computed_balance,
        first_activity_at: l.first_activity_at.map(views::iso),
        last_activity_at: l.last_activity_at.map(views::iso),
        latest_receipt_id: l.latest_items_root.clone(),
        created_at: views::iso(l.created_at),
        pending_deltas: None,
    })
}

#[derive(Serialize)]
struct CustomersPage {
    customers: Vec<CustomerView>,
    pagination: Value,
}

/// `GET /api/v1/balance/customers`.
pub async fn customers(app: &App, req: Request) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let page = Page::for_list(
        http::query_param(&req, "limit")?.as_deref(),
        http::query_param(&req, "offset")?.as_deref(),
    )?;
    let db = ledger::db(app, ctx.env)?;
    let total = store::ledgers::count_of_tenant(&db, &ctx.tenant_id).await?;
    let rows = store::ledgers::page(&db, &ctx.tenant_id, page.limit(), page.offset()).await?;
    let customers: Vec<CustomerView> = rows.iter().map(customer_view).collect::<ApiResult<_>>()?;
    http::balance(
        200,
        &CustomersPage {
            customers,
            pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        },
    )
}

/// `GET /api/v1/balance/customers/:customerId`.
pub async fn customer(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let db = ledger::db(app, ctx.env)?;
    let l = ledger::require_ledger(&db, &ctx.tenant_id, &customer_id).await?;
    let mut view = customer_view(&l)?;
    view.pending_deltas =
        Some(store::deltas::queued_count(&db, &ctx.tenant_id, customer_id.as_str()).await?);
    http::balance(200, &view)
}
