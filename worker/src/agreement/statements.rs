//! A customer's signed statements about a committed checkpoint (issue 25,
//! docs/agreement.md): canonical (the text and the signing key's own
//! signature line, nothing else), one per (checkpoint, key, text), capped
//! per checkpoint, a dispute checked against the checkpoint it names, and
//! written in one atomic batch with its log fact, its meters and the
//! vendor's event. A replay answers the statement already recorded: no
//! new fact, no webhook, no quota.

use bvs_core::agreement::{
    self, CheckpointDelta, CheckpointRef, Dispute, DisputeContext, Statement, StatementError,
};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use serde::Serialize;
use serde_json::json;
use worker::D1Database;

use super::inclusion::{self, Cosigned, InclusionView};
use super::{
    checkpoint_ref, log_of_origin, named_checkpoint, rejected, EventKind, StatementView,
    STATEMENTS_PER_CHECKPOINT_MAX,
};
use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::facts::FactWrite;
use crate::ids::{CheckpointId, EventId};
use crate::ledger::{db, doorbell, LogId};
use crate::meter;
use crate::store::agreement::{self as agreements, AgreementKind, AgreementRow, KeyRow};
use crate::store::checkpoints::CheckpointRow;
use crate::store::events;
use crate::store::meters::{self, Meter, Raise};

/// The keys of a ledger that may still sign (oldest first in `keys`):
/// the current one, and every earlier one whose successor it did not sign.
/// A key stops speaking only when its own holder signs its successor, so a
/// key change through an invitation alone cannot silence the customer.
fn speaking(keys: &[KeyRow]) -> Vec<&KeyRow> {
    keys.iter()
        .enumerate()
        .filter(|(i, _)| {
            keys.get(i + 1)
                .is_none_or(|next| next.signed_by_previous != Some(1))
        })
        .map(|(_, k)| k)
        .rev()
        .collect()
}

/// What the statements route answers: the statement, and the inclusion
/// co-signature sent with it (`liabilities`), if any.
#[derive(Debug, Serialize)]
pub struct Submitted {
    #[serde(flatten)]
    pub statement: StatementView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liabilities: Option<InclusionView>,
}

/// Accepts a customer's signed `balance` or `dispute` statement about a
/// committed checkpoint of its ledger: verified against a key of the
/// ledger that may sign, stored and logged in its canonical form, and told
/// to the vendor (`checkpoint.cosigned` / `checkpoint.disputed`). The same
/// (checkpoint, key, text) again answers the statement recorded (`false`).
/// With `inclusion`, a balance statement comes with the same key's
/// co-signature of its inclusion in the period's liabilities statement
/// (docs/liabilities.md §11): both are checked before either is written,
/// and written in one batch.
///
/// # Errors
/// 422 `statement_rejected` naming the reason; 404 for a ledger without a
/// key or an unknown checkpoint; 409 for one not committed yet, or 409
/// `statement_limit_reached` past `STATEMENTS_PER_CHECKPOINT_MAX`; 402
/// when the vendor's plan refuses the log fact.
pub async fn submit_statement(
    app: &App,
    signed: &str,
    inclusion: Option<&str>,
) -> ApiResult<(Submitted, bool)> {
    let named = named_checkpoint_of(signed)?;
    let log = log_of_origin(app, &named.origin)?;
    let db = db(app, log)?;
    let ledger_id = named.ledger;
    let keys = agreements::keys(&db, &ledger_id).await?;
    let Some(current) = keys.last() else {
        return Err(ApiError::NotFound(format!(
            "No counterparty key is registered for ledger {ledger_id}; open the vendor's invitation first"
        )));
    };
    let key = signer(signed, &keys)?.unwrap_or(current);
    let (statement, canonical) =
        agreement::canonical_statement(signed, &key.verifier_key).map_err(|e| rejected(&e))?;
    let c = named_checkpoint(&db, key, &named).await?;
    let (reference, balance) = checkpoint_ref(app, log, &db, &c, &ledger_id).await?;
    let kind = check(&db, &statement, &reference, balance, &c).await?;
    let cosigned = match inclusion {
        Some(t) => Some(inclusion::check(app, log, &db, key, &statement, &c, t).await?),
        None => None,
    };
    let text = canonical
        .split_once("\n\n")
        .map(|(t, _)| format!("{t}\n"))
        .unwrap_or_default();
    let recorded = || agreements::agreement_by_text(&db, &c.id, &key.verifier_key, &text);
    if let Some(existing) = recorded().await? {
        return replay(app, log, &db, &existing, &c, cosigned).await;
    }
    let row = AgreementRow {
        item_hash: agreement::item_hash(&canonical),
        ledger_id,
        tenant_id: key.tenant_id.clone(),
        customer_id: key.customer_id.clone(),
        checkpoint_id: c.id.clone(),
        kind,
        verifier_key: key.verifier_key.clone(),
        statement: canonical,
        created_at: app.now_ms,
    };
    let view = StatementView::from_row(&row, &c);
    let written = Written {
        row: &row,
        text: &text,
        c: &c,
        balance,
        view: &view,
    };
    match write(app, log, &db, &written, cosigned.as_ref()).await {
        Ok(()) => Ok((submitted(view, cosigned), true)),
        // The same statement, recorded meanwhile by a concurrent request.
        Err(e) => match recorded().await? {
            Some(existing) => replay(app, log, &db, &existing, &c, cosigned).await,
            None => Err(e),
        },
    }
}

