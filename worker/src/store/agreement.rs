//! Two-party agreement: invitations (token hashes only), counterparty key
//! bindings and the statements counterparties signed (docs/agreement.md).

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::{all, args, first, queries, Query};
use crate::error::ApiResult;
use crate::ids::{AnchorId, CheckpointId, TenantId};

const INSERT_INVITATION: &str =
    "INSERT INTO invitations (token_hash, tenant_id, customer_id, ledger_id, created_at, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
const SELECT_INVITATION: &str =
    "SELECT token_hash, tenant_id, customer_id, ledger_id, created_at, expires_at, used_at \
     FROM invitations WHERE token_hash = ?1";
/// Marks an invitation used, in the batch of the key it registers (the
/// batch's `invitation_uses` meter refuses a second use).
const USE_INVITATION: &str = "UPDATE invitations SET used_at = ?2 WHERE token_hash = ?1";
/// A key binding, in the batch that meters it and logs it (a plain
/// INSERT: a binding already recorded fails the batch).
const INSERT_KEY: &str =
    "INSERT INTO counterparty_keys (item_hash, ledger_id, tenant_id, customer_id, \
     verifier_key, statement, registered_at, signed_by_previous) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
const SELECT_KEYS: &str =
    "SELECT item_hash, ledger_id, tenant_id, customer_id, verifier_key, statement, registered_at, \
     signed_by_previous FROM counterparty_keys WHERE ledger_id = ?1 \
     ORDER BY registered_at ASC, rowid ASC";
/// A statement, in the batch that meters it and logs it (a plain INSERT:
/// the same (checkpoint, key, text) twice fails the batch).
const INSERT_AGREEMENT: &str =
    "INSERT INTO agreements (item_hash, ledger_id, tenant_id, customer_id, checkpoint_id, \
     kind, verifier_key, statement, created_at, text) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
/// The statement a key made about a checkpoint with this text, if any.
const SELECT_AGREEMENT_BY_TEXT: &str =
    "SELECT item_hash, ledger_id, tenant_id, customer_id, checkpoint_id, kind, verifier_key, \
     statement, created_at FROM agreements \
     WHERE checkpoint_id = ?1 AND verifier_key = ?2 AND text = ?3";
/// Every key binding of a ledger (`?2`), oldest first, with its fact's log
/// position in tenant `?1` (NULL until appended): for a receipt's batch
/// (`store::receipts::read`).
const SELECT_LOGGED_KEYS: &str =
    "SELECT k.item_hash, k.ledger_id, k.tenant_id, k.customer_id, k.verifier_key, k.statement, \
     k.registered_at, k.signed_by_previous, f.leaf_index FROM counterparty_keys k \
     LEFT JOIN facts f ON f.tenant_id = ?1 AND f.content_hash = k.item_hash \
     WHERE k.ledger_id = ?2 ORDER BY k.registered_at ASC, k.rowid ASC";
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
    "SELECT item_hash, ledger_id, tenant_id, customer_id, verifier_key, statement, registered_at, \
     signed_by_previous FROM counterparty_keys WHERE ledger_id IN (SELECT ledger_id FROM ledgers \
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
    "SELECT balance_after FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 \
     AND status = 'VERIFIED' AND leaf_index <= ?3 ORDER BY leaf_index DESC LIMIT 1";

#[derive(Debug, Clone, Deserialize)]
pub struct InvitationRow {
    pub token_hash: Hash32,
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub ledger_id: Hash32,
    pub created_at: u64,
    pub expires_at: u64,
    pub used_at: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KeyRow {
    pub item_hash: Hash32,
    pub ledger_id: Hash32,
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub verifier_key: String,
    pub statement: String,
    pub registered_at: u64,
    /// None for a ledger's first key; 1 when the key before it signed
    /// this binding, 0 when it came through an invitation alone.
    pub signed_by_previous: Option<u64>,
}

super::text_enum! {
    /// A customer's statement on a checkpoint: `balance` (agreed) or
    /// `dispute` (`agreements.kind`).
    pub enum AgreementKind {
        Balance = "balance",
        Dispute = "dispute",
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct AgreementRow {
    pub item_hash: Hash32,
    pub ledger_id: Hash32,
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub checkpoint_id: CheckpointId,
    pub kind: AgreementKind,
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

/// For a receipt's batch (`store::receipts::read`): every key of ledger
/// `ledger_id` (tenant `tenant_id`), oldest first, with its log position.
///
/// # Errors
/// A value that cannot be bound.
pub fn logged_keys<'a>(tenant_id: &'a TenantId, ledger_id: &'a Hash32) -> ApiResult<Query<'a>> {
    Ok(Query::new(SELECT_LOGGED_KEYS, args![tenant_id, ledger_id]))
}

/// For a receipt's batch: the statements about the checkpoints that can
/// have its root (`checkpoints::RECEIPT_CANDIDATES`), with log positions.
pub const LOGGED_STATEMENTS: super::checkpoints::OverCandidates =
    super::checkpoints::OverCandidates::new(
        SELECT_LOGGED_STATEMENTS_OF_LEDGER,
        SELECT_LOGGED_STATEMENTS_OF_PERIOD,
    );

super::statements! {
    /// For the public verify lookup (`store::proofs`): the keys of the
    /// ledgers of the agreement checkpoints with this root.
    pub fn keys_by_checkpoint_root<'a>(root: &'a Hash32) = SELECT_KEYS_BY_CHECKPOINT_ROOT;
}

super::statements! {
    /// The statements about those checkpoints.
    pub fn agreements_by_checkpoint_root<'a>(root: &'a Hash32) = SELECT_AGREEMENTS_BY_CHECKPOINT_ROOT;
}

/// An invitation's insert, for its metered batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_invitation<'a>(r: &'a InvitationRow) -> ApiResult<Query<'a>> {
    let args = args![
        &r.token_hash,
        &r.tenant_id,
        &r.customer_id,
        &r.ledger_id,
        r.created_at,
        r.expires_at
    ];
    Ok(Query::new(INSERT_INVITATION, args))
}

pub async fn invitation(db: &D1Database, token_hash: &Hash32) -> ApiResult<Option<InvitationRow>> {
    first(db, Query::new(SELECT_INVITATION, args![token_hash])).await
}

super::statements! {
    /// Marks an invitation used (for the registration's batch).
    pub fn use_invitation<'a>(token_hash: &'a Hash32, now_ms: u64) = USE_INVITATION;
}

