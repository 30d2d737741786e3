//! A ledger's counterparty keys (issue 25, docs/agreement.md "Who can
//! change a customer's key"). The first key comes through the vendor's
//! invitation (trust on first use: the spec gives the service no channel
//! to the customer but the vendor). A later key is either signed by the
//! current key too (a rotation by the customer: no invitation needed) or
//! comes through a new invitation without it, and is then flagged in
//! every receipt and public answer as a change the previous key did not
//! sign. Each binding is a log item; earlier keys and their statements
//! stay listed.
//!
//! A registration is one atomic batch: the log fact and its meters, the
//! invitation's use (a meter of cap 1: a second use fails the batch), the
//! ledger's key count, and the key row. A write the plan refuses leaves
//! the invitation usable and no key registered.

use bvs_core::agreement::{self, Statement, StatementError};
use bvs_core::hash::Hash32;
use serde_json::json;
use worker::D1Database;

use super::{invalid, live_invitation, log_of_origin, origin, rejected, KeyView};
use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::facts::FactWrite;
use crate::ledger::{db, doorbell, LogId};
use crate::meter;
use crate::store::agreement::{self as agreements, InvitationRow, KeyRow};
use crate::store::meters::{self, Meter, Raise};

/// Key bindings one ledger can have: its first key and later changes.
/// // spec: silent; docs/agreement.md "Limits"
pub const KEYS_PER_LEDGER_MAX: u64 = 20;

/// Registers the counterparty key a signed key statement binds: through
/// the invitation `token` (the first key, or a change the current key did
/// not sign, flagged), or without one when the current key signed it too
/// (a rotation). The current key again answers its binding (`false`:
/// nothing written, the invitation not used).
///
/// # Errors
/// 410 for a bad token; 422 `statement_rejected` naming the reason (a new
/// key without an invitation must be signed by the current key:
/// `not_signed_by_current_key`); 409 for a key this ledger had before or a
/// ledger at its key limit; 404 without an invitation for a ledger that
/// has no key; 402 when the vendor's plan refuses the log fact.
pub async fn register_key(
    app: &App,
    token: Option<&str>,
    signed: &str,
) -> ApiResult<(KeyView, bool)> {
    let Target {
        log,
        db,
        invitation,
        ledger_id,
    } = target(app, token, signed).await?;
    let keys = agreements::keys(&db, &ledger_id).await?;
    let current = keys.last();
    let c = agreement::canonical_key_binding(signed, current.map(|k| k.verifier_key.as_str()))
        .map_err(|e| rejected(&e))?;
    if let Some(k) = keys.iter().find(|k| k.verifier_key == c.binding.key()) {
        if current.is_some_and(|cur| cur.item_hash == k.item_hash) {
            return Ok((KeyView::from_row(k, status_of(k)), false));
        }
        return Err(ApiError::coded(
            ErrorCode::KeyAlreadyRegistered,
            "This key was registered for this ledger before and has been replaced since; a key \
             is registered once: make a new key",
        ));
    }
    let (tenant_id, customer_id) = match (&invitation, current) {
        (Some(i), _) => (i.tenant_id.clone(), i.customer_id.clone()),
        (None, Some(k)) => (k.tenant_id.clone(), k.customer_id.clone()),
        (None, None) => {
            return Err(ApiError::NotFound(format!(
                "No counterparty key is registered for ledger {ledger_id}; open the vendor's invitation first"
            )))
        }
    };
    if invitation.is_none() && !c.signed_by_previous {
        return Err(rejected(&StatementError::NotSignedByCurrentKey));
    }
    let row = KeyRow {
        item_hash: agreement::item_hash(&c.signed),
        ledger_id,
        tenant_id,
        customer_id,
        verifier_key: c.binding.key().to_string(),
        statement: c.signed,
        registered_at: app.now_ms,
        signed_by_previous: current.map(|_| u64::from(c.signed_by_previous)),
    };
    let token_hash = invitation.as_ref().map(|i| &i.token_hash);
    write(app, log, &row, token_hash).await?;
    Ok((KeyView::from_row(&row, "QUEUED"), true))
}