/// The checkpoint a signed balance or dispute statement names, read before
/// its signature is checked (the key to check it with depends on it).
fn named_checkpoint_of(signed: &str) -> ApiResult<CheckpointRef> {
    match agreement::read_unverified(signed).map_err(|e| rejected(&e))? {
        Statement::Balance(b) => Ok(b.checkpoint),
        Statement::Dispute(d) => Ok(d.checkpoint),
        Statement::Key(_) => Err(rejected(&StatementError::WrongKind {
            expected: "balance or dispute",
            got: "key",
        })),
    }
}

fn submitted(statement: StatementView, cosigned: Option<Cosigned>) -> Submitted {
    Submitted {
        statement,
        liabilities: cosigned.map(|c| c.view),
    }
}

/// A statement recorded before, answered again; an inclusion sent with it
/// that is new is written now (on its own: the statement is there).
async fn replay(
    app: &App,
    log: LogId,
    db: &D1Database,
    existing: &AgreementRow,
    c: &CheckpointRow,
    cosigned: Option<Cosigned>,
) -> ApiResult<(Submitted, bool)> {
    let mut created = false;
    if let Some(new) = cosigned.as_ref().filter(|x| x.new) {
        inclusion::write_alone(app, log, db, &new.row).await?;
        created = true;
    }
    Ok((
        submitted(StatementView::from_row(existing, c), cosigned),
        created,
    ))
}

