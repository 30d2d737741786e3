//! A checkpoint's agreement side on the public verify answer (issue 19):
//! what a customer who agrees signs, the ledger's key, and what was
//! signed, from the rows the public verify lookup read in its one batch
//! (`store::proofs::AgreementRows`, issue 16).

use bvs_core::agreement::{BalanceStatement, CheckpointFields, Statement};
use bvs_core::amount::Amount;
use serde::Serialize;

use super::{reference, StatementView};
use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::LogId;
use crate::ledgers;
use crate::store::agreement::{AgreementRow, KeyRow};
use crate::store::checkpoints::CheckpointRow;
use crate::store::proofs::AgreementRows;
use crate::store::CheckpointStatus;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointAgreement {
    /// `origin`, `ledgerId`, `period`, `merkleRoot`, `deltaCount`.
    #[serde(flatten)]
    pub checkpoint: CheckpointFields,
    pub balance: Amount,
    /// The `balance` statement a customer who agrees signs.
    pub balance_statement: String,
    /// The ledger's registered counterparty key, if any.
    pub counterparty_key: Option<String>,
    /// The key binding statement (a log item) of that key.
    pub key_statement: Option<String>,
    /// Every key of the ledger, oldest first (the last is
    /// `counterpartyKey`); statements by each stay listed.
    pub keys: Vec<PublicKey>,
    /// One line per key change the previous key did not sign.
    pub key_warnings: Vec<String>,
    pub statements: Vec<StatementView>,
    /// Which page of the statements this is (`?statementsLimit=`,
    /// `?statementsOffset=`) and how many there are.
    pub statements_pagination: StatementsPagination,
}

/// One key binding of a ledger, as the public answer lists it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicKey {
    pub counterparty_key: String,
    pub key_statement: String,
    pub registered_at: String,
    /// `null` for the first key; whether the key before it signed it.
    pub signed_by_previous: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct StatementsPagination {
    pub limit: u64,
    pub offset: u64,
    pub total: u64,
}

/// The agreement side of the first committed single-customer checkpoint
/// among `checkpoints` (those with the answer's root, oldest first), from
/// `rows`; None when there is none.
///
/// # Errors
/// A malformed stored period or ledger id, or the log's key.
pub fn of_checkpoint(
    app: &App,
    log: LogId,
    checkpoints: &[CheckpointRow],
    rows: AgreementRows,
    page: &super::StatementsPage,
) -> ApiResult<Option<CheckpointAgreement>> {
    let Some((c, customer)) = checkpoints.iter().find_map(|c| {
        (c.status == CheckpointStatus::Committed)
            .then_some(c)
            .zip(c.customer_id.customer())
    }) else {
        return Ok(None);
    };
    let ledger_id = ledgers::ledger_id(&c.tenant_id, customer);
    let reference = reference(app, log, c, &ledger_id)?;
    let balance = rows
        .balances
        .iter()
        .find(|b| b.id == c.id)
        .and_then(|b| b.balance_after)
        .unwrap_or(Amount::ZERO);
    let text = Statement::Balance(BalanceStatement {
        checkpoint: reference.clone(),
        balance,
    })
    .to_text();
    let ledger_keys: Vec<_> = rows
        .keys
        .into_iter()
        .filter(|k| k.ledger_id == ledger_id)
        .collect();
    let key_warnings = ledger_keys.iter().filter_map(super::key_warning).collect();
    let keys = key_views(&ledger_keys);
    let key = ledger_keys.last();
    let (statements, statements_pagination) = statements_page(&rows.statements, c, page);
    Ok(Some(CheckpointAgreement {
        checkpoint: CheckpointFields::of(&reference),
        balance,
        balance_statement: text,
        counterparty_key: key.map(|k| k.verifier_key.clone()),
        key_statement: key.map(|k| k.statement.clone()),
        keys,
        key_warnings,
        statements,
        statements_pagination,
    }))
}

/// A ledger's registered keys, oldest first, as the public answer shows
/// them.
fn key_views(ledger_keys: &[KeyRow]) -> Vec<PublicKey> {
    ledger_keys
        .iter()
        .enumerate()
        .map(|(i, k)| PublicKey {
            counterparty_key: k.verifier_key.clone(),
            key_statement: k.statement.clone(),
            registered_at: crate::views::iso(k.registered_at),
            signed_by_previous: (i > 0).then(|| k.signed_by_previous == Some(1)),
        })
        .collect()
}

/// One page of the signed statements on checkpoint `c`, with its
/// pagination (the total counts them all).
fn statements_page(
    statements: &[AgreementRow],
    c: &CheckpointRow,
    page: &super::StatementsPage,
) -> (Vec<StatementView>, StatementsPagination) {
    let all: Vec<_> = statements
        .iter()
        .filter(|a| a.checkpoint_id == c.id)
        .collect();
    let pagination = StatementsPagination {
        limit: page.limit,
        offset: page.offset,
        total: all.len() as u64,
    };
    let skip = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let take = usize::try_from(page.limit).unwrap_or(usize::MAX);
    let views = all
        .into_iter()
        .skip(skip)
        .take(take)
        .map(|a| StatementView::from_row(a, c))
        .collect();
    (views, pagination)
}
