//! The public answer for a proof root (`GET /api/v1/verify/:proofRoot`,
//! docs/proofs-api.md): the records a root covers with their inclusion
//! proofs, as core's `PublicAnswer`, and a checkpoint's agreement side.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::log::HASH_SCHEME;
use bvs_core::merkle;
use bvs_core::types::{Env, Period};
use bvs_core::verify::{
    CheckpointLeaf, LogRef, PublicAnswer, PublicProof, PublicRecord, PublicSummary,
    RecordsPagination,
};
use bvs_core::{LeafIndex, TreeSize};

use super::sum;
use crate::agreement::CheckpointAgreement;
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ledger::{db, inclusion_proofs, LogId, LogKey};
use crate::store::checkpoints::CheckpointRow;
use crate::store::deltas::DeltaRow;
use crate::store::log::HeadRow;
use crate::store::proofs::{Kind, Looked, SubmissionFound};
use crate::store::receipts::ReceiptRow;
use crate::store::{self, CheckpointStatus, ItemStatus};
use crate::views;

/// One page of a public answer's records, which of the objects the root
/// names to show (`None`: the default, see [`choose`]) and one page of a
/// checkpoint's statements.
pub struct RecordsPage {
    pub limit: u64,
    pub offset: u64,
    pub kind: Option<Kind>,
    pub statements: crate::agreement::StatementsPage,
}

