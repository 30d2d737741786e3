//! Deltas: read by the routes and the sequencer, marked VERIFIED by the
//! sequencer (they are inserted with their submission, see `submissions`).

use bvs_core::amount::Amount;
use bvs_core::conditions::Conditions;
use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::{all, args, first, over_json, queries, row, ItemStatus, Query, Statements};
use crate::error::ApiResult;
use crate::ids::{AnchorId, SubmissionId, TenantId};

row! {
    $ select_deltas from "deltas";
    #[expect(dead_code, reason = "a row mirrors its table")]
    #[derive(Debug, Clone, Deserialize)]
    pub struct DeltaRow {
        anchor_id: AnchorId, tenant_id: TenantId, customer_id: CustomerId, submission_id: SubmissionId,
        position: u64, item_hash: Hash32, items_root: Hash32,
        #[serde(deserialize_with = "super::amount")]
        delta: Amount,
        reason: Option<String>, reference_id: Option<String>, metadata: Option<String>,
        declared_at: u64, received_at: u64, status: ItemStatus, leaf_index: Option<u64>,
        tree_size: Option<u64>, ledger_seq: Option<u64>,
        #[serde(deserialize_with = "super::opt_amount")]
        balance_after: Option<Amount>,
        verified_at: Option<u64>, data_purged: u64, purged_at: Option<u64>,
        ledger_root: Option<Hash32>, asset: Asset,
        /// What it asks when sequenced (issue 43).
        #[serde(deserialize_with = "super::conditions")]
        conditions: Conditions,
        /// Why it FAILED (`{"code", "message"}`), the refusal item of a
        /// refused delta (its hashed text), its leaf and when.
        failure: Option<String>, refusal: Option<String>, refusal_leaf: Option<u64>,
        refusal_seq: Option<u64>, refused_at: Option<u64>,
    }
}

pub(super) use select_deltas;

impl DeltaRow {
    /// The proof root a customer is given for this delta: the root over
    /// its own ledger's deltas of its submission (the submission's items
    /// root when the submission holds one ledger). The items root until a
    /// delta from before per-ledger roots is backfilled (its public answer
    /// withholds amounts when it spans ledgers).
    pub fn proof_root(&self) -> Hash32 {
        self.ledger_root.unwrap_or(self.items_root)
    }
}

/// `$tail` after the CTE `t(tenant, n)`: the tenants with queued deltas
/// after `?1` (at most `?2`), in order, a walk of the partial index
/// `deltas_queued_by_tenant` (one seek each).
macro_rules! after_queued_tenants {
    ($tail:expr) => {
        concat!(
            "WITH RECURSIVE t(tenant, n) AS (SELECT (SELECT MIN(tenant_id) FROM deltas \
             WHERE status = 'QUEUED' AND tenant_id > ?1), 1 UNION ALL \
             SELECT (SELECT MIN(tenant_id) FROM deltas WHERE status = 'QUEUED' AND tenant_id > t.tenant), \
             n + 1 FROM t WHERE t.tenant IS NOT NULL AND n < ?2) ",
            $tail
        )
    };
}
const SELECT_QUEUED_TENANTS: &str =
    after_queued_tenants!("SELECT tenant FROM t WHERE tenant IS NOT NULL");
