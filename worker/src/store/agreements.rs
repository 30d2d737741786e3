//! Two-party agreement: invitations (token hashes only), counterparty key
//! bindings and the statements counterparties signed (docs/agreement.md).

use bvs_core::amount::Amount;
use serde::Deserialize;
use worker::D1Database;

use super::{all, args, first, run};
use crate::error::ApiResult;

const INSERT_INVITATION: &str =
    "INSERT INTO invitations (token_hash, tenant_id, customer_id, ledger_id, created_at, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
const SELECT_INVITATION: &str =
    "SELECT token_hash, tenant_id, customer_id, ledger_id, created_at, expires_at, used_at \
     FROM invitations WHERE token_hash = ?1";
/// Consumes a live invitation; `changes` says whether this call did.
const USE_INVITATION: &str =
    "UPDATE invitations SET used_at = ?2 WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2";
const INSERT_KEY: &str =
    "INSERT OR IGNORE INTO counterparty_keys (item_hash, ledger_id, tenant_id, customer_id, \
     verifier_key, statement, registered_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
const SELECT_KEYS: &str =
    "SELECT item_hash, ledger_id, tenant_id, customer_id, verifier_key, statement, registered_at \
     FROM counterparty_keys WHERE ledger_id = ?1 ORDER BY registered_at ASC, rowid ASC";
const INSERT_AGREEMENT: &str =
    "INSERT OR IGNORE INTO agreements (item_hash, ledger_id, tenant_id, customer_id, checkpoint_id, \
     kind, verifier_key, statement, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const SELECT_AGREEMENTS_OF_CHECKPOINT: &str =
    "SELECT item_hash, ledger_id, tenant_id, customer_id, checkpoint_id, kind, verifier_key, \
     statement, created_at FROM agreements WHERE checkpoint_id = ?1 ORDER BY created_at ASC, rowid ASC";
/// The balance after the customer's last verified delta at or before a
/// log position (a checkpoint's closing balance).
const SELECT_BALANCE_AT_LEAF: &str =
    "SELECT balance_after FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 \
     AND status = 'VERIFIED' AND leaf_index <= ?3 ORDER BY leaf_index DESC LIMIT 1";

#[derive(Debug, Clone, Deserialize)]
pub struct InvitationRow {
    pub token_hash: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub ledger_id: String,
    pub created_at: u64,
    pub expires_at: u64,
    pub used_at: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KeyRow {
    pub item_hash: String,
    pub ledger_id: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub verifier_key: String,
    pub statement: String,
    pub registered_at: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct AgreementRow {
    pub item_hash: String,
    pub ledger_id: String,
    pub tenant_id: String,
    pub customer_id: String,
    pub checkpoint_id: String,
    pub kind: String,
    pub verifier_key: String,
    pub statement: String,
    pub created_at: u64,
}

pub async fn insert_invitation(db: &D1Database, r: &InvitationRow) -> ApiResult<()> {
    let args = args![
        &r.token_hash,
        &r.tenant_id,
        &r.customer_id,
        &r.ledger_id,
        r.created_at,
        r.expires_at
    ];
    run(db, INSERT_INVITATION, &args).await?;
    Ok(())
}

pub async fn invitation(db: &D1Database, token_hash: &str) -> ApiResult<Option<InvitationRow>> {
    first(db, SELECT_INVITATION, &args![token_hash]).await
}

/// Marks the invitation used if it is live at `now_ms`; whether this call did.
pub async fn use_invitation(db: &D1Database, token_hash: &str, now_ms: u64) -> ApiResult<bool> {
    let changes = run(db, USE_INVITATION, &args![token_hash, now_ms]).await?;
    Ok(changes == 1)
}

pub async fn insert_key(db: &D1Database, k: &KeyRow) -> ApiResult<()> {
    let args = args![
        &k.item_hash,
        &k.ledger_id,
        &k.tenant_id,
        &k.customer_id,
        &k.verifier_key,
        &k.statement,
        k.registered_at
    ];
    run(db, INSERT_KEY, &args).await?;
    Ok(())
}

/// Every key binding of a ledger, oldest first (the last is its key).
pub async fn keys(db: &D1Database, ledger_id: &str) -> ApiResult<Vec<KeyRow>> {
    all(db, SELECT_KEYS, &args![ledger_id]).await
}

/// Records a statement; whether it was new.
pub async fn insert_agreement(db: &D1Database, a: &AgreementRow) -> ApiResult<bool> {
    let args = args![
        &a.item_hash,
        &a.ledger_id,
        &a.tenant_id,
        &a.customer_id,
        &a.checkpoint_id,
        &a.kind,
        &a.verifier_key,
        &a.statement,
        a.created_at
    ];
    Ok(run(db, INSERT_AGREEMENT, &args).await? == 1)
}

pub async fn of_checkpoint(db: &D1Database, checkpoint_id: &str) -> ApiResult<Vec<AgreementRow>> {
    all(db, SELECT_AGREEMENTS_OF_CHECKPOINT, &args![checkpoint_id]).await
}

/// The customer's balance after its last verified delta at or before log
/// position `leaf` (zero before its first).
pub async fn balance_at_leaf(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    leaf: u64,
) -> ApiResult<Amount> {
    #[derive(Deserialize)]
    struct Row {
        #[serde(deserialize_with = "super::opt_amount")]
        balance_after: Option<Amount>,
    }
    let row: Option<Row> = first(
        db,
        SELECT_BALANCE_AT_LEAF,
        &args![tenant_id, customer_id, leaf],
    )
    .await?;
    Ok(row.and_then(|r| r.balance_after).unwrap_or(Amount::ZERO))
}
