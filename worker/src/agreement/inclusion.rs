//! A customer's co-signature of its inclusion in its period's liabilities
//! statement (issue 31 part D, docs/liabilities.md §11), sent as
//! `liabilities` beside the period's balance statement: signed by the same
//! key, checked by core against the period's latest published statement
//! and the ledger's leaf in it (`Inclusion::check`), and written in the
//! balance statement's batch (or alone, when that one was recorded
//! before) as a log fact of the tenant with its row.

use bvs_core::agreement::{self, Inclusion, Statement, StatementError};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::Period;
use serde::Serialize;
use serde_json::json;
use worker::D1Database;

use super::origin;
use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::facts::FactWrite;
use crate::ids::StatementId;
use crate::ledger::{doorbell, LogId};
use crate::meter;
use crate::plan::Plan;
use crate::store::agreement::KeyRow;
use crate::store::checkpoints::CheckpointRow;
use crate::store::liabilities::{self as store_l, CosignatureRow};
use crate::store::meters::{self, Raise};
use crate::store::Query;
use crate::views;

/// A refused `liabilities`, the field and the reason named first.
fn rejected(e: &StatementError) -> ApiError {
    ApiError::coded(
        ErrorCode::StatementRejected,
        format!("liabilities: inclusion rejected ({}): {e}", e.reason()),
    )
}

/// The co-signature as the statements route answers it (`liabilities`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InclusionView {
    pub kind: &'static str,
    pub statement_id: StatementId,
    pub statement_hash: Hash32,
    pub period: String,
    pub ledger_id: Hash32,
    pub balance: Amount,
    pub counterparty_key: String,
    /// Its log item (a fact's contentHash).
    pub item_hash: Hash32,
    pub statement: String,
    pub recorded_at: String,
}

/// A checked co-signature: its row, and whether it is new (a replay of a
/// recorded one writes nothing).
pub struct Cosigned {
    pub row: CosignatureRow,
    pub view: InclusionView,
    pub new: bool,
}

/// Checks `signed` (a `bvs-agreement/v1 liabilities` note) sent with the
/// balance statement `with` about checkpoint `c`: signed by the same key,
/// naming this log, the ledger, the checkpoint's period, the period's
/// latest published statement and the ledger's balance in it.
///
/// # Errors
/// 422 `statement_rejected` naming `liabilities` and the reason (also for
/// a dispute sent with it); 404 when the period has no published
/// statement or the ledger no leaf in it.
pub async fn check(
    app: &App,
    log: LogId,
    db: &D1Database,
    key: &KeyRow,
    with: &Statement,
    c: &CheckpointRow,
    signed: &str,
) -> ApiResult<Cosigned> {
    if !matches!(with, Statement::Balance(_)) {
        return Err(rejected(&StatementError::WrongKind {
            expected: "balance (an inclusion is co-signed with the period's agreement)",
            got: with.kind(),
        }));
    }
    let (named, canonical) =
        agreement::verify_inclusion(signed, &key.verifier_key).map_err(|e| rejected(&e))?;
    let missing = |what: &str| {
        ApiError::coded(
            ErrorCode::RecordNotFound,
            format!("liabilities: {what} for period {}", c.period),
        )
    };
    let s = store_l::latest_published(db, &c.tenant_id, &c.period, &c.asset)
        .await?
        .ok_or_else(|| missing("no liabilities statement is published"))?;
    crate::liabilities::not_purged(&s)?;
    let leaf = store_l::ledger_of(db, &s.id, c.ledger_customer()?)
        .await?
        .ok_or_else(|| missing("the ledger has no leaf in the liabilities statement"))?;
    let statement_hash = s
        .item_hash
        .ok_or_else(|| ApiError::internal("a published statement without its item hash"))?;
    let expected = Inclusion {
        origin: origin(app, log)?,
        ledger: key.ledger_id,
        period: Period::parse(&s.period)?,
        statement: statement_hash,
        balance: leaf.balance,
    };
    expected.check(&named).map_err(|e| rejected(&e))?;
    let item_hash = agreement::item_hash(&canonical);
    let existing = store_l::cosignature(db, &item_hash).await?;
    let new = existing.is_none();
    let row = existing.unwrap_or(CosignatureRow {
        item_hash,
        statement_id: s.id.clone(),
        ledger_id: key.ledger_id,
        tenant_id: key.tenant_id.clone(),
        customer_id: key.customer_id.clone(),
        verifier_key: key.verifier_key.clone(),
        statement: canonical,
        created_at: app.now_ms,
    });
    let view = InclusionView {
        kind: agreement::INCLUSION_KIND,
        statement_id: row.statement_id.clone(),
        statement_hash,
        period: s.period.clone(),
        ledger_id: row.ledger_id,
        balance: expected.balance,
        counterparty_key: row.verifier_key.clone(),
        item_hash: row.item_hash,
        statement: row.statement.clone(),
        recorded_at: views::iso(row.created_at),
    };
    Ok(Cosigned { row, view, new })
}

/// The co-signature's statements for a write's batch (its log fact and
/// the fact's meters, then its row), and the raises they make.
///
/// # Errors
/// A value that cannot be bound.
pub fn statements<'a>(
    row: &'a CosignatureRow,
    fact: &'a FactWrite<'a>,
) -> ApiResult<(Vec<Query<'a>>, [Raise<'a>; 2])> {
    let mut out = fact.statements()?;
    out.push(store_l::insert_cosignature(row)?);
    Ok((out, fact.raises()))
}

/// The fact a co-signature is logged as (its metadata names the kind),
/// counted against the vendor's `plan`.
pub fn fact(row: &CosignatureRow, plan: Plan, now_ms: u64) -> FactWrite<'_> {
    let metadata = json!({ "agreement": agreement::INCLUSION_KIND }).to_string();
    FactWrite::of_plan(&row.tenant_id, &row.statement, metadata, plan, now_ms)
}

/// Writes a co-signature on its own (its balance statement was recorded
/// before): the fact, its meters and the row in one batch.
///
/// # Errors
/// 402 when the vendor's plan refuses the fact (nothing written).
pub async fn write_alone(
    app: &App,
    log: LogId,
    db: &D1Database,
    row: &CosignatureRow,
) -> ApiResult<()> {
    let plan = crate::store::accounts::tenant_plan(&app.control_db()?, &row.tenant_id).await?;
    let fact = fact(row, plan, app.now_ms);
    let (statements, raises) = statements(row, &fact)?;
    if let Err(m) = meters::batch_within_caps(db, statements, &raises).await? {
        return Err(meter::over(m, plan, log.env, app.now_ms));
    }
    doorbell::ring(app, log).await;
    Ok(())
}