/// The rowids (`r`) of a round's candidates with their part (`p`): the
/// first `?3` queued deltas of each tenant `t` names (part 0), and the
/// first `?4` queued deltas of the shard (part 1), each once.
macro_rules! fair_pick {
    () => {
        after_queued_tenants!(concat!(
            "SELECT r, MIN(p) AS p FROM (SELECT q.rowid AS r, 0 AS p FROM t JOIN deltas AS q \
             ON q.rowid IN (SELECT x.rowid FROM deltas AS x WHERE x.status = 'QUEUED' \
             AND x.tenant_id = t.tenant ORDER BY x.rowid LIMIT ?3) \
             UNION ALL SELECT g.r, 1 FROM (SELECT rowid AS r FROM deltas WHERE status = 'QUEUED' \
             ORDER BY rowid LIMIT ?4) AS g) GROUP BY r"
        ))
    };
}
/// A sequencer round's candidates (issue 27, fair across tenants):
/// [`fair_pick`]'s, its part 0 first, each part in arrival order. Every
/// tenant's candidates are thus a prefix of its queue in arrival order,
/// and stay so under any prefix of the list.
const SELECT_QUEUED_FAIR: &str = select_deltas!(concat!(
    "JOIN (",
    fair_pick!(),
    ") AS pick ON pick.r = deltas.rowid ORDER BY pick.p, deltas.rowid"
));
const SELECT_ONE: &str = select_deltas!("WHERE tenant_id = ?1 AND anchor_id = ?2");
/// The deltas of the submission of a delta (`?1` tenant, `?2` anchorId).
const SELECT_SIBLINGS: &str = select_deltas!(
    "WHERE tenant_id = ?1 AND submission_id = \
     (SELECT submission_id FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?2) \
     ORDER BY position ASC"
);
const SELECT_OF_SUBMISSIONS_BY_ROOT: &str = select_deltas!(
    "WHERE submission_id IN (SELECT id FROM submissions WHERE items_root = ?1 LIMIT 10) \
     ORDER BY position ASC"
);
const SELECT_LEDGER_RANGE: &str = select_deltas!(
    "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?5 AND ledger_seq >= ?3 \
     AND ledger_seq <= ?4 ORDER BY ledger_seq ASC"
);
const SELECT_LEDGER_BY_ITEMS_ROOT: &str = select_deltas!(
    "WHERE (items_root = ?3 OR ledger_root = ?3) AND tenant_id = ?1 AND customer_id = ?2 \
     AND asset = ?4 AND status = 'VERIFIED' ORDER BY ledger_seq DESC LIMIT 1"
);
const SELECT_LEDGER_LINES: &str = "SELECT item_hash, anchor_id, reference_id, delta FROM deltas \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?5 AND ledger_seq >= ?3 \
     AND ledger_seq <= ?4 ORDER BY ledger_seq ASC";
const COUNT_QUEUED_OF_LEDGER: &str = "SELECT COUNT(*) AS n FROM deltas \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?3 AND status = 'QUEUED'";
/// A round's deltas (`?1`: `[anchor_id, leaf_index, ledger_seq,
/// balance_after]` each) VERIFIED into the head of size `?2` at `?3`.
/// `+status`: no index on the status drives the update (the queued rows
/// times the set); the set does, one primary-key lookup per row.
const MARK_VERIFIED_SET: &str = "UPDATE deltas SET status = 'VERIFIED', \
     leaf_index = json_extract(j.value, '$[1]'), tree_size = ?2, \
     ledger_seq = json_extract(j.value, '$[2]'), balance_after = json_extract(j.value, '$[3]'), \
     verified_at = ?3 FROM json_each(?1) AS j \
     WHERE deltas.anchor_id = json_extract(j.value, '$[0]') AND +deltas.status = 'QUEUED'";
/// The oldest queued delta is the first in arrival order (one index step,
/// however long the queue), or the oldest queued fact.
const SELECT_OLDEST_QUEUED: &str = "SELECT MIN(at) AS at FROM (SELECT received_at AS at FROM \
     (SELECT received_at FROM deltas WHERE status = 'QUEUED' ORDER BY rowid LIMIT 1) \
     UNION ALL SELECT MIN(created_at) AS at FROM facts WHERE status = 'QUEUED')";
/// A shard's queue as the operator sees it (`GET /admin/shards`).
const SELECT_PROGRESS: &str = "SELECT \
     (SELECT COUNT(*) FROM deltas WHERE status = 'QUEUED') AS queued_deltas, \
     (SELECT COUNT(*) FROM facts WHERE status = 'QUEUED') AS queued_facts, \
     (SELECT COUNT(*) FROM checkpoints WHERE status = 'QUEUED') AS queued_checkpoints, \
     (SELECT MIN(at) FROM (SELECT received_at AS at FROM (SELECT received_at FROM deltas \
     WHERE status = 'QUEUED' ORDER BY rowid LIMIT 1) UNION ALL SELECT MIN(created_at) FROM facts \
     WHERE status = 'QUEUED' UNION ALL SELECT MIN(created_at) FROM checkpoints \
     WHERE status = 'QUEUED')) AS oldest_queued_at, \
     (SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL) AS outbox_pending, \
     (SELECT MAX(tree_size) FROM tree_heads) AS tree_size, \
     (SELECT value FROM log_meta WHERE key = 'tiles_size') AS tiles_size";

