//! Checkpoints: a period's Merkle root over a ledger's (or a tenant's)
//! verified deltas, itself appended to the log.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::{all, args, queries, row, statements, CheckpointStatus, Query};
use crate::error::ApiResult;
use crate::ids::{CheckpointId, TenantId};

row! {
    $ select_checkpoints from "checkpoints";
    #[derive(Debug, Clone, Deserialize)]
    pub struct CheckpointRow {
        id: CheckpointId, tenant_id: TenantId, customer_id: CheckpointOf, period: String, merkle_root: Hash32,
        delta_count: u64,
        #[serde(deserialize_with = "super::amount")]
        net_delta: Amount,
        from_index: u64, to_index: u64, status: CheckpointStatus, created_at: u64,
        committed_at: Option<u64>, leaf_index: Option<u64>, tree_size: Option<u64>,
        failure: Option<String>,
        /// Whether the records its public answer lists recompute its root:
        /// 1 yes, 0 no, None not checked yet (migration 0060).
        records_verified: Option<u64>,
        /// The check's progress through a large checkpoint: the frontier
        /// over the records read so far, and the last leaf read.
        check_frontier: Option<String>, check_after_leaf: Option<u64>,
        /// A customer's checkpoint covers this asset's deltas (issue 43);
        /// a whole tenant's, every asset ('' stored).
        asset: Asset,
    }
}

/// The stored `customer_id` of a whole-tenant checkpoint (the API's
/// `all`, `bvs_core::types::WHOLE_TENANT`): no customer id can be `*`.
pub const WHOLE_TENANT_ROW: &str = "*";

/// Whose balance a checkpoint is over: one customer's ledger, or the whole
/// tenant (stored as [`WHOLE_TENANT_ROW`]). Parsed once, when the row is
/// read; bound as the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointOf {
    WholeTenant,
    Customer(CustomerId),
}

impl CheckpointOf {
    /// `customer`'s checkpoint, or the whole tenant's for `None`.
    pub fn of(customer: Option<&CustomerId>) -> Self {
        customer.map_or(Self::WholeTenant, |c| Self::Customer(c.clone()))
    }

    /// The stored text: the customer id, or `*`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::WholeTenant => WHOLE_TENANT_ROW,
            Self::Customer(c) => c.as_str(),
        }
    }

    /// The customer, for a customer's checkpoint.
    pub fn customer(&self) -> Option<&CustomerId> {
        match self {
            Self::WholeTenant => None,
            Self::Customer(c) => Some(c),
        }
    }
}

impl<'de> Deserialize<'de> for CheckpointOf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == WHOLE_TENANT_ROW {
            return Ok(Self::WholeTenant);
        }
        CustomerId::parse(&s)
            .map(Self::Customer)
            .map_err(serde::de::Error::custom)
    }
}

impl<'a> super::Bind<'a> for &'a CheckpointOf {
    fn arg(self) -> ApiResult<super::Arg<'a>> {
        Ok(super::Arg::Text(self.as_str()))
    }
}

impl CheckpointRow {
    /// A checkpoint over every customer of its tenant.
    pub fn is_whole_tenant(&self) -> bool {
        self.customer_id == CheckpointOf::WholeTenant
    }

    /// The customer of a checkpoint known to be one ledger's (found by
    /// that ledger's key).
    ///
    /// # Errors
    /// Internal, for a whole-tenant checkpoint.
    pub fn ledger_customer(&self) -> ApiResult<&CustomerId> {
        self.customer_id.customer().ok_or_else(|| {
            crate::error::ApiError::internal(format!("checkpoint {} is not one ledger's", self.id))
        })
    }

    /// Its `customerId` as the API names it (`all` for the whole tenant).
    pub fn customer_view(&self) -> &str {
        match &self.customer_id {
            CheckpointOf::WholeTenant => bvs_core::types::WHOLE_TENANT,
            CheckpointOf::Customer(c) => c.as_str(),
        }
    }
}
/// The optional filters of a tenant's checkpoint list.
macro_rules! page_filter {
    () => {
        "WHERE tenant_id = ?1 AND (?2 IS NULL OR customer_id = ?2) AND (?3 IS NULL OR period = ?3) "
    };
}

const INSERT: &str =
    "INSERT INTO checkpoints (id, tenant_id, customer_id, period, merkle_root, delta_count, \
     net_delta, from_index, to_index, status, created_at, records_verified, asset) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?10, ?7, ?8, 'QUEUED', ?9, ?11, ?12)";
