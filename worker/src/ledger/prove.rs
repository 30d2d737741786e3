//! Prove: what a client needs to check a claim without trusting the
//! service. A customer's receipt (core's `Receipt`: the deltas in ledger
//! order, each with its inclusion proof into the latest signed tree head),
//! and the public answer for a proof root.

use bvs_core::amount::Amount;
use bvs_core::derive::{self, DerivedDelta};
use bvs_core::hash::{DeltaContent, Hash32};
use bvs_core::log::HASH_SCHEME;
use bvs_core::merkle;
use bvs_core::receipt::{ProvenItem, Receipt, ReceiptProof, ReceiptVerification};
use bvs_core::types::{CustomerId, Env, Period};
use bvs_core::verify::{
    CheckpointLeaf, LogRef, PublicAnswer, PublicProof, PublicRecord, PublicSummary,
    RecordsPagination,
};
use bvs_core::{LeafIndex, TreeSize};

use super::agreement::CheckpointAgreement;
use super::{db, inclusion_proofs, inclusion_proofs_with, LogId, LogKey};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::store::checkpoints::CheckpointRow;
use crate::store::deltas::DeltaRow;
use crate::store::lookup::{Found, Looked};
use crate::store::receipts::{self, ReceiptOf, ReceiptRow};
use crate::store::{self, ledgers, CheckpointStatus, ItemStatus};
use crate::views;

/// A receipt lists at most this many deltas; beyond, ask per period.
pub const RECEIPT_DELTAS_MAX: u64 = 5_000;

/// Whose receipt, and where its verify link points.
pub struct ReceiptRequest<'a> {
    pub tenant_id: &'a str,
    /// The tenant's shard of the key's environment.
    pub log: LogId,
    pub customer_id: &'a CustomerId,
    pub period: Option<Period>,
    /// The service's origin, for `verification.verifyUrl`.
    pub origin: &'a str,
}

/// The ledger positions a receipt covers: `first..=last`, and the balance
/// before `first`.
struct Span {
    first_seq: u64,
    last_seq: u64,
    balance_before: Amount,
}

impl Span {
    fn count(&self) -> u64 {
        self.last_seq + 1 - self.first_seq
    }
}

/// A customer's receipt (whole history, or one period), recorded so that
/// its root resolves on the public verify route. Two sequential round
/// trips on the shard (issue 16): one batch reads everything the receipt
/// lists (`store::receipts::read`), then one batch reads the stored hashes
/// of every inclusion proof and writes the receipt's record, while the
/// control database indexes its root.
///
/// # Errors
/// 404 for an unknown customer or no verified deltas; 422 above
/// `RECEIPT_DELTAS_MAX` deltas.
pub async fn receipt(app: &App, r: &ReceiptRequest<'_>) -> ApiResult<Receipt> {
    let db = db(app, r.log)?;
    let customer = r.customer_id.as_str();
    let ledger_id = super::submit::ledger_id(r.tenant_id, customer);
    let period = r.period.map(|p| p.to_string());
    let read = receipts::read(
        &db,
        &ReceiptOf {
            tenant_id: r.tenant_id,
            customer_id: customer,
            period: period.as_deref(),
            ledger_id: &ledger_id,
            deltas_max: RECEIPT_DELTAS_MAX,
        },
    )
    .await?;
    let l = read
        .ledger
        .ok_or_else(|| ApiError::NotFound(format!("No ledger for customerId {customer}")))?;
    let span = span(r, &l, read.window)?;
    let rows: Vec<DeltaRow> = read
        .deltas
        .into_iter()
        .filter(|d| d.ledger_seq <= Some(span.last_seq))
        .collect();
    let head = read
        .head
        .ok_or_else(|| ApiError::internal("a ledger with verified deltas but no tree head"))?;
    let deltas: Vec<DerivedDelta> = rows.iter().map(derived).collect::<ApiResult<_>>()?;
    let item_hashes: Vec<Hash32> = deltas.iter().map(|d| d.item_hash).collect();
    let root = merkle::root(&item_hashes);
    let plan = super::agreement::plan_receipt(
        read.checkpoints,
        read.key,
        read.statements,
        &root,
        head.tree_size,
    );
    let record = ReceiptRow {
        items_root: root.to_hex(),
        tenant_id: r.tenant_id.to_string(),
        customer_id: customer.to_string(),
        period,
        from_seq: span.first_seq,
        to_seq: span.last_seq,
        delta_count: span.count(),
        generated_at: app.now_ms,
    };
    let mut leaves = leaves_of(&rows)?;
    let listed = leaves.len();
    leaves.extend(
        plan.iter()
            .flat_map(super::agreement::ReceiptAgreementPlan::leaves),
    );
    let write = vec![receipts::record(&db, &record)?];
    let proved = inclusion_proofs_with(&db, &leaves, head.tree_size, write);
    let mut proofs = super::submit::with_root_index(app, r.log, &record.items_root, proved).await?;
    let agreement_proofs = proofs.split_off(listed.min(proofs.len()));
    let items = proven(&rows, &leaves[..listed], proofs)?;
    let final_balance = match rows.last() {
        Some(row) => row.balance_after.unwrap_or(Amount::ZERO),
        None => span.balance_before,
    };
    let agreement = plan
        .map(|p| p.finish(app, r.log, &ledger_id, final_balance, agreement_proofs))
        .transpose()?;
    let parts = Parts {
        span: &span,
        root,
        final_balance,
        tree_head: head.note,
        deltas,
        items,
    };
    assemble(app, r, parts, agreement)
}