/// A verified delta of one ledger as a client names a starting point:
/// by an itemsRoot it was given (its ledger's root of its submission, or
/// the submission's own root handed out before per-ledger roots; the
/// latest such delta) or by its anchorId.
#[derive(Debug, Clone, Copy)]
pub enum StartAt<'a> {
    ItemsRoot(&'a str),
    AnchorId(&'a str),
}

/// The ledger_seq of the starting delta (`?1` tenant, `?2` customer, `?3`
/// the itemsRoot, `$asset` the asset's placeholder), as a subquery: NULL
/// when there is none.
macro_rules! start_seq_by_items_root {
    ($asset:literal) => {
        concat!(
            "(SELECT ledger_seq FROM deltas WHERE (items_root = ?3 OR ledger_root = ?3) \
             AND tenant_id = ?1 AND customer_id = ?2 AND asset = ",
            $asset,
            " AND status = 'VERIFIED' ORDER BY ledger_seq DESC LIMIT 1)"
        )
    };
}
/// The same, `?3` an anchorId.
macro_rules! start_seq_by_anchor_id {
    ($asset:literal) => {
        concat!(
            "(SELECT ledger_seq FROM deltas WHERE tenant_id = ?1 AND anchor_id = ?3 \
             AND customer_id = ?2 AND asset = ",
            $asset,
            " AND status = 'VERIFIED')"
        )
    };
}
pub(super) use {start_seq_by_anchor_id, start_seq_by_items_root};

/// The statements of a derivation from a starting delta, keyed by what
/// the request already has (`?1` tenant, `?2` customer, `?3` the start's
/// name), so they share one batch with the ledger: the starting delta, the
/// page after it (`?4`, `?5`: its first and last position counted from
/// the start) and the delta right after it; `?6` the asset (bound in
/// each of them).
struct FromStart {
    at: &'static str,
    page: &'static str,
    next: &'static str,
    /// The refused deltas that met positions `start + ?4 - 1 ..= start +
    /// ?5` (issue 43), at most `DERIVE_REFUSALS_MAX`.
    refusals: &'static str,
}

macro_rules! from_start {
    ($start:ident) => {
        FromStart {
            at: select_deltas!(concat!(
                "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?6 AND ?4 + ?5 >= 0 \
                 AND ledger_seq = ",
                $start!("?6")
            )),
            page: select_deltas!(concat!(
                "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?6 AND ledger_seq >= ",
                $start!("?6"),
                " + ?4 AND ledger_seq <= ",
                $start!("?6"),
                " + ?5 ORDER BY ledger_seq ASC"
            )),
            next: select_deltas!(concat!(
                "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?6 AND ?4 + ?5 >= 0 \
                 AND ledger_seq = ",
                $start!("?6"),
                " + 1"
            )),
            refusals: select_deltas!(concat!(
                "WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?6 \
                 AND refusal_leaf IS NOT NULL AND refusal_seq >= ",
                $start!("?6"),
                " + ?4 - 1 AND refusal_seq <= ",
                $start!("?6"),
                " + ?5 ORDER BY refusal_seq ASC, refusal_leaf ASC LIMIT 100"
            )),
        }
    };
}

const FROM_ITEMS_ROOT: FromStart = from_start!(start_seq_by_items_root);
const FROM_ANCHOR_ID: FromStart = from_start!(start_seq_by_anchor_id);

/// For a caller's batch (`ledgers::ledger_page_from`): the starting
/// delta, the deltas at positions `start + first ..= start + last`, and
/// the delta at `start + 1`.
///
/// # Errors
/// A value that cannot be bound.
pub fn from_start_statements<'a>(
    tenant_id: &'a TenantId,
    (customer_id, asset): (&'a CustomerId, &Asset),
    start: StartAt<'a>,
    (first, last): (u64, u64),
) -> ApiResult<[Query<'a>; 4]> {
    let (sql, name) = match start {
        StartAt::ItemsRoot(r) => (&FROM_ITEMS_ROOT, r),
        StartAt::AnchorId(a) => (&FROM_ANCHOR_ID, a),
    };
    let page = args![tenant_id, customer_id, name, first, last, asset];
    Ok([
        Query::new(sql.at, page.clone()),
        Query::new(sql.page, page.clone()),
        Query::new(sql.next, page.clone()),
        Query::new(sql.refusals, page),
    ])
}

super::statements! {
    /// `of_ledger` for a caller's batch (`ledgers::ledger_page`).
    pub fn of_ledger_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, from_seq: u64, to_seq: u64, asset: &'a Asset)
        = SELECT_LEDGER_RANGE;
}

/// The verified deltas of a ledger's window `?3` (at most `?4` from its
/// first): a receipt of one period, read with the window in one batch.
const SELECT_OF_WINDOW: &str = select_deltas!(
    ", (SELECT first_seq AS wf, last_seq AS wl FROM ledger_windows \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?5 AND window = ?3) AS w \
     WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?5 \
     AND ledger_seq >= w.wf AND ledger_seq <= w.wl \
     AND ledger_seq < w.wf + ?4 ORDER BY ledger_seq ASC"
);
/// The deltas the receipt with items root `?1` covers (the first of
/// `receipts::by_root_statement`'s rows), for the public verify lookup.
const SELECT_OF_RECEIPT_BY_ROOT: &str = select_deltas!(
    ", (SELECT tenant_id AS rt, customer_id AS rc, asset AS ra, from_seq AS rf, to_seq AS rl \
     FROM receipts WHERE items_root = ?1 ORDER BY tenant_id ASC, customer_id ASC LIMIT 1) AS r \
     WHERE tenant_id = r.rt AND customer_id = r.rc AND asset = r.ra \
     AND ledger_seq >= r.rf AND ledger_seq <= r.rl \
     ORDER BY ledger_seq ASC"
);
/// The deltas a checkpoint covers, as its public answer lists them: of
/// tenant `$t`, those `$who` selects (its customer's, or every one of a
/// whole-tenant checkpoint), verified, in its period `$p` (`YYYY-MM`, a
/// UTC month by verification time), at log positions `$from..=$to`. The
/// lookup and the check of a checkpoint's records
/// (`checkpoints::records_page`) share it, so the check is of what the
/// answer lists.
macro_rules! checkpoint_records {
    ($t:literal, $who:literal, $p:literal, $from:literal, $to:literal) => {
        concat!(
            "tenant_id = ",
            $t,
            " AND ",
            $who,
            " AND status = 'VERIFIED' \
             AND verified_at >= CAST(strftime('%s', ",
            $p,
            " || '-01') AS INTEGER) * 1000 \
             AND verified_at < CAST(strftime('%s', ",
            $p,
            " || '-01', '+1 month') AS INTEGER) * 1000 \
             AND leaf_index >= ",
            $from,
            " AND leaf_index <= ",
            $to
        )
    };
}
pub(super) use checkpoint_records;

/// One page (`?2` limit, `?3` offset) of the deltas the checkpoint with
/// merkle root `?1` covers (the first of `checkpoints::by_root_statement`'s
/// rows), for the public verify lookup. A whole-tenant checkpoint's
/// customer is `'*'`, which no customer id can be.
const SELECT_OF_CHECKPOINT_BY_ROOT: &str = select_deltas!(concat!(
    ", (SELECT tenant_id AS ct, customer_id AS cc, asset AS ca, from_index AS cf, \
     to_index AS cl, period AS cp FROM checkpoints WHERE merkle_root = ?1 \
     ORDER BY created_at ASC, rowid ASC LIMIT 1) AS c WHERE ",
    checkpoint_records!(
        "c.ct",
        "(c.cc = '*' OR (customer_id = c.cc AND asset = c.ca))",
        "c.cp",
        "c.cf",
        "c.cl"
    ),
    " ORDER BY leaf_index ASC LIMIT ?2 OFFSET ?3"
));
/// The deltas of one ledger's part of a submission: those whose ledger
/// root is `?1` (at most a batch's).
const SELECT_BY_LEDGER_ROOT: &str =
    select_deltas!("WHERE ledger_root = ?1 ORDER BY submission_id ASC, position ASC LIMIT 200");

super::statements! {
    /// For the public verify lookup (`store::proofs`).
    pub fn by_ledger_root_statement<'a>(root: &'a Hash32) = SELECT_BY_LEDGER_ROOT;
}