const SELECT_QUEUED: &str =
    select_checkpoints!("WHERE status = 'QUEUED' ORDER BY rowid ASC LIMIT ?1");
/// A round's checkpoints (`?1`: `[id, leaf_index]` each) COMMITTED into
/// the head of size `?2` at `?3`.
/// `+status`: no index on the status drives the update (the queued rows
/// times the set); the set does, one primary-key lookup per row.
const MARK_COMMITTED_SET: &str = "UPDATE checkpoints SET status = 'COMMITTED', \
     leaf_index = json_extract(j.value, '$[1]'), tree_size = ?2, committed_at = ?3 \
     FROM json_each(?1) AS j WHERE checkpoints.id = json_extract(j.value, '$[0]') \
     AND +checkpoints.status = 'QUEUED'";
const MARK_FAILED: &str =
    "UPDATE checkpoints SET status = 'FAILED', failure = ?2 WHERE id = ?1 AND status = 'QUEUED'";
/// One page of a tenant's checkpoints, newest first, each with its
/// signed head's hash and the same ledger's previous committed checkpoint
/// (issue 25: one statement, not two reads per row).
const SELECT_PAGE: &str = concat!(
    "SELECT x.*, (SELECT note_hash FROM tree_heads h WHERE h.tree_size = x.tree_size) AS tx_hash, \
     p.id AS prev_id, p.period AS prev_period, p.tree_size AS prev_tree_size \
     FROM (SELECT rowid AS list_rowid, * FROM checkpoints ",
    page_filter!(),
    "ORDER BY created_at DESC, rowid DESC LIMIT ?4 OFFSET ?5) AS x \
     LEFT JOIN checkpoints p ON p.id = (SELECT q.id FROM checkpoints q \
     WHERE q.tenant_id = x.tenant_id AND q.customer_id = x.customer_id AND q.asset = x.asset \
     AND q.status = 'COMMITTED' AND q.created_at < x.created_at \
     ORDER BY q.created_at DESC, q.rowid DESC LIMIT 1) \
     ORDER BY x.created_at DESC, x.list_rowid DESC"
);
const COUNT_PAGE: &str = concat!("SELECT COUNT(*) AS n FROM checkpoints ", page_filter!());
const SELECT_BY_ROOT: &str =
    select_checkpoints!("WHERE merkle_root = ?1 ORDER BY created_at ASC, rowid ASC LIMIT 10");

/// The committed checkpoints of one customer (`?1` tenant, `?2`
/// customer) that can have a receipt's root, read before the root is
/// known (issue 16: in the receipt's one batch): those over as many
/// deltas as the receipt lists, the whole ledger's count or (`?3`) the
/// period's. The caller keeps the one whose merkle root is the receipt's.
macro_rules! receipt_candidates_of_ledger {
    () => {
        "tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND status = 'COMMITTED' \
         AND delta_count = (SELECT verified_count FROM ledgers WHERE tenant_id = ?1 \
         AND customer_id = ?2 AND asset = ?3)"
    };
}
macro_rules! receipt_candidates_of_period {
    () => {
        "tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND status = 'COMMITTED' \
         AND period = ?3 AND delta_count = (SELECT last_seq - first_seq + 1 FROM ledger_windows \
         WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?4 AND window = ?3)"
    };
}
pub(super) use {receipt_candidates_of_ledger, receipt_candidates_of_period};

const SELECT_RECEIPT_CANDIDATES_OF_LEDGER: &str = select_checkpoints!(concat!(
    "WHERE ",
    receipt_candidates_of_ledger!(),
    " ORDER BY created_at ASC, rowid ASC"
));
const SELECT_RECEIPT_CANDIDATES_OF_PERIOD: &str = select_checkpoints!(concat!(
    "WHERE ",
    receipt_candidates_of_period!(),
    " ORDER BY created_at ASC, rowid ASC"
));

/// The committed single-customer checkpoints with merkle root `?1`: those
/// the public verify route can show an agreement side for.
macro_rules! agreement_checkpoints_by_root {
    () => {
        "merkle_root = ?1 AND status = 'COMMITTED' AND customer_id != '*'"
    };
}
pub(super) use agreement_checkpoints_by_root;

/// The closing balance of each of those (the balance after the customer's
/// last verified delta at or before the checkpoint's last log position).
const SELECT_CLOSING_BALANCES_BY_ROOT: &str = concat!(
    "SELECT id, (SELECT balance_after FROM deltas WHERE deltas.tenant_id = checkpoints.tenant_id \
     AND deltas.customer_id = checkpoints.customer_id AND deltas.asset = checkpoints.asset \
     AND deltas.status = 'VERIFIED' \
     AND deltas.leaf_index <= checkpoints.to_index ORDER BY deltas.leaf_index DESC LIMIT 1) \
     AS balance_after FROM checkpoints WHERE ",
    agreement_checkpoints_by_root!()
);