/// What a receipt is made of once read and proven.
struct Parts<'a> {
    span: &'a Span,
    root: Hash32,
    final_balance: Amount,
    tree_head: String,
    deltas: Vec<DerivedDelta>,
    items: Vec<ProvenItem>,
}

fn assemble(
    app: &App,
    r: &ReceiptRequest<'_>,
    p: Parts<'_>,
    agreement: Option<bvs_core::receipt::ReceiptAgreement>,
) -> ApiResult<Receipt> {
    let root = p.root;
    let item_hashes: Vec<Hash32> = p.deltas.iter().map(|d| d.item_hash).collect();
    let window_summaries = derive::window_summaries(&p.deltas)
        .map_err(|e| ApiError::internal(format!("windows: {e}")))?;
    let verify_url = format!("{}/api/v1/verify/{}", r.origin, root.to_hex());
    Ok(Receipt {
        customer_id: r.customer_id.as_str().to_string(),
        period: r.period.map(|p| p.to_string()),
        generated_at: views::iso(app.now_ms),
        deltas_count: p.deltas.len() as u64,
        starting_balance: p.span.balance_before,
        final_balance: p.final_balance,
        items_root: root,
        receipt_id: root,
        proof_root: root,
        latest_checkpoint: p.deltas.last().map(|d| d.items_root.to_hex()),
        deltas: p.deltas,
        window_summaries,
        verification: ReceiptVerification {
            message: format!(
                "itemsRoot is the RFC 9162 Merkle root of itemHashes in ledger order. Each delta's inclusion \
                 proof (log leaves hashed as proof.hashScheme names) leads to the signed tree head in \
                 proof.treeHead; check it with the public key at \
                 /api/v1/log/{}/key, or anywhere at {verify_url}.",
                r.log.path_name()
            ),
            item_hashes,
            proof_root: root,
            verify_url,
        },
        proof: ReceiptProof {
            hash_scheme: HASH_SCHEME.name().to_string(),
            tree_head: p.tree_head,
            public_key: LogKey::load(app, r.log)?.verifier_key()?,
            items: p.items,
        },
        agreement,
    })
}

/// The ledger positions the receipt covers: the period's window, or the
/// whole ledger.
fn span(
    r: &ReceiptRequest<'_>,
    l: &ledgers::LedgerRow,
    window: Option<ledgers::WindowRow>,
) -> ApiResult<Span> {
    let span = match &r.period {
        Some(_) => window.map(|w| Span {
            first_seq: w.first_seq,
            last_seq: w.last_seq,
            balance_before: w.balance_before,
        }),
        None => (l.verified_count > 0).then_some(Span {
            first_seq: 1,
            last_seq: l.verified_count,
            balance_before: Amount::ZERO,
        }),
    };
    let Some(span) = span else {
        return Err(ApiError::NotFound(format!(
            "No verified deltas for customer {}{}",
            r.customer_id.as_str(),
            r.period
                .map(|p| format!(" in period {p}"))
                .unwrap_or_default()
        )));
    };
    let count = span.count();
    if count > RECEIPT_DELTAS_MAX {
        return Err(ApiError::Unprocessable(format!(
            "This receipt would list {count} deltas; receipts list at most {RECEIPT_DELTAS_MAX}. \
             Ask for one period at a time with ?period=YYYY-MM"
        )));
    }
    Ok(span)
}