/// The rows a proof root covers, and how the answer sums them up.
struct Covered {
    kind: Kind,
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
/// index, one batch on the shard it names (`store::proofs`), the stored
/// hashes of every inclusion proof.
///
/// A root can name several objects (a checkpoint, a receipt and a single
/// emit over the same deltas): the answer shows one (`page.kind`, else
/// [`choose`]) and lists every kind in `summary.issuedAs`. A root over
/// several ledgers' deltas (a batch's items root) shows no amounts or
/// ledgers (`summary.amountsWithheld`); a checkpoint is `verified` only
/// once its records were checked to recompute its root
/// (`summary.recordsCheck`, `ledger::backfill`).
///
/// # Errors
/// 404 when no environment issued `root`, or it names no `page.kind`.
///
/// Its head is the newest witnessed head when it covers the records, else
/// the latest, and `verification.witnessed` says which (issue 28).
pub async fn public_answer(
    app: &App,
    root: Hash32,
    page: &RecordsPage,
    origin: &str,
) -> ApiResult<(PublicAnswer, Option<CheckpointAgreement>)> {
    let (at, looked) = resolve(app, &root, page).await?;
    let db = db(app, at)?;
    let head = head_of(app, at, looked.head.clone()).await?;
    let kind = choose(&looked, page.kind, &root)?;
    let issued_as = issued_as(&looked, kind);
    let withheld = looked.submission.as_ref().is_some_and(|s| s.spans_ledgers);
    let Looked {
        submission,
        checkpoints,
        checkpoint_deltas,
        receipt,
        agreement: agreement_rows,
        witnessed: candidates,
        ..
    } = looked;
    let covered = covered(
        kind,
        submission,
        receipt,
        &checkpoints,
        checkpoint_deltas,
        page,
    )?;
    // Into the newest witnessed head that covers every leaf, else the
    // latest (issue 28).
    let (size, tree_head, witnessed) =
        crate::witness::proof_head(&head, &candidates, needed_size(&covered));
    let mut proven = prove_covered(&db, &covered, size, withheld).await?;
    if withheld {
        // A page's sub-root over some of a batch's items can be a
        // customer's own root (issue 40): a withheld page names only the
        // root asked for.
        proven.items_root = root;
    }
    // Only a checkpoint's root can have an agreement side.
    let agreement = if kind == Kind::Checkpoint {
        crate::agreement::of_checkpoint(app, at, &checkpoints, agreement_rows, &page.statements)?
    } else {
        None
    };
    let mut summary = summary(at.env, root, &covered, &proven.records, withheld);
    summary.issued_as = issued_as;
    let verification = public_proof(
        app,
        at,
        origin,
        (size, tree_head, witnessed),
        (proven.items_root, proven.checkpoint_leaf),
    )?;
    let answer = PublicAnswer {
        verified: proven.verified,
        summary,
        records: proven.records,
        verification,
        pagination: Some(RecordsPagination {
            limit: page.limit,
            offset: page.offset,
            total: covered.total,
        }),
    };
    Ok((answer, agreement))
}

/// The head the lookup read with the root, else the log's latest.
async fn head_of(app: &App, at: LogId, read: Option<HeadRow>) -> ApiResult<HeadRow> {
    match read {
        Some(head) => Ok(head),
        None => crate::ledger::head_or_init(app, at).await,
    }
}

/// The rows the chosen kind covers (a page of them), from what the lookup
/// read.
fn covered(
    kind: Kind,
    submission: Option<SubmissionFound>,
    receipt: Option<(ReceiptRow, Vec<DeltaRow>)>,
    checkpoints: &[CheckpointRow],
    checkpoint_deltas: Vec<DeltaRow>,
    page: &RecordsPage,
) -> ApiResult<Covered> {
    match kind {
        Kind::Submission => submission.map(|s| of_submission(s, page)).transpose()?,
        Kind::Receipt => receipt
            .map(|(r, rows)| of_receipt(r, rows, page))
            .transpose()?,
        Kind::Checkpoint => checkpoints
            .first()
            .cloned()
            .map(|c| of_checkpoint(c, checkpoint_deltas))
            .transpose()?,
    }
    .ok_or_else(|| ApiError::internal("a chosen kind without its rows"))
}

/// The answer's proof part: the log's head (its size, signed note and
/// whether it is witnessed), the log's key, and the proven page's root and
/// checkpoint leaf.
fn public_proof(
    app: &App,
    at: LogId,
    origin: &str,
    (size, tree_head, witnessed): (u64, String, bool),
    (items_root, checkpoint_leaf): (Hash32, Option<CheckpointLeaf>),
) -> ApiResult<PublicProof> {
    let key = LogKey::load(app, at)?;
    Ok(PublicProof {
        public_ledger_url: Some(format!("{origin}/api/v1/log/{}/checkpoint", at.path_name())),
        hash_scheme: HASH_SCHEME.name().to_string(),
        tree_head,
        tree_size: TreeSize(size),
        public_key: key.verifier_key()?,
        log: Some(log_ref(at, &key.origin, origin)),
        witnessed: Some(witnessed),
        items_root,
        checkpoint_leaf,
        message: Some(PUBLIC_MESSAGE.to_string()),
    })
}

/// The covered page's records with their inclusion proofs, the
/// checkpoint's own leaf, the page's root, and whether the answer says
/// `verified`.
struct Proven {
    records: Vec<PublicRecord>,
    checkpoint_leaf: Option<CheckpointLeaf>,
    items_root: Hash32,
    verified: bool,
}

/// Every proof of the page (the records' and a checkpoint's own leaf) in
/// one read; `verified`: a checkpoint committed, in the log, and its
/// records checked to recompute its root; anything else, every record in
/// the log.
async fn prove_covered(
    db: &worker::D1Database,
    covered: &Covered,
    tree_size: u64,
    withheld: bool,
) -> ApiResult<Proven> {
    let checkpoint_at = covered
        .checkpoint
        .as_ref()
        .and_then(|c| c.leaf_index.map(|l| (c.merkle_root, l)));
    let mut leaves: Vec<u64> = covered.rows.iter().filter_map(|r| r.leaf_index).collect();
    leaves.extend(checkpoint_at.map(|(_, leaf)| leaf));
    let mut proofs = inclusion_proofs(db, &leaves, tree_size).await?;
    let checkpoint_leaf = checkpoint_at.map(|(item_hash, leaf)| CheckpointLeaf {
        item_hash,
        leaf_index: LeafIndex(leaf),
        inclusion_proof: proofs.pop().unwrap_or_default(),
    });
    let records = records(&covered.rows, proofs, withheld);
    let item_hashes: Vec<Hash32> = covered.rows.iter().map(|r| r.item_hash).collect();
    let verified = match &covered.checkpoint {
        Some(c) => {
            c.status == CheckpointStatus::Committed
                && checkpoint_leaf.is_some()
                && c.records_verified == Some(1)
        }
        None => !records.is_empty() && records.iter().all(|r| r.leaf_index.is_some()),
    };
    Ok(Proven {
        records,
        checkpoint_leaf,
        items_root: merkle::root(&item_hashes),
        verified,
    })
}

/// The smallest tree that holds every leaf of `covered`.
fn needed_size(covered: &Covered) -> u64 {
    covered
        .rows
        .iter()
        .filter_map(|r| r.leaf_index)
        .chain(covered.checkpoint.as_ref().and_then(|c| c.leaf_index))
        .max()
        .map_or(0, |l| l + 1)
}

/// Every kind the root names, `shown` first.
fn issued_as(looked: &Looked, shown: Kind) -> Vec<String> {
    let mut kinds = vec![shown.as_str().to_string()];
    kinds.extend(
        looked
            .kinds()
            .into_iter()
            .filter(|k| *k != shown)
            .map(|k| k.as_str().to_string()),
    );
    kinds
}

/// Which of the objects a root names the answer shows: the one asked for
/// (404 when the root names none of that kind); else a committed
/// checkpoint (its log proof and agreement side), a submission, a
/// receipt, a checkpoint not committed yet, in that order.
fn choose(looked: &Looked, asked: Option<Kind>, root: &Hash32) -> ApiResult<Kind> {
    let kinds = looked.kinds();
    if let Some(k) = asked {
        return if kinds.contains(&k) {
            Ok(k)
        } else {
            Err(ApiError::NotFound(format!(
                "Proof root {root} names no {}; it names: {}",
                k.as_str(),
                kinds
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        };
    }
    let committed = looked
        .checkpoints
        .first()
        .is_some_and(|c| c.status == CheckpointStatus::Committed);
    Ok(if committed {
        Kind::Checkpoint
    } else if looked.submission.is_some() {
        Kind::Submission
    } else if looked.receipt.is_some() {
        Kind::Receipt
    } else {
        Kind::Checkpoint
    })
}

/// The shard that issued `root`, as the proof-root index names it
/// (`shard::of_root`), and what it is there (with one `page` of a
/// checkpoint's deltas); 404 for a root the index does not name or the
/// shard does not hold.
async fn resolve(app: &App, root: &Hash32, page: &RecordsPage) -> ApiResult<(LogId, Looked)> {
    if let Some(at) = crate::ledger::shard::of_root(app, root).await? {
        let db = db(app, at)?;
        let looked = store::proofs::root(&db, root, page.limit, page.offset).await?;
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

/// A submission's deltas (or one ledger's part of it), read whole and
/// paged here.
fn of_submission(s: SubmissionFound, page: &RecordsPage) -> ApiResult<Covered> {
    let rows = s.deltas;
    let all_verified = rows.iter().all(|r| r.status == ItemStatus::Verified);
    let status = if all_verified { "VERIFIED" } else { "QUEUED" };
    Ok(Covered {
        kind: Kind::Submission,
        net: sum(&rows)?,
        total: rows.len() as u64,
        rows: one_page(rows, page),
        period: None,
        status: status.to_string(),
        checkpoint: None,
    })
}

/// A receipt's deltas, read whole and paged here.
fn of_receipt(r: ReceiptRow, read: Vec<DeltaRow>, page: &RecordsPage) -> ApiResult<Covered> {
    Ok(Covered {
        kind: Kind::Receipt,
        net: sum(&read)?,
        rows: one_page(read, page),
        period: r.period,
        status: "VERIFIED".to_string(),
        total: r.delta_count,
        checkpoint: None,
    })
}

/// A checkpoint's deltas: one page already.
fn of_checkpoint(c: CheckpointRow, page_rows: Vec<DeltaRow>) -> ApiResult<Covered> {
    Period::parse(&c.period)?;
    Ok(Covered {
        kind: Kind::Checkpoint,
        rows: page_rows,
        period: Some(c.period.clone()),
        status: c.status.as_str().to_string(),
        total: c.delta_count,
        net: c.net_delta,
        checkpoint: Some(c),
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
/// the log, in order; none for a delta not yet in the log); without
/// amounts and ledgers when `withheld`.
fn records(rows: &[DeltaRow], proofs: Vec<Vec<Hash32>>, withheld: bool) -> Vec<PublicRecord> {
    let mut proofs = proofs.into_iter();
    let mut records = Vec::with_capacity(rows.len());
    for r in rows {
        let proof = match r.leaf_index {
            Some(_) => proofs.next().unwrap_or_default(),
            None => Vec::new(),
        };
        records.push(PublicRecord {
            anchor_id: r.anchor_id.to_string(),
            // Withheld (issue 40): a ledger's item hashes recompute the
            // root its customer was given; the log leaf opens nothing.
            item_hash: (!withheld).then_some(r.item_hash),
            log_leaf_hash: withheld.then(|| HASH_SCHEME.leaf_hash(&r.item_hash)),
            ledger_id: (!withheld)
                .then(|| crate::ledgers::ledger_id(&r.tenant_id, &r.customer_id).to_hex()),
            delta: (!withheld).then_some(r.delta),
            asset: if withheld {
                bvs_core::types::Asset::Default
            } else {
                r.asset.clone()
            },
            leaf_index: r.leaf_index.map(LeafIndex),
            inclusion_proof: proof,
            block_timestamp: r.verified_at.map(views::iso),
            declared_timestamp: Some(views::iso(r.declared_at)),
        });
    }
    records
}

/// Whether every row is of the same asset.
fn one_asset(rows: &[DeltaRow]) -> bool {
    rows.windows(2).all(|w| w[0].asset == w[1].asset)
}

fn summary(
    env: Env,
    root: Hash32,
    covered: &Covered,
    records: &[PublicRecord],
    withheld: bool,
) -> PublicSummary {
    let mut ledger_ids: Vec<&str> = records
        .iter()
        .filter_map(|r| r.ledger_id.as_deref())
        .collect();
    ledger_ids.sort_unstable();
    ledger_ids.dedup();
    let verified_at = || covered.rows.iter().filter_map(|r| r.verified_at);
    let records_check = match covered.checkpoint.as_ref() {
        Some(c) => Some(
            match c.records_verified {
                Some(1) => "passed",
                Some(_) => "failed",
                None => "pending",
            }
            .to_string(),
        ),
        // A withheld submission's root was computed by the service over
        // its items' hashes when it accepted them (emit, batch): the check
        // a stranger can no longer make, made once and stored as the root.
        None if withheld => Some("passed".to_string()),
        None => None,
    };
    PublicSummary {
        kind: covered.kind.as_str().to_string(),
        environment: env.as_str().to_string(),
        proof_root: root,
        item_count: covered.total,
        // Amounts of different assets are never added (issue 43).
        net_amount: (!withheld && one_asset(&covered.rows)).then_some(covered.net),
        period: covered.period.clone(),
        ledger_id: (ledger_ids.len() == 1).then(|| ledger_ids[0].to_string()),
        first_verified_at: verified_at().min().map(views::iso),
        last_verified_at: verified_at().max().map(views::iso),
        status: Some(covered.status.clone()),
        issued_as: Vec::new(),
        amounts_withheld: withheld,
        records_check,
    }
}