/// A checkpoint's closing balance (zero before the customer's first delta).
#[derive(Debug, Clone, Deserialize)]
pub struct ClosingBalance {
    pub id: CheckpointId,
    #[serde(deserialize_with = "super::opt_amount")]
    pub balance_after: Option<Amount>,
}

/// A read over a receipt's candidate checkpoints: `.0` for the whole
/// ledger (`?1` tenant, `?2` customer), `.1` for one period (and `?3` the
/// period).
pub struct OverCandidates(&'static str, &'static str);

/// For a receipt's batch (`store::receipts::read`): the checkpoints that
/// can have its root.
pub const RECEIPT_CANDIDATES: OverCandidates = OverCandidates(
    SELECT_RECEIPT_CANDIDATES_OF_LEDGER,
    SELECT_RECEIPT_CANDIDATES_OF_PERIOD,
);

impl OverCandidates {
    pub(super) const fn new(of_ledger: &'static str, of_period: &'static str) -> Self {
        OverCandidates(of_ledger, of_period)
    }

    /// The read over the whole ledger (`period` None) or one period.
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn statement<'a>(
        &self,
        tenant_id: &'a TenantId,
        customer_id: &'a CustomerId,
        (period, asset): (Option<&'a str>, &'a Asset),
    ) -> ApiResult<Query<'a>> {
        match period {
            None => Ok(Query::new(self.0, args![tenant_id, customer_id, asset])),
            Some(p) => Ok(Query::new(self.1, args![tenant_id, customer_id, p, asset])),
        }
    }
}

/// The checkpoint's insert, for a metered batch.
pub fn insert_stmt<'a>(c: &'a CheckpointRow) -> ApiResult<Query<'a>> {
    let (merkle_root, net_delta) = (c.merkle_root.to_hex(), c.net_delta.to_string());
    let args = args![
        &c.id,
        &c.tenant_id,
        &c.customer_id,
        &c.period,
        merkle_root,
        c.delta_count,
        c.from_index,
        c.to_index,
        c.created_at,
        net_delta,
        c.records_verified,
        &c.asset
    ];
    Ok(Query::new(INSERT, args))
}

/// One page of the records a checkpoint's public answer lists, as leaf
/// and item hash, after leaf `after` (exclusive; `None` from the first):
/// what the check of its records reads. A customer's checkpoint reads its
/// ledger's deltas, a whole tenant's the tenant's (the same condition as
/// the lookup's, `deltas::checkpoint_records`, each by its own index).
const SELECT_RECORDS_OF_LEDGER: &str = concat!(
    "SELECT leaf_index, item_hash FROM deltas WHERE ",
    super::deltas::checkpoint_records!("?1", "customer_id = ?2 AND asset = ?8", "?3", "?4", "?5"),
    " AND leaf_index > ?6 ORDER BY leaf_index ASC LIMIT ?7"
);
const SELECT_RECORDS_OF_TENANT: &str = concat!(
    "SELECT leaf_index, item_hash FROM deltas WHERE ",
    super::deltas::checkpoint_records!("?1", "?2 = '*'", "?3", "?4", "?5"),
    " AND leaf_index > ?6 ORDER BY leaf_index ASC LIMIT ?7"
);

/// One record of a checkpoint, as its check reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct RecordHash {
    pub leaf_index: u64,
    pub item_hash: Hash32,
}

/// Up to `limit` records of checkpoint `c` after leaf `after` (see
/// [`SELECT_RECORDS_OF_LEDGER`]).
///
/// # Errors
/// D1 errors.
pub async fn records_page(
    db: &D1Database,
    c: &CheckpointRow,
    after: Option<u64>,
    limit: u64,
) -> ApiResult<Vec<RecordHash>> {
    let sql = if c.is_whole_tenant() {
        SELECT_RECORDS_OF_TENANT
    } else {
        SELECT_RECORDS_OF_LEDGER
    };
    // Leaves are never negative: -1 reads from the first.
    let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
    let mut args = args![
        &c.tenant_id,
        &c.customer_id,
        &c.period,
        c.from_index,
        c.to_index,
        super::Arg::Int(after),
        limit
    ]
    .to_vec();
    if !c.is_whole_tenant() {
        args.push(super::Bind::arg(&c.asset)?);
    }
    all(db, Query::new(sql, args)).await
}