/// The log positions of verified rows.
fn leaves_of(rows: &[DeltaRow]) -> ApiResult<Vec<u64>> {
    rows.iter()
        .map(|r| {
            r.leaf_index
                .ok_or_else(|| ApiError::internal("verified delta without leaf"))
        })
        .collect()
}

/// Each verified row as a proven item, with its leaf and inclusion proof.
fn proven(
    rows: &[DeltaRow],
    leaves: &[u64],
    proofs: Vec<Vec<Hash32>>,
) -> ApiResult<Vec<ProvenItem>> {
    let mut items = Vec::with_capacity(rows.len());
    for ((row, proof), leaf) in rows.iter().zip(proofs).zip(leaves) {
        items.push(ProvenItem {
            anchor_id: row.anchor_id.clone(),
            item_hash: row.item_hash,
            leaf_index: LeafIndex(*leaf),
            inclusion_proof: proof,
            delta: row.delta,
            raw: raw_content(row)?,
        });
    }
    Ok(items)
}

fn derived(row: &DeltaRow) -> ApiResult<DerivedDelta> {
    let verified_at = row
        .verified_at
        .ok_or_else(|| ApiError::internal("receipt delta is not verified"))?;
    let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Ok(DerivedDelta {
        anchor_id: row.anchor_id.clone(),
        item_hash: row.item_hash,
        items_root: row.items_root,
        receipt_id: row.items_root,
        delta: row.delta,
        reason: row.reason.clone(),
        reference_id: row.reference_id.clone(),
        window: Period::containing(ms(verified_at)),
        declared_timestamp: ms(row.declared_at),
        block_timestamp: ms(verified_at),
        data_purged: row.data_purged != 0,
        verified: true,
        seq: row.ledger_seq.unwrap_or(0),
        balance_after: row.balance_after.unwrap_or(Amount::ZERO),
    })
}

/// The delta's content as hashed, while retention has not purged it.
fn raw_content(row: &DeltaRow) -> ApiResult<Option<DeltaContent>> {
    if row.data_purged != 0 {
        return Ok(None);
    }
    let Some(reason) = row.reason.clone() else {
        return Ok(None);
    };
    Ok(Some(DeltaContent {
        anchor_id: row.anchor_id.clone(),
        customer_id: row.customer_id.clone(),
        delta: row.delta,
        reason,
        reference_id: row.reference_id.clone(),
        metadata: row
            .metadata
            .as_deref()
            .map(bvs_core::json::parse)
            .transpose()
            .map_err(|e| ApiError::internal(format!("stored metadata: {e}")))?,
        declared_timestamp: views::iso(row.declared_at),
    }))
}

/// The net of `rows`' deltas.
pub fn sum(rows: &[DeltaRow]) -> ApiResult<Amount> {
    rows.iter().try_fold(Amount::ZERO, |acc, r| {
        acc.checked_add(r.delta)
            .map_err(|e| ApiError::internal(format!("net amount: {e}")))
    })
}

// ------------------------------------------------------------------ public answers

/// One page of a public answer's records.
pub struct RecordsPage {
    pub limit: u64,
    pub offset: u64,
}

/// The rows a proof root covers, and how the answer sums them up.
struct Covered {
    kind: &'static str,
    rows: Vec<DeltaRow>,
    period: Option<String>,
    status: String,
    total: u64,
    net: Amount,
    checkpoint: Option<CheckpointRow>,
}

const PUBLIC_MESSAGE: &str =
    "Check the tree head's signature with publicKey, each record's inclusion proof against \
     the head's root (log leaves hashed as hashScheme names), and that the RFC 9162 root of the records' itemHashes is the proof root \
     (for a checkpoint: checkpointLeaf.itemHash, itself proven into the head).";

