//! Two-party agreement: invitations (token hashes only), counterparty key
//! bindings and the statements counterparties signed (docs/agreement.md).

use bvs_core::amount::Amount;
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, args, first, run, stmt};
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
/// The latest key binding of a ledger (`?2`) with its fact's log position
/// in tenant `?1` (NULL until appended).
const SELECT_LOGGED_KEY: &str =
    "SELECT k.item_hash, k.ledger_id, k.tenant_id, k.customer_id, k.verifier_key, k.statement, \
     k.registered_at, f.leaf_index FROM counterparty_keys k \
     LEFT JOIN facts f ON f.tenant_id = ?1 AND f.content_hash = k.item_hash \
     WHERE k.ledger_id = ?2 ORDER BY k.registered_at DESC, k.rowid DESC LIMIT 1";
/// The statements about a receipt's candidate checkpoints (see
/// `checkpoints::receipt_candidates`), each with its fact's log position.
macro_rules! logged_statements_of {
    ($candidates:expr) => {
        concat!(
            "SELECT a.item_hash, a.ledger_id, a.tenant_id, a.customer_id, a.checkpoint_id, a.kind, \
             a.verifier_key, a.statement, a.created_at, f.leaf_index FROM agreements a \
             LEFT JOIN facts f ON f.tenant_id = ?1 AND f.content_hash = a.item_hash \
             WHERE a.checkpoint_id IN (SELECT id FROM checkpoints WHERE ",
            $candidates,
            ") ORDER BY a.created_at ASC, a.rowid ASC"
        )
    };
}
const SELECT_LOGGED_STATEMENTS_OF_LEDGER: &str =
    logged_statements_of!(super::checkpoints::receipt_candidates_of_ledger!());
const SELECT_LOGGED_STATEMENTS_OF_PERIOD: &str =
    logged_statements_of!(super::checkpoints::receipt_candidates_of_period!());
/// The keys of the ledgers of the agreement checkpoints with root `?1`
/// (`checkpoints::agreement_checkpoints_by_root`), oldest first.
const SELECT_KEYS_BY_CHECKPOINT_ROOT: &str = concat!(
    "SELECT item_hash, ledger_id, tenant_id, customer_id, verifier_key, statement, registered_at \
     FROM counterparty_keys WHERE ledger_id IN (SELECT ledger_id FROM ledgers \
     WHERE (tenant_id, customer_id) IN (SELECT tenant_id, customer_id FROM checkpoints WHERE ",
    super::checkpoints::agreement_checkpoints_by_root!(),
    ")) ORDER BY registered_at ASC, rowid ASC"
);
/// The statements about the agreement checkpoints with root `?1`.
const SELECT_AGREEMENTS_BY_CHECKPOINT_ROOT: &str = concat!(
    "SELECT item_hash, ledger_id, tenant_id, customer_id, checkpoint_id, kind, verifier_key, \
     statement, created_at FROM agreements WHERE checkpoint_id IN (SELECT id FROM checkpoints \
     WHERE ",
    super::checkpoints::agreement_checkpoints_by_root!(),
    ") ORDER BY created_at ASC, rowid ASC"
);
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

/// A key binding and where its fact is in the log (None until appended).
#[derive(Debug, Clone, Deserialize)]
pub struct LoggedKey {
    #[serde(flatten)]
    pub key: KeyRow,
    pub leaf_index: Option<u64>,
}

/// A statement and where its fact is in the log (None until appended).
#[derive(Debug, Clone, Deserialize)]
pub struct LoggedStatement {
    #[serde(flatten)]
    pub agreement: AgreementRow,
    pub leaf_index: Option<u64>,
}

/// For a receipt's batch (`store::receipts::read`): the latest key of
/// ledger `ledger_id` (tenant `tenant_id`) with its log position.
///
/// # Errors
/// A value that cannot be bound.
pub fn logged_key(
    db: &D1Database,
    tenant_id: &str,
    ledger_id: &str,
) -> ApiResult<D1PreparedStatement> {
    stmt(db, SELECT_LOGGED_KEY, &args![tenant_id, ledger_id])
}

/// For a receipt's batch: the statements about the checkpoints that can
/// have its root (`checkpoints::receipt_candidates`), with log positions.
///
/// # Errors
/// A value that cannot be bound.
pub fn logged_statements(
    db: &D1Database,
    tenant_id: &str,
    customer_id: &str,
    period: Option<&str>,
) -> ApiResult<D1PreparedStatement> {
    let sql = (
        SELECT_LOGGED_STATEMENTS_OF_LEDGER,
        SELECT_LOGGED_STATEMENTS_OF_PERIOD,
    );
    super::checkpoints::over_candidates(db, sql, tenant_id, customer_id, period)
}

super::statements! {
    /// For the public verify lookup (`store::lookup`): the keys of the
    /// ledgers of the agreement checkpoints with this root.
    pub fn keys_by_checkpoint_root(root: &str) = SELECT_KEYS_BY_CHECKPOINT_ROOT;
}

super::statements! {
    /// The statements about those checkpoints.
    pub fn agreements_by_checkpoint_root(root: &str) = SELECT_AGREEMENTS_BY_CHECKPOINT_ROOT;
}

/// The invitation's insert, for a batch that also stores the answer under
/// an Idempotency-Key (issue 29).
pub fn insert_invitation_stmt(
    db: &D1Database,
    r: &InvitationRow,
) -> ApiResult<worker::D1PreparedStatement> {
    let args = args![
        &r.token_hash,
        &r.tenant_id,
        &r.customer_id,
        &r.ledger_id,
        r.created_at,
        r.expires_at
    ];
    stmt(db, INSERT_INVITATION, &args)
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