const SELECT_UNCHECKED: &str =
    select_checkpoints!("WHERE records_verified IS NULL ORDER BY created_at ASC LIMIT ?1");
const SET_CHECKED: &str =
    "UPDATE checkpoints SET records_verified = ?2, check_frontier = NULL, check_after_leaf = NULL \
     WHERE id = ?1";
const SET_CHECK_PROGRESS: &str =
    "UPDATE checkpoints SET check_frontier = ?2, check_after_leaf = ?3 WHERE id = ?1";

queries! {
    /// Checkpoints whose records are not checked yet, oldest first.
    pub fn unchecked(limit: u64) -> Vec<CheckpointRow> = all(SELECT_UNCHECKED);
    /// Stores a finished check: `verified` 1 passed, 0 failed.
    pub fn set_checked(id: &CheckpointId, verified: u64) -> () = exec(SET_CHECKED);
    /// Stores a check's progress.
    pub fn set_check_progress(id: &CheckpointId, frontier: &str, after_leaf: u64) -> ()
        = exec(SET_CHECK_PROGRESS);
}

statements! {
    /// For a sequencer round's read batch: the queued checkpoints in order.
    pub fn queued_statement<'a>(limit: u64) = SELECT_QUEUED;
}

statements! {
    /// `by_root` for a caller's batch (`store::proofs`).
    pub fn by_root_statement<'a>(root: &'a Hash32) = SELECT_BY_ROOT;
}

statements! {
    /// The closing balances of the agreement checkpoints with this root,
    /// for a caller's batch (`store::proofs`).
    pub fn closing_balances_by_root_statement<'a>(root: &'a Hash32) = SELECT_CLOSING_BALANCES_BY_ROOT;
}

/// Marks a round's checkpoints (`(id, leaf index)` each) COMMITTED: one
/// statement per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn mark_committed_all<'a>(
    committed: &[(&str, u64)],
    tree_size: u64,
    now_ms: u64,
) -> super::Statements<'a> {
    super::over_json(MARK_COMMITTED_SET, committed, &args![tree_size, now_ms])
}

statements! {
    /// Marks a QUEUED checkpoint FAILED (it can never be appended), keeping
    /// why; a no-op for one no longer QUEUED.
    pub fn mark_failed<'a>(id: &'a CheckpointId, failure: &'a str) = MARK_FAILED;
}

/// A listed checkpoint: the row, its signed head's hash, and the same
/// ledger's previous committed checkpoint.
#[derive(Debug, Clone, Deserialize)]
pub struct ListedRow {
    #[serde(flatten)]
    pub row: CheckpointRow,
    pub tx_hash: Option<Hash32>,
    pub prev_id: Option<CheckpointId>,
    pub prev_period: Option<String>,
    pub prev_tree_size: Option<u64>,
}

/// Checkpoints of a tenant, newest first, optionally filtered, and how
/// many match: one round trip.
pub async fn page(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: Option<&CheckpointOf>,
    period: Option<&str>,
    limit: u64,
    offset: u64,
) -> ApiResult<(Vec<ListedRow>, u64)> {
    let filter = args![tenant_id, customer_id, period];
    let mut args = filter.to_vec();
    args.extend(args![limit, offset]);
    let results = super::batch(
        db,
        vec![
            Query::new(SELECT_PAGE, args),
            Query::new(COUNT_PAGE, filter),
        ],
    )
    .await?;
    let rows = super::rows(&results, 0)?;
    #[derive(Deserialize)]
    struct Count {
        n: u64,
    }
    let total = super::rows::<Count>(&results, 1)?
        .into_iter()
        .next()
        .map_or(0, |c| c.n);
    Ok((rows, total))
}

queries! {
    /// Checkpoints (any tenant) whose merkle_root is `root`.
    pub fn by_root(root: &Hash32) -> Vec<CheckpointRow> = all(SELECT_BY_ROOT);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn whose_checkpoint_reads_and_binds_the_stored_text() {
        let whole: CheckpointOf = serde_json::from_str("\"*\"").unwrap();
        assert_eq!(whole, CheckpointOf::WholeTenant);
        assert_eq!(whole.as_str(), WHOLE_TENANT_ROW);
        assert_eq!(whole.customer(), None);
        let one: CheckpointOf = serde_json::from_str("\"cust_1\"").unwrap();
        assert_eq!(one.as_str(), "cust_1");
        assert_eq!(one.customer().map(CustomerId::as_str), Some("cust_1"));
        assert!(serde_json::from_str::<CheckpointOf>("\"a b\"").is_err());
    }
}