/// The public answer for `root`, from whichever environment issued it,
/// and for a committed single-customer checkpoint its agreement side
/// (issue 19). Three sequential round trips (issue 16): the proof-root
/// index, one batch on the shard it names (`store::lookup`), the stored
/// hashes of every inclusion proof.
///
/// # Errors
/// 404 when no environment issued `root`.
pub async fn public_answer(
    app: &App,
    root: Hash32,
    page: &RecordsPage,
    origin: &str,
) -> ApiResult<(PublicAnswer, Option<CheckpointAgreement>)> {
    let (at, found) = resolve(app, &root.to_hex(), page).await?;
    let db = db(app, at)?;
    let head = match found.head {
        Some(head) => head,
        None => super::head_or_init(app, at).await?,
    };
    let covered = covered(found.found, found.deltas, page)?;
    let checkpoint_at = covered
        .checkpoint
        .as_ref()
        .and_then(|c| c.leaf_index.map(|l| (c.merkle_root, l)));
    // Every proof (the records' and the checkpoint's leaf) in one read.
    let mut leaves: Vec<u64> = covered.rows.iter().filter_map(|r| r.leaf_index).collect();
    leaves.extend(checkpoint_at.map(|(_, leaf)| leaf));
    let mut proofs = inclusion_proofs(&db, &leaves, head.tree_size).await?;
    let checkpoint_leaf = checkpoint_at.map(|(item_hash, leaf)| CheckpointLeaf {
        item_hash,
        leaf_index: LeafIndex(leaf),
        inclusion_proof: proofs.pop().unwrap_or_default(),
    });
    let records = records(&covered.rows, proofs);
    let item_hashes: Vec<Hash32> = covered.rows.iter().map(|r| r.item_hash).collect();
    let verified = match &covered.checkpoint {
        Some(c) => c.status == CheckpointStatus::Committed && checkpoint_leaf.is_some(),
        None => !records.is_empty() && records.iter().all(|r| r.leaf_index.is_some()),
    };
    // Only a checkpoint's root can have an agreement side.
    let agreement = if covered.checkpoint.is_some() {
        super::agreement::of_checkpoint(app, at, &found.checkpoints, found.agreement)?
    } else {
        None
    };
    let summary = summary(at.env, root, &covered, &records);
    let key = LogKey::load(app, at)?;
    let answer = PublicAnswer {
        verified,
        summary,
        records,
        verification: PublicProof {
            public_ledger_url: Some(format!("{origin}/api/v1/log/{}/checkpoint", at.path_name())),
            hash_scheme: HASH_SCHEME.name().to_string(),
            tree_head: head.note.clone(),
            tree_size: TreeSize(head.tree_size),
            public_key: key.verifier_key()?,
            log: Some(log_ref(at, &key.origin, origin)),
            items_root: merkle::root(&item_hashes),
            checkpoint_leaf,
            message: Some(PUBLIC_MESSAGE.to_string()),
        },
        pagination: Some(RecordsPagination {
            limit: page.limit,
            offset: page.offset,
            total: covered.total,
        }),
    };
    Ok((answer, agreement))
}

/// The shard that issued `root`, as the proof-root index names it
/// (`shard::of_root`), and what it is there (with one `page` of a
/// checkpoint's deltas); 404 for a root the index does not name or the
/// shard does not hold.
async fn resolve(app: &App, root: &str, page: &RecordsPage) -> ApiResult<(LogId, Looked)> {
    if let Some(at) = super::shard::of_root(app, root).await? {
        let db = db(app, at)?;
        let looked = store::lookup::root(&db, root, page.limit, page.offset).await?;
        if let Some(found) = looked.found() {
            return Ok((at, found));
        }
    }
    Err(ApiError::NotFound(format!(
        "No proof root {root} was issued by this service"
    )))
}