/// A key binding's insert, for the registration's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_key<'a>(k: &'a KeyRow) -> ApiResult<Query<'a>> {
    let args = args![
        &k.item_hash,
        &k.ledger_id,
        &k.tenant_id,
        &k.customer_id,
        &k.verifier_key,
        &k.statement,
        k.registered_at,
        k.signed_by_previous
    ];
    Ok(Query::new(INSERT_KEY, args))
}

/// Every key binding of a ledger, oldest first (the last is its key).
pub async fn keys(db: &D1Database, ledger_id: &Hash32) -> ApiResult<Vec<KeyRow>> {
    all(db, Query::new(SELECT_KEYS, args![ledger_id])).await
}

/// A statement's insert, with its text (what makes two the same), for
/// the statement's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_agreement<'a>(a: &'a AgreementRow, text: &'a str) -> ApiResult<Query<'a>> {
    let args = args![
        &a.item_hash,
        &a.ledger_id,
        &a.tenant_id,
        &a.customer_id,
        &a.checkpoint_id,
        a.kind,
        &a.verifier_key,
        &a.statement,
        a.created_at,
        text
    ];
    Ok(Query::new(INSERT_AGREEMENT, args))
}

queries! {
    /// The statement `verifier_key` made about checkpoint `checkpoint_id`
    /// with this text, if recorded.
    pub fn agreement_by_text(checkpoint_id: &CheckpointId, verifier_key: &str, text: &str)
        -> Option<AgreementRow> = first(SELECT_AGREEMENT_BY_TEXT);
}

/// The customer's balance after its last verified delta at or before log
/// position `leaf` (zero before its first).
pub async fn balance_at_leaf(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    leaf: u64,
) -> ApiResult<Amount> {
    #[derive(Deserialize)]
    struct Row {
        #[serde(deserialize_with = "super::opt_amount")]
        balance_after: Option<Amount>,
    }
    let row: Option<Row> = first(
        db,
        Query::new(
            SELECT_BALANCE_AT_LEAF,
            args![tenant_id, customer_id, leaf, asset],
        ),
    )
    .await?;
    Ok(row.and_then(|r| r.balance_after).unwrap_or(Amount::ZERO))
}

/// Where a checkpoint's period starts in its ledger: its window's first
/// position and the balance before it.
#[derive(Debug, Clone, Deserialize)]
pub struct WindowStart {
    pub first_seq: u64,
    #[serde(deserialize_with = "super::amount")]
    pub balance_before: Amount,
}

/// One delta as a dispute names it.
#[derive(Debug, Clone, Deserialize)]
pub struct DeltaAt {
    pub ledger_seq: u64,
    pub item_hash: bvs_core::hash::Hash32,
    pub anchor_id: AnchorId,
    pub reference_id: Option<String>,
    #[serde(deserialize_with = "super::amount")]
    pub balance_after: Amount,
}

const SELECT_WINDOW_START: &str = "SELECT first_seq, balance_before FROM ledger_windows \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND window = ?3";
/// The verified deltas of a ledger at up to four positions (`?3..?6`).
const SELECT_DELTAS_AT: &str =
    "SELECT ledger_seq, item_hash, anchor_id, reference_id, balance_after FROM deltas \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?7 AND status = 'VERIFIED' \
     AND ledger_seq IN (?3, ?4, ?5, ?6)";

queries! {
    /// Where period `window` starts in the ledger.
    pub fn window_start(tenant_id: &TenantId, customer_id: &CustomerId, window: &str, asset: &Asset) -> Option<WindowStart>
        = first(SELECT_WINDOW_START);
}

/// The ledger's verified deltas at `seqs` (at most four; none: no read).
///
/// # Errors
/// D1 errors.
pub async fn deltas_at(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    seqs: &[u64],
) -> ApiResult<Vec<DeltaAt>> {
    let Some(first_seq) = seqs.first() else {
        return Ok(Vec::new());
    };
    let at = |i: usize| seqs.get(i).copied().unwrap_or(*first_seq);
    let args = args![tenant_id, customer_id, at(0), at(1), at(2), at(3), asset];
    all(db, Query::new(SELECT_DELTAS_AT, args)).await
}
