//! Ledgers as read: derive (balance from a starting point), compare
//! (client vs computed balance), and the customer ledger list.

use bvs_core::amount::Amount;
use bvs_core::derive;
use bvs_core::hash::Hash32;
use bvs_core::pinpoint::{CallerEntry, PINPOINT_ENTRIES_MAX};
use bvs_core::types::{Asset, CustomerId, Page, ReferenceId};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult, FieldProblem};
use crate::fields::Fields;
use crate::http;
use crate::ledger;
use crate::ledgers::{self, customers::LedgerRow};
use crate::views::{self};

// ------------------------------------------------------------------ derive

/// `GET /api/v1/balance/derive/:customerId`.
pub async fn derive(
    app: &App,
    req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let (start, as_of) = (derive_start(&req), as_of_query(&req));
    let (start, as_of) = match (start, as_of) {
        (Ok(s), Ok(a)) => (s, a),
        (Err(ApiError::Validation(mut a)), Err(ApiError::Validation(b))) => {
            a.extend(b);
            return Err(ApiError::Validation(a));
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    let db = ledger::db(app, ctx.log())?;
    let asset = start.asset.clone();
    let mut data = ledgers::derive::derive(&db, &ctx.tenant_id, &customer_id, start).await?;
    if let Some((at_ms, basis)) = as_of {
        let request = ledgers::as_of::AsOfRequest {
            tenant_id: &ctx.tenant_id,
            log: ctx.log(),
            customer_id: &customer_id,
            asset: &asset,
            at_ms,
            basis,
        };
        data = data.with_as_of(ledgers::as_of::as_of(app, &db, &request).await?);
    }
    http::balance(200, &data)
}

/// Derive's `asOf` (an ISO 8601 time) and `asOfBasis` (`verified`, the
/// default, or `declared`), issue 43.
fn as_of_query(req: &Request) -> ApiResult<Option<(u64, bvs_core::verify::AsOfBasis)>> {
    use bvs_core::verify::AsOfBasis;
    let q = |name: &str| http::query_param(req, name);
    let mut problems = Vec::new();
    let at = q("asOf")?.map(|t| {
        bvs_core::time::parse_iso_ms(&t)
            .ok()
            .and_then(|ms| u64::try_from(ms).ok())
            .ok_or_else(|| {
                FieldProblem::new(
                    "asOf",
                    "must be an ISO 8601 time such as 2026-03-03T00:00:00Z",
                )
            })
    });
    let basis = match q("asOfBasis")?.as_deref() {
        None | Some("verified") => Ok(AsOfBasis::Verified),
        Some("declared") => Ok(AsOfBasis::Declared),
        Some(_) => Err(FieldProblem::new(
            "asOfBasis",
            "must be verified or declared",
        )),
    };
    if let Err(p) = &basis {
        problems.push(p.clone());
    }
    let at = match at {
        Some(Ok(at)) => Some(at),
        Some(Err(p)) => {
            problems.push(p);
            None
        }
        None => {
            if q("asOfBasis")?.is_some() {
                problems.push(FieldProblem::new("asOfBasis", "needs asOf"));
            }
            None
        }
    };
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    Ok(at.zip(basis.ok()))
}

/// The query of a derivation, every problem named at once.
fn derive_start(req: &Request) -> ApiResult<ledgers::derive::Start> {
    let q = |name: &str| http::query_param(req, name);
    let mut problems = Vec::new();
    let asset = http::query_asset(req).unwrap_or_else(|e| {
        if let ApiError::Validation(p) = e {
            problems.extend(p);
        }
        Asset::Default
    });
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
    Ok(ledgers::derive::Start {
        starting_balance,
        checkpoint_type,
        checkpoint,
        page,
        asset,
    })
}

// ------------------------------------------------------------------ compare

/// `POST /api/v1/balance/compare`.
pub async fn compare(app: &App, mut req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, http::COMPARE_BODY_BYTES_MAX).await?;
    let CompareBody {
        yours,
        theirs,
        starting,
        customer,
        entries,
        deltas_after,
        asset,
    } = read_compare(&bytes)?;
    let (computed, ledger_view) = match &customer {
        None => (starting, None),
        Some(c) => {
            let db = ledger::db(app, ctx.log())?;
            let l = ledgers::require_ledger(&db, &ctx.tenant_id, c, &asset).await?;
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
    let pinpoint = match (entries, &customer) {
        (Some(entries), Some(c)) => {
            let db = ledger::db(app, ctx.log())?;
            let asked = ledgers::pinpoint::Request {
                starting_balance: starting,
                deltas_after,
                entries,
                asset: asset.clone(),
            };
            Some(ledgers::pinpoint::pinpoint(&db, &ctx.tenant_id, c, asked).await?)
        }
        _ => None,
    };
    let data = CompareView {
        customer_id: customer.as_ref().map(|c| c.as_str().to_string()),
        asset,
        starting_balance: starting,
        your_balance: yours,
        their_balance: theirs,
        computed_balance: cmp.computed_balance,
        matches_yours: cmp.matches_yours,
        matches_theirs: cmp.matches_theirs,
        discrepancy: cmp.discrepancy,
        ledger: ledger_view,
        pinpoint,
    };
    http::balance(200, &data)
}

/// A compare request's body, read and checked.
struct CompareBody {
    yours: Amount,
    theirs: Amount,
    starting: Amount,
    customer: Option<CustomerId>,
    entries: Option<Vec<CallerEntry>>,
    deltas_after: Option<String>,
    asset: Asset,
}

/// Reads a compare body: every problem named at once (`Fields`).
fn read_compare(bytes: &[u8]) -> ApiResult<CompareBody> {
    let mut f = Fields::from_bytes(bytes)?;
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
    let entries = f.array("deltas", false);
    let deltas_after = f.string("deltasAfter", false);
    let asset_t = f.string("asset", false);
    let asset = f.parse("asset", asset_t, |t| Asset::parse("asset", t));
    if asset.is_some() && customer.is_none() && f.raw("customerId").is_none() {
        f.problem("asset", "is only used with customerId");
    }
    if entries.is_some() && customer.is_none() && f.raw("customerId").is_none() {
        f.problem("customerId", "is required with deltas");
    }
    if entries.is_none() && deltas_after.is_some() {
        f.problem("deltasAfter", "is only used with deltas");
    }
    let entries = match entries {
        Some(items) if items.len() > PINPOINT_ENTRIES_MAX => {
            f.problem(
                "deltas",
                format!(
                    "must contain at most {PINPOINT_ENTRIES_MAX} entries (got {}); compare a page at a time with deltasAfter",
                    items.len()
                ),
            );
            None
        }
        Some(items) => Some(read_entries(&mut f, &items)),
        None => None,
    };
    f.finish()?;
    let (yours, theirs) = match (yours, theirs) {
        (Some(y), Some(t)) => (y, t),
        _ => return Err(ApiError::internal("validated balances missing")),
    };
    Ok(CompareBody {
        yours,
        theirs,
        starting: starting.unwrap_or(Amount::ZERO),
        customer,
        entries,
        deltas_after,
        asset: asset.unwrap_or_default(),
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompareView {
    customer_id: Option<String>,
    #[serde(skip_serializing_if = "Asset::is_default")]
    asset: Asset,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pinpoint: Option<ledgers::pinpoint::Answer>,
}

/// An entry's amount: `amount`, or `delta` as derive lists it, so derive's
/// own entries can be sent back as they came (issue 29). Both given and
/// unequal is a problem naming `delta`; neither, one naming `amount`.
fn entry_amount(e: &mut Fields) -> Option<Amount> {
    let amount_t = e.number("amount", false);
    let delta_t = e.number("delta", false);
    let amount = e.parse("amount", amount_t.clone(), |t| {
        Amount::parse_field("amount", t)
    });
    let delta = e.parse("delta", delta_t.clone(), |t| {
        Amount::parse_field("delta", t)
    });
    match (amount_t, delta_t) {
        (None, None) if e.raw("amount").is_none() && e.raw("delta").is_none() => {
            e.problem("amount", "is required (or delta, as derive lists it)");
            None
        }
        (Some(_), Some(_)) => match (amount, delta) {
            (Some(a), Some(d)) if a != d => {
                e.problem(
                    "delta",
                    format!("must equal amount when both are given (amount {a}, delta {d})"),
                );
                None
            }
            (a, _) => a,
        },
        _ => amount.or(delta),
    }
}

/// The caller's own deltas of a pinpointing compare, each named by
/// `itemHash`, `anchorId` or `referenceId` with its `amount` (or `delta`,
/// as derive lists it); every bad
/// entry is a problem of `f` named `deltas[i].<field>`.
fn read_entries(f: &mut Fields, items: &[Box<RawValue>]) -> Vec<CallerEntry> {
    let mut entries = Vec::with_capacity(items.len());
    for (i, raw) in items.iter().enumerate() {
        let prefix = format!("deltas[{i}].");
        let mut e = match Fields::from_raw(raw, &prefix) {
            Ok(e) => e,
            Err(_) => {
                f.problem(&format!("deltas[{i}]"), "must be a JSON object");
                continue;
            }
        };
        let amount = entry_amount(&mut e);
        let hash_t = e.string("itemHash", false);
        let item_hash = e.parse("itemHash", hash_t, |t| Hash32::parse_field("itemHash", t));
        let anchor = e.string("anchorId", false);
        let reference_t = e.string("referenceId", false);
        let reference = e.parse("referenceId", reference_t, ReferenceId::parse);
        if e.problems.is_empty() {
            if let Some(amount) = amount {
                let entry = CallerEntry::new(item_hash, anchor.as_deref(), reference, amount);
                if let Some(entry) = e.check(entry) {
                    entries.push(entry);
                }
            }
        }
        f.problems.append(&mut e.problems);
    }
    entries
}

// ------------------------------------------------------------------ customers

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomerView {
    customer_id: CustomerId,
    ledger_id: Hash32,
    total_deltas: u64,
    computed_balance: Amount,
    first_activity_at: Option<String>,
    last_activity_at: Option<String>,
    latest_receipt_id: Option<String>,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending_deltas: Option<u64>,
    /// The customer's named assets' balances (issue 43), each on its own:
    /// `computedBalance` and `totalDeltas` above are the default asset's.
    /// Absent when the customer has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    balances: Vec<AssetBalance>,
    /// Each asset's balance as of `asOf` (issue 43; derive gives each its
    /// proof). Only when asked.
    #[serde(rename = "asOf", skip_serializing_if = "Option::is_none")]
    as_of: Option<Value>,
}

/// One named asset's balance of a customer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AssetBalance {
    asset: Asset,
    computed_balance: Amount,
    deltas_count: u64,
    latest_receipt_id: Option<String>,
}

fn asset_balance(l: &LedgerRow) -> AssetBalance {
    AssetBalance {
        asset: l.asset.clone(),
        computed_balance: l.computed_balance,
        deltas_count: l.verified_count,
        latest_receipt_id: l.latest_items_root.map(|h| h.to_hex()),
    }
}

fn customer_view(l: &LedgerRow) -> ApiResult<CustomerView> {
    Ok(CustomerView {
        customer_id: l.customer_id.clone(),
        ledger_id: l.ledger_id,
        total_deltas: l.verified_count,
        computed_balance: l.computed_balance,
        first_activity_at: l.first_activity_at.map(views::iso),
        last_activity_at: l.last_activity_at.map(views::iso),
        latest_receipt_id: l.latest_items_root.map(|h| h.to_hex()),
        created_at: views::iso(l.created_at),
        pending_deltas: None,
        balances: Vec::new(),
        as_of: None,
    })
}

#[derive(Serialize)]
struct CustomersPage {
    customers: Vec<CustomerView>,
    pagination: Value,
}

/// `GET /api/v1/balance/customers`.
pub async fn customers(app: &App, req: Request, ctx: KeyContext) -> ApiResult<Response> {
    let page = Page::for_list(
        http::query_param(&req, "limit")?.as_deref(),
        http::query_param(&req, "offset")?.as_deref(),
    )?;
    // `prefix` (issue 30): only customer ids starting with it.
    let prefix = http::query_param(&req, "prefix")?
        .filter(|p| !p.is_empty())
        .map(|p| CustomerId::parse(&p).map_err(|e| bvs_core::FieldError::new("prefix", e.reason)))
        .transpose()?;
    let db = ledger::db(app, ctx.log())?;
    let (total, rows) =
        ledgers::customers::page(&db, &ctx.tenant_id, &page, prefix.as_ref()).await?;
    let mut customers: Vec<CustomerView> =
        rows.iter().map(customer_view).collect::<ApiResult<_>>()?;
    let ids: Vec<&CustomerId> = rows.iter().map(|l| &l.customer_id).collect();
    for named in ledgers::customers::named_of(&db, &ctx.tenant_id, &ids).await? {
        if let Some(c) = customers
            .iter_mut()
            .find(|c| c.customer_id == named.customer_id)
        {
            c.balances.push(asset_balance(&named));
        }
    }
    http::balance(
        200,
        &CustomersPage {
            customers,
            pagination: json!({ "total": total, "limit": page.limit(), "offset": page.offset() }),
        },
    )
}

/// `GET /api/v1/balance/customers/:customerId`.
pub async fn customer(
    app: &App,
    req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let as_of = as_of_query(&req)?;
    let db = ledger::db(app, ctx.log())?;
    let rows = ledgers::customers::assets_of(&db, &ctx.tenant_id, &customer_id).await?;
    let (default, named): (Vec<&LedgerRow>, Vec<&LedgerRow>) =
        rows.iter().partition(|l| l.asset.is_default());
    let l = default
        .first()
        .ok_or_else(|| ledgers::no_ledger(&customer_id, &Asset::Default))?;
    let mut view = customer_view(l)?;
    view.balances = named.into_iter().map(asset_balance).collect();
    view.pending_deltas = Some(
        ledgers::customers::queued_count(&db, &ctx.tenant_id, &customer_id, &Asset::Default)
            .await?,
    );
    if let Some((at_ms, basis)) = as_of {
        let mut balances = Vec::with_capacity(rows.len());
        for l in &rows {
            let request = ledgers::as_of::AsOfRequest {
                tenant_id: &ctx.tenant_id,
                log: ctx.log(),
                customer_id: &customer_id,
                asset: &l.asset,
                at_ms,
                basis,
            };
            let a = ledgers::as_of::totals(&db, &request).await?;
            balances.push(json!({
                "asset": (!l.asset.is_default()).then(|| l.asset.key()),
                "balance": a.balance,
                "deltasCount": a.deltas_count,
                "lastDelta": a.last_delta,
            }));
        }
        view.as_of = Some(json!({
            "at": views::iso(at_ms),
            "basis": basis.as_str(),
            "balances": balances,
        }));
    }
    http::balance(200, &view)
}

/// `GET /api/v1/balance/customers/:customerId/history` (issue 30): the
/// balance after each verified delta, in ledger order, for a chart; past
/// `charts::HISTORY_POINTS_MAX` deltas every `step`-th, the first and the
/// last.
pub async fn history(app: &App, ctx: KeyContext, customer_id: CustomerId) -> ApiResult<Response> {
    let db = ledger::db(app, ctx.log())?;
    let h = ledgers::charts::history(&db, &ctx.tenant_id, &customer_id).await?;
    let points: Vec<Value> = h
        .points
        .iter()
        .map(|p| {
            json!({
                "ledgerSeq": p.ledger_seq,
                "anchorId": p.anchor_id,
                "verifiedAt": views::iso(p.verified_at),
                "delta": p.delta,
                "balanceAfter": p.balance_after,
            })
        })
        .collect();
    http::balance(
        200,
        &json!({
            "customerId": customer_id.as_str(),
            "computedBalance": h.ledger.computed_balance,
            "totalDeltas": h.ledger.verified_count,
            "step": h.step,
            "points": points,
        }),
    )
}