/// The key of `keys` that signed `signed` and may still sign (newest
/// first); `None` when none did (the current key's check names why).
fn signer<'a>(signed: &str, keys: &'a [KeyRow]) -> ApiResult<Option<&'a KeyRow>> {
    for k in speaking(keys) {
        if agreement::signed_by(signed, &k.verifier_key).map_err(|e| rejected(&e))? {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

/// What the statement says of checkpoint `c` (`reference`, closing
/// `balance`): a balance statement agrees to its balance, a dispute names
/// a point inside it, its balance there and its delta after it.
async fn check(
    db: &D1Database,
    statement: &Statement,
    reference: &CheckpointRef,
    balance: Amount,
    c: &CheckpointRow,
) -> ApiResult<AgreementKind> {
    match statement {
        Statement::Balance(b) => {
            reference.check(&b.checkpoint).map_err(|e| rejected(&e))?;
            if b.balance != balance {
                return Err(rejected(&StatementError::BalanceMismatch {
                    expected: balance,
                    got: b.balance,
                }));
            }
            Ok(AgreementKind::Balance)
        }
        Statement::Dispute(d) => {
            reference.check(&d.checkpoint).map_err(|e| rejected(&e))?;
            let ctx = dispute_context(db, d, c).await?;
            d.check(&ctx).map_err(|e| rejected(&e))?;
            Ok(AgreementKind::Dispute)
        }
        Statement::Key(_) => Err(rejected(&StatementError::WrongKind {
            expected: "balance or dispute",
            got: "key",
        })),
    }
}

/// The checkpoint's start in its ledger and the deltas the dispute names
/// a position by (two reads: the start, then the deltas it places).
async fn dispute_context(
    db: &D1Database,
    d: &Dispute,
    c: &CheckpointRow,
) -> ApiResult<DisputeContext> {
    let start =
        agreements::window_start(db, &c.tenant_id, c.ledger_customer()?, &c.period, &c.asset)
            .await?
            .ok_or_else(|| ApiError::internal("a committed checkpoint without its window"))?;
    let seqs = d.positions(start.first_seq, c.delta_count);
    let deltas = agreements::deltas_at(db, &c.tenant_id, (c.ledger_customer()?, &c.asset), &seqs)
        .await?
        .into_iter()
        .map(|r| CheckpointDelta {
            seq: r.ledger_seq,
            item_hash: r.item_hash,
            anchor_id: r.anchor_id.into_string(),
            reference_id: r.reference_id,
            balance_after: r.balance_after,
        })
        .collect();
    Ok(DisputeContext {
        first_seq: start.first_seq,
        delta_count: c.delta_count,
        balance_before: start.balance_before,
        deltas,
    })
}

/// A new statement to write: its row and text, the checkpoint, its
/// closing balance and the view answered.
struct Written<'a> {
    row: &'a AgreementRow,
    text: &'a str,
    c: &'a CheckpointRow,
    balance: Amount,
    view: &'a StatementView,
}

/// The statement's one batch: the log fact and its meters, the
/// checkpoint's statement count, the row, the vendor's event, and the
/// inclusion co-signed with it (its fact, meters and row), if any.
async fn write(
    app: &App,
    log: LogId,
    db: &D1Database,
    w: &Written<'_>,
    cosigned: Option<&Cosigned>,
) -> ApiResult<()> {
    let Written {
        row,
        text,
        c,
        balance,
        view,
    } = *w;
    let metadata = json!({ "agreement": row.kind.as_str() }).to_string();
    let fact = FactWrite::new(app, &row.tenant_id, &row.statement, metadata).await?;
    let mut statements = fact.statements()?;
    let count = Raise {
        tenant_id: &row.tenant_id,
        meter: Meter::Statements,
        period: c.id.as_str(),
        add: 1,
        cap: STATEMENTS_PER_CHECKPOINT_MAX,
    };
    statements.push(meters::raise(&count)?);
    statements.push(agreements::insert_agreement(row, text)?);
    let (kind, payload) = event(row, c, balance, view)?;
    let id = EventId::from_text(format!("evt_agr_{}", &row.item_hash.to_hex()[..32]));
    statements.push(events::insert_once_statement(
        &id,
        &row.tenant_id,
        kind,
        &payload,
        app.now_ms,
    )?);
    let mut raises = vec![count];
    raises.extend(fact.raises());
    // The inclusion's fact counts against the same plan (read once).
    let inclusion_fact = cosigned
        .filter(|x| x.new)
        .map(|x| inclusion::fact(&x.row, fact.plan, app.now_ms));
    if let (Some(x), Some(f)) = (cosigned.filter(|x| x.new), inclusion_fact.as_ref()) {
        let (more, more_raises) = inclusion::statements(&x.row, f)?;
        statements.extend(more);
        raises.extend(more_raises);
    }
    match meters::batch_within_caps(db, statements, &raises).await? {
        Ok(_) => {}
        Err(Meter::Statements) => {
            return Err(ApiError::coded(
                ErrorCode::StatementLimitReached,
                format!(
                    "This checkpoint has the most statements it can have \
                     ({STATEMENTS_PER_CHECKPOINT_MAX}); nothing was recorded"
                ),
            ))
        }
        Err(m) => return Err(meter::over(m, fact.plan, log.env, app.now_ms)),
    }
    doorbell::ring(app, log).await;
    Ok(())
}

/// The vendor's `checkpoint.cosigned` / `checkpoint.disputed` event of a
/// newly recorded statement (docs/webhooks.md).
fn event(
    row: &AgreementRow,
    c: &CheckpointRow,
    balance: Amount,
    view: &StatementView,
) -> ApiResult<(EventKind, String)> {
    let kind = if row.kind == AgreementKind::Balance {
        EventKind::CheckpointCosigned
    } else {
        EventKind::CheckpointDisputed
    };
    let payload = AgreementEvent {
        checkpoint_id: &c.id,
        customer_id: c.customer_id.as_str(),
        period: &c.period,
        merkle_root: c.merkle_root,
        delta_count: c.delta_count,
        balance,
        kind: row.kind.as_str(),
        ledger_id: &row.ledger_id,
        counterparty_key: &row.verifier_key,
        item_hash: &row.item_hash,
        statement: &row.statement,
        recorded_at: &view.recorded_at,
    };
    Ok((kind, serde_json::to_string(&payload)?))
}

/// The payload of `checkpoint.cosigned` / `checkpoint.disputed`
/// (docs/webhooks.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgreementEvent<'a> {
    checkpoint_id: &'a CheckpointId,
    customer_id: &'a str,
    period: &'a str,
    merkle_root: Hash32,
    delta_count: u64,
    balance: Amount,
    kind: &'a str,
    ledger_id: &'a Hash32,
    counterparty_key: &'a str,
    item_hash: &'a Hash32,
    statement: &'a str,
    recorded_at: &'a str,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bvs_core::types::CustomerId;

    fn key(n: u8, signed_by_previous: Option<u64>) -> KeyRow {
        KeyRow {
            item_hash: Hash32([n; 32]),
            ledger_id: Hash32::digest(b"l"),
            tenant_id: "t".into(),
            customer_id: CustomerId::parse("c").unwrap(),
            verifier_key: format!("k{n}"),
            statement: String::new(),
            registered_at: u64::from(n),
            signed_by_previous,
        }
    }

    #[test]
    fn a_key_replaced_without_its_signature_still_speaks_and_a_rotated_one_does_not() {
        let keys = [key(1, None), key(2, Some(0)), key(3, Some(1))];
        let names: Vec<&str> = speaking(&keys)
            .iter()
            .map(|k| k.verifier_key.as_str())
            .collect();
        // k2 signed its successor k3: retired. k1 was replaced by k2
        // through an invitation alone: it still speaks.
        assert_eq!(names, ["k3", "k1"]);
    }
}