// ------------------------------------------------------------------ ledger roots backfill

/// Deltas from before per-ledger roots (migration 0060), of single emits
/// (`?1` at most): their ledger's root is their submission's items root.
const BACKFILL_SINGLE: &str = "UPDATE deltas SET ledger_root = items_root WHERE rowid IN \
     (SELECT d.rowid FROM deltas d JOIN submissions s ON s.id = d.submission_id \
     WHERE d.ledger_root IS NULL AND s.kind = 'single' LIMIT ?1)";
/// Every delta of up to `?1` batches with deltas from before per-ledger
/// roots, in submission and position order.
const SELECT_BATCHES_WITHOUT_LEDGER_ROOT: &str =
    "SELECT tenant_id, customer_id, submission_id, item_hash, items_root \
     FROM deltas WHERE submission_id IN (SELECT d.submission_id FROM deltas d \
     JOIN submissions s ON s.id = d.submission_id \
     WHERE d.ledger_root IS NULL AND s.kind = 'batch' LIMIT ?1) \
     ORDER BY submission_id ASC, position ASC";
const SET_LEDGER_ROOT: &str =
    "UPDATE deltas SET ledger_root = ?3 WHERE submission_id = ?1 AND customer_id = ?2";

/// A delta as the ledger roots backfill reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct BackfillRow {
    pub tenant_id: TenantId,
    pub customer_id: CustomerId,
    pub submission_id: SubmissionId,
    pub item_hash: Hash32,
    pub items_root: Hash32,
}