/// Where a key statement registers: its log (and that log's database),
/// the invitation it came with, and its ledger.
struct Target {
    log: LogId,
    db: D1Database,
    invitation: Option<InvitationRow>,
    ledger_id: Hash32,
}

/// Reads a key statement: a key binding, self-signed (an edited binding is
/// refused as such), whose origin is its log's and whose ledger is the
/// invitation's (or, without one, the ledger it names).
async fn target(app: &App, token: Option<&str>, signed: &str) -> ApiResult<Target> {
    let unverified = agreement::read_unverified(signed).map_err(|e| rejected(&e))?;
    if !matches!(unverified, Statement::Key(_)) {
        return Err(rejected(&StatementError::WrongKind {
            expected: "key",
            got: unverified.kind(),
        }));
    }
    let named = agreement::verify_key_binding(signed).map_err(|e| rejected(&e))?;
    let (log, invitation) = match token {
        Some(t) => {
            let (log, _, row) = live_invitation(app, t).await?;
            (log, Some(row))
        }
        None => (log_of_origin(app, &named.origin)?, None),
    };
    let db = db(app, log)?;
    let expected_origin = origin(app, log)?;
    if named.origin != expected_origin {
        return Err(rejected(&StatementError::OriginMismatch {
            expected: expected_origin.as_str().to_string(),
            got: named.origin.as_str().to_string(),
        }));
    }
    let ledger_id = match &invitation {
        Some(i) => i.ledger_id,
        None => named.ledger,
    };
    if !named.ledger.ct_eq(&ledger_id) {
        return Err(rejected(&StatementError::LedgerMismatch {
            expected: ledger_id,
            got: named.ledger,
        }));
    }
    Ok(Target {
        log,
        db,
        invitation,
        ledger_id,
    })
}

fn status_of(_k: &KeyRow) -> &'static str {
    "REGISTERED"
}

/// The registration's one batch: the log fact and its meters, the
/// invitation's use, the ledger's key count and the key row.
async fn write(
    app: &App,
    log: super::LogId,
    row: &KeyRow,
    token_hash: Option<&Hash32>,
) -> ApiResult<()> {
    let db = db(app, log)?;
    // A statement is a fact of the vendor's tenant: it counts against the
    // vendor's plan like any fact, so no party can fill the shared database.
    let metadata = json!({ "agreement": "key" }).to_string();
    let fact = FactWrite::new(app, &row.tenant_id, &row.statement, metadata).await?;
    let mut statements = fact.statements()?;
    // The meter's period column is text: the ledger id's hex.
    let ledger_period = row.ledger_id.to_hex();
    let keys = Raise {
        tenant_id: &row.tenant_id,
        meter: Meter::CounterpartyKeys,
        period: &ledger_period,
        add: 1,
        cap: KEYS_PER_LEDGER_MAX,
    };
    let mut raises = Vec::new();
    let token_period = token_hash.map(Hash32::to_hex);
    if let (Some(t), Some(period)) = (token_hash, &token_period) {
        let used = Raise {
            tenant_id: &row.tenant_id,
            meter: Meter::InvitationUses,
            period,
            add: 1,
            cap: 1,
        };
        statements.push(meters::raise(&used)?);
        statements.push(agreements::use_invitation(t, app.now_ms)?);
        raises.push(used);
    }
    statements.push(meters::raise(&keys)?);
    statements.push(agreements::insert_key(row)?);
    raises.push(keys);
    raises.extend(fact.raises());
    match meters::batch_within_caps(&db, statements, &raises).await? {
        Ok(_) => {}
        Err(Meter::InvitationUses) => {
            return Err(invalid(
                "Invitation was already used; ask the vendor for a new one",
            ))
        }
        Err(Meter::CounterpartyKeys) => {
            return Err(ApiError::Conflict(format!(
                "This ledger has the most key bindings it can have ({KEYS_PER_LEDGER_MAX})"
            )))
        }
        Err(m) => return Err(meter::over(m, fact.plan, log.env, app.now_ms)),
    }
    doorbell::ring(app, log).await;
    Ok(())
}