/// How an answer names its log: environment, shard, the log's path name
/// and origin, and where to read its checkpoint and key (the log list,
/// `GET /api/v1/logs`, has the same).
pub fn log_ref(at: LogId, log_origin: &str, service_origin: &str) -> LogRef {
    let name = at.path_name();
    LogRef {
        checkpoint_url: format!("{service_origin}/api/v1/log/{name}/checkpoint"),
        environment: at.env.as_str().to_string(),
        key_url: format!("{service_origin}/api/v1/log/{name}/key"),
        origin: log_origin.to_string(),
        shard: u64::from(at.shard),
        name,
    }
}

/// What `found` covers, from the rows the lookup read: a submission's
/// deltas (of every submission with its root: keep its own) or a
/// receipt's, read whole and paged here; a checkpoint's, one page already.
fn covered(found: Found, read: Vec<DeltaRow>, page: &RecordsPage) -> ApiResult<Covered> {
    Ok(match found {
        Found::Submission(s) => {
            let rows: Vec<DeltaRow> = read
                .into_iter()
                .filter(|d| d.submission_id == s.id)
                .collect();
            let all_verified = rows.iter().all(|r| r.status == ItemStatus::Verified);
            let status = if all_verified { "VERIFIED" } else { "QUEUED" };
            Covered {
                kind: "submission",
                net: sum(&rows)?,
                total: rows.len() as u64,
                rows: one_page(rows, page),
                period: None,
                status: status.to_string(),
                checkpoint: None,
            }
        }
        Found::Receipt(r) => Covered {
            kind: "receipt",
            net: sum(&read)?,
            rows: one_page(read, page),
            period: r.period,
            status: "VERIFIED".to_string(),
            total: r.delta_count,
            checkpoint: None,
        },
        Found::Checkpoint(c) => {
            Period::parse(&c.period)?;
            Covered {
                kind: "checkpoint",
                rows: read,
                period: Some(c.period.clone()),
                status: c.status.as_str().to_string(),
                total: c.delta_count,
                net: c.net_delta,
                checkpoint: Some(c),
            }
        }
    })
}

/// The rows of one page: a receipt or a submission is read whole (its net
/// amount is over every row, at most `RECEIPT_DELTAS_MAX`), but only one
/// page of it gets inclusion proofs, like a checkpoint's.
fn one_page(rows: Vec<DeltaRow>, page: &RecordsPage) -> Vec<DeltaRow> {
    let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
    rows.into_iter().skip(offset).take(limit).collect()
}

/// The records with their inclusion proofs (`proofs`: one per record in
/// the log, in order; none for a delta not yet in the log).
fn records(rows: &[DeltaRow], proofs: Vec<Vec<Hash32>>) -> Vec<PublicRecord> {
    let mut proofs = proofs.into_iter();
    let mut records = Vec::with_capacity(rows.len());
    for r in rows {
        let proof = match r.leaf_index {
            Some(_) => proofs.next().unwrap_or_default(),
            None => Vec::new(),
        };
        records.push(PublicRecord {
            anchor_id: r.anchor_id.clone(),
            item_hash: r.item_hash,
            ledger_id: Some(super::submit::ledger_id(&r.tenant_id, &r.customer_id)),
            delta: r.delta,
            leaf_index: r.leaf_index.map(LeafIndex),
            inclusion_proof: proof,
            block_timestamp: r.verified_at.map(views::iso),
            declared_timestamp: Some(views::iso(r.declared_at)),
        });
    }
    records
}

fn summary(env: Env, root: Hash32, covered: &Covered, records: &[PublicRecord]) -> PublicSummary {
    let mut ledger_ids: Vec<&str> = records
        .iter()
        .filter_map(|r| r.ledger_id.as_deref())
        .collect();
    ledger_ids.sort_unstable();
    ledger_ids.dedup();
    let verified_at = || covered.rows.iter().filter_map(|r| r.verified_at);
    PublicSummary {
        kind: covered.kind.to_string(),
        environment: env.as_str().to_string(),
        proof_root: root,
        item_count: covered.total,
        net_amount: covered.net,
        period: covered.period.clone(),
        ledger_id: (ledger_ids.len() == 1).then(|| ledger_ids[0].to_string()),
        first_verified_at: verified_at().min().map(views::iso),
        last_verified_at: verified_at().max().map(views::iso),
        status: Some(covered.status.clone()),
    }
}