queries! {
    /// Gives up to `limit` single emits from before per-ledger roots
    /// theirs; how many.
    pub fn backfill_single(limit: u64) -> u64 = run(BACKFILL_SINGLE);
    /// The deltas of up to `limit` batches from before per-ledger roots.
    pub fn batches_without_ledger_root(limit: u64) -> Vec<BackfillRow>
        = all(SELECT_BATCHES_WITHOUT_LEDGER_ROOT);
}

super::statements! {
    /// Sets the ledger root of one ledger's deltas of one submission.
    pub fn set_ledger_root<'a>(submission_id: &'a SubmissionId, customer_id: &'a CustomerId, root: &'a Hash32) = SET_LEDGER_ROOT;
}

super::statements! {
    /// A receipt's deltas of one period, for its batch (`store::receipts`).
    pub fn of_window_statement<'a>(tenant_id: &'a TenantId, customer_id: &'a CustomerId, window: &'a str, max: u64, asset: &'a Asset)
        = SELECT_OF_WINDOW;
}

super::statements! {
    /// For the public verify lookup (`store::proofs`).
    pub fn of_receipt_by_root_statement<'a>(root: &'a Hash32) = SELECT_OF_RECEIPT_BY_ROOT;
}

super::statements! {
    /// For the public verify lookup (`store::proofs`).
    pub fn of_checkpoint_by_root_statement<'a>(root: &'a Hash32, limit: u64, offset: u64)
        = SELECT_OF_CHECKPOINT_BY_ROOT;
}

super::statements! {
    /// The deltas of the submissions with items root `root` (any tenant),
    /// for a caller's batch (`store::proofs`).
    pub fn of_submissions_by_root_statement<'a>(root: &'a Hash32) = SELECT_OF_SUBMISSIONS_BY_ROOT;
}

super::statements! {
    /// For a round's read batch: the tenants with queued deltas after
    /// `after` (at most `max`), in order (rows: `tenant`).
    pub fn queued_tenants_statement<'a>(after: &'a str, max: u64) = SELECT_QUEUED_TENANTS;
}

super::statements! {
    /// For a round's read batch: its candidates ([`SELECT_QUEUED_FAIR`]).
    pub fn queued_fair_statement<'a>(after: &'a str, tenants: u64, per_tenant: u64, first: u64)
        = SELECT_QUEUED_FAIR;
}

queries! {
    pub fn delta(tenant_id: &TenantId, anchor_id: &AnchorId) -> Option<DeltaRow> = first(SELECT_ONE);
    /// The latest verified delta of this ledger whose itemsRoot is `items_root`.
    pub fn of_ledger_by_items_root(tenant_id: &TenantId, customer_id: &CustomerId, items_root: &str, asset: &Asset)
        -> Option<DeltaRow> = first(SELECT_LEDGER_BY_ITEMS_ROOT);
    pub fn queued_count(tenant_id: &TenantId, customer_id: &CustomerId, asset: &Asset) -> u64 = count(COUNT_QUEUED_OF_LEDGER);
}

/// What a pinpointing compare needs of a verified delta: its ids and amount.
#[derive(Debug, Clone, Deserialize)]
pub struct LedgerLine {
    pub item_hash: Hash32,
    pub anchor_id: AnchorId,
    pub reference_id: Option<String>,
    #[serde(deserialize_with = "super::amount")]
    pub delta: Amount,
}

/// The ids and amounts of a ledger's verified deltas with
/// `from_seq <= ledger_seq <= to_seq`, in ledger order.
pub async fn lines_of_ledger(
    db: &D1Database,
    tenant_id: &TenantId,
    (customer_id, asset): (&CustomerId, &Asset),
    from_seq: u64,
    to_seq: u64,
) -> ApiResult<Vec<LedgerLine>> {
    let args = args![tenant_id, customer_id, from_seq, to_seq, asset];
    all(db, Query::new(SELECT_LEDGER_LINES, args)).await
}

pub struct VerifiedDelta<'a> {
    pub anchor_id: &'a AnchorId,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub ledger_seq: u64,
    pub balance_after: Amount,
    pub verified_at: u64,
}

/// Marks a round's deltas VERIFIED (all into one head, at one time): one
/// statement per JSON set.
///
/// # Errors
/// A value that cannot be bound.
pub fn mark_verified_all<'a>(
    verified: &[VerifiedDelta<'_>],
    tree_size: u64,
    verified_at: u64,
) -> Statements<'a> {
    let rows: Vec<(&str, u64, u64, String)> = verified
        .iter()
        .map(|v| {
            (
                v.anchor_id.as_str(),
                v.leaf_index,
                v.ledger_seq,
                v.balance_after.to_string(),
            )
        })
        .collect();
    over_json(MARK_VERIFIED_SET, &rows, &args![tree_size, verified_at])
}

/// A shard's queue and log as the operator sees them.
#[derive(Debug, Clone, Deserialize)]
pub struct Progress {
    pub queued_deltas: u64,
    pub queued_facts: u64,
    pub queued_checkpoints: u64,
    pub oldest_queued_at: Option<u64>,
    pub outbox_pending: u64,
    pub tree_size: Option<u64>,
    pub tiles_size: Option<String>,
}

queries! {
    /// The shard's queue and log (counts scan the queue's index: an
    /// operator's read, not a hot route's).
    pub fn progress() -> Option<Progress> = first(SELECT_PROGRESS);
}

/// The receive time of the oldest QUEUED delta or fact, if any.
pub async fn oldest_queued_at(db: &D1Database) -> ApiResult<Option<u64>> {
    #[derive(Deserialize)]
    struct Oldest {
        at: Option<u64>,
    }
    let row: Option<Oldest> = first(db, Query::new(SELECT_OLDEST_QUEUED, [])).await?;
    Ok(row.and_then(|r| r.at))
}

const MARK_FAILED: &str =
    "UPDATE deltas SET status = 'FAILED', failure = ?2 WHERE anchor_id = ?1 AND status = 'QUEUED'";

/// Marks a QUEUED delta FAILED (it can never be appended) with its
/// `failure` (`{"code", "message"}`); a no-op for one that is not QUEUED
/// any more.
pub fn mark_failed<'a>(anchor_id: &'a AnchorId, failure: String) -> ApiResult<Query<'a>> {
    Ok(Query::new(MARK_FAILED, args![anchor_id, failure]))
}

super::statements! {
    fn delta_statement<'a>(tenant_id: &'a TenantId, anchor_id: &'a AnchorId) = SELECT_ONE;
    fn siblings_statement<'a>(tenant_id: &'a TenantId, anchor_id: &'a AnchorId) = SELECT_SIBLINGS;
}

/// A delta's status as read in one round trip (issue 16; one batch: one
/// snapshot): the delta, the signed tree head it was verified into, and
/// the deltas of its submission.
pub struct StatusRead {
    pub delta: Option<DeltaRow>,
    pub head: Option<super::log::HeadRow>,
    /// In submission order; the delta itself among them.
    pub siblings: Vec<DeltaRow>,
    /// A witnessed head includes it (issue 28).
    pub witnessed: bool,
}

/// Reads a [`StatusRead`] of the tenant's delta `anchor_id`.
///
/// # Errors
/// D1 errors.
pub async fn status(
    db: &D1Database,
    tenant_id: &TenantId,
    anchor_id: &AnchorId,
) -> ApiResult<StatusRead> {
    let results = super::batch(
        db,
        vec![
            delta_statement(tenant_id, anchor_id)?,
            super::log::head_of_delta_statement(tenant_id, anchor_id)?,
            siblings_statement(tenant_id, anchor_id)?,
            super::witness::covers_delta_statement(tenant_id, anchor_id)?,
        ],
    )
    .await?;
    Ok(StatusRead {
        delta: super::rows(&results, 0)?.into_iter().next(),
        head: super::rows(&results, 1)?.into_iter().next(),
        siblings: super::rows(&results, 2)?,
        witnessed: super::rows::<super::witness::Covers>(&results, 3)?
            .first()
            .is_some_and(|c| c.witnessed == 1),
    })
}
