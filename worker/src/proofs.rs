//! Prove: what a client needs to check a claim without trusting the
//! service. A customer's receipt (core's `Receipt`: the deltas in ledger
//! order, each with its inclusion proof into the latest signed tree head),
//! and the public answer for a proof root.

use bvs_core::amount::Amount;
use bvs_core::derive::{self, DerivedDelta};
use bvs_core::hash::Hash32;
use bvs_core::log::HASH_SCHEME;
use bvs_core::merkle;
use bvs_core::receipt::{ProvenItem, ProvenRefusal, Receipt, ReceiptProof, ReceiptVerification};
use bvs_core::types::{Asset, CustomerId, Period};
use bvs_core::LeafIndex;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::ledger::roots::with_root_index;
use crate::ledger::tiles::inclusion_proofs_with;
use crate::ledger::{db, LogId, LogKey};
use crate::store::deltas::DeltaRow;
use crate::store::ledgers;
use crate::store::receipts::{self, ReceiptOf, ReceiptRow};
use crate::views;

/// A receipt lists at most this many deltas; beyond, ask per period.
pub const RECEIPT_DELTAS_MAX: u64 = 5_000;

/// Whose receipt, and where its verify link points.
pub struct ReceiptRequest<'a> {
    pub tenant_id: &'a TenantId,
    /// The tenant's shard of the key's environment.
    pub log: LogId,
    pub customer_id: &'a CustomerId,
    /// Which of the customer's balances (issue 43).
    pub asset: &'a Asset,
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
/// its root resolves on the public verify route. The shard and its key
/// are taken once; then two sequential round trips on the shard (issue
/// 16): one batch reads everything the receipt lists
/// (`store::receipts::read`), then one batch reads the stored hashes of
/// every inclusion proof and writes the receipt's record, while the
/// control database indexes its root (`ledger::roots`).
///
/// # Errors
/// 404 for an unknown customer or no verified deltas; 422 above
/// `RECEIPT_DELTAS_MAX` deltas.
pub async fn receipt(app: &App, r: &ReceiptRequest<'_>) -> ApiResult<Receipt> {
    let db = db(app, r.log)?;
    let key = LogKey::load(app, r.log)?;
    let ledger_id = crate::ledgers::ledger_id(r.tenant_id, r.customer_id);
    let period = r.period.map(|p| p.to_string());
    let read = receipts::read(
        &db,
        &ReceiptOf {
            tenant_id: r.tenant_id,
            customer_id: r.customer_id,
            asset: r.asset,
            period: period.as_deref(),
            ledger_id: &ledger_id,
            deltas_max: RECEIPT_DELTAS_MAX,
        },
    )
    .await?;
    let listed = Listed::of(r, read)?;
    let record = ReceiptRow {
        items_root: listed.root,
        tenant_id: r.tenant_id.clone(),
        customer_id: r.customer_id.clone(),
        asset: r.asset.clone(),
        period,
        from_seq: listed.span.first_seq,
        to_seq: listed.span.last_seq,
        delta_count: listed.span.count(),
        generated_at: app.now_ms,
    };
    let mut proofs = with_root_index(
        app,
        r.log,
        &listed.root,
        inclusion_proofs_with(
            &db,
            &listed.leaves,
            listed.size,
            vec![receipts::record(&record)?],
        ),
    )
    .await?;
    // The rows' proofs, in order, then the refusals', then the agreement
    // side's.
    let mut agreement_proofs = proofs.split_off(listed.items.len().min(proofs.len()));
    let refusals = prove_refusals(listed.refusals, &mut agreement_proofs);
    let mut items = listed.items;
    for (item, proof) in items.iter_mut().zip(proofs) {
        item.inclusion_proof = proof;
    }
    let final_balance = listed.final_balance;
    let agreement = listed
        .plan
        .map(|p| p.finish(app, r.log, &ledger_id, final_balance, agreement_proofs))
        .transpose()?;
    let parts = Parts {
        span: &listed.span,
        root: listed.root,
        final_balance,
        tree_head: listed.tree_head,
        witnessed: listed.witnessed,
        deltas: listed.deltas,
        items,
        refusals,
    };
    assemble(r, &key, record.generated_at, parts, agreement)
}

/// Gives each refusal its proof, the first of `proofs` (which keeps the
/// rest).
fn prove_refusals(
    mut refusals: Vec<ProvenRefusal>,
    proofs: &mut Vec<Vec<Hash32>>,
) -> Vec<ProvenRefusal> {
    let rest = proofs.split_off(refusals.len().min(proofs.len()));
    for (refusal, proof) in refusals.iter_mut().zip(std::mem::replace(proofs, rest)) {
        refusal.inclusion_proof = proof;
    }
    refusals
}

/// What a receipt lists, from its first batch: the span's verified rows
/// as derived deltas and as items (their inclusion proofs still empty),
/// their root and the balance after them, the agreement side's plan, every
/// leaf to prove (the rows', then the plan's) and the head to prove them
/// into.
struct Listed {
    span: Span,
    items: Vec<ProvenItem>,
    /// The span's refusals (issue 43), their inclusion proofs still empty.
    refusals: Vec<ProvenRefusal>,
    final_balance: Amount,
    deltas: Vec<DerivedDelta>,
    root: Hash32,
    plan: Option<crate::agreement::ReceiptAgreementPlan>,
    leaves: Vec<u64>,
    size: u64,
    tree_head: String,
    witnessed: bool,
}

impl Listed {
    fn of(r: &ReceiptRequest<'_>, read: receipts::ReceiptRead) -> ApiResult<Listed> {
        let l = read.ledger.ok_or_else(|| {
            ApiError::NotFound(format!("No ledger for customerId {}", r.customer_id))
        })?;
        let span = span(r, &l, read.window)?;
        let rows: Vec<DeltaRow> = read
            .deltas
            .into_iter()
            .filter(|d| d.ledger_seq <= Some(span.last_seq))
            .collect();
        let head = read
            .head
            .ok_or_else(|| ApiError::internal("a ledger with verified deltas but no tree head"))?;
        let deltas: Vec<DerivedDelta> =
            rows.iter().map(views::derived).collect::<ApiResult<_>>()?;
        let item_hashes: Vec<Hash32> = deltas.iter().map(|d| d.item_hash).collect();
        let root = merkle::root(&item_hashes);
        // A customer's statements name a checkpoint's root, which commits
        // to its asset's deltas: any asset's receipt has its agreement
        // side (issue 43; the candidates are of the receipt's asset).
        let plan = crate::agreement::plan_receipt(
            read.checkpoints,
            read.keys,
            read.statements,
            &root,
            head.tree_size,
        );
        let mut leaves = leaves_of(&rows)?;
        let items = unproven_items(&rows, &leaves)?;
        if read.refusals.len() as u64 > RECEIPT_DELTAS_MAX {
            return Err(ApiError::Unprocessable(format!(
                "This receipt would list more than {RECEIPT_DELTAS_MAX} refused deltas. \
                 Ask for one period at a time with ?period=YYYY-MM"
            )));
        }
        let refusals: Vec<ProvenRefusal> = read
            .refusals
            .iter()
            .map(views::refusal_of)
            .collect::<ApiResult<_>>()?;
        leaves.extend(refusals.iter().map(|r| r.leaf_index.0));
        leaves.extend(
            plan.iter()
                .flat_map(crate::agreement::ReceiptAgreementPlan::leaves),
        );
        // Into the newest witnessed head that covers every leaf, else the
        // latest (issue 28).
        let needed = leaves.iter().max().map_or(0, |l| l + 1);
        let (size, tree_head, witnessed) =
            crate::witness::proof_head(&head, &read.witnessed, needed);
        Ok(Listed {
            final_balance: final_balance(&rows, &span),
            span,
            items,
            refusals,
            deltas,
            root,
            plan,
            leaves,
            size,
            tree_head,
            witnessed,
        })
    }
}

/// The balance after the span's last delta (before the span, without one).
fn final_balance(rows: &[DeltaRow], span: &Span) -> Amount {
    match rows.last() {
        Some(row) => row.balance_after.unwrap_or(Amount::ZERO),
        None => span.balance_before,
    }
}

/// What a receipt is made of once read and proven.
struct Parts<'a> {
    span: &'a Span,
    root: Hash32,
    final_balance: Amount,
    tree_head: String,
    /// Whether a quorum of the log's witnesses cosigned `tree_head`.
    witnessed: bool,
    deltas: Vec<DerivedDelta>,
    items: Vec<ProvenItem>,
    refusals: Vec<ProvenRefusal>,
}

fn assemble(
    r: &ReceiptRequest<'_>,
    key: &LogKey,
    generated_at: u64,
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
        asset: r.asset.clone(),
        period: r.period.map(|p| p.to_string()),
        generated_at: views::iso(generated_at),
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
            public_key: key.verifier_key()?,
            items: p.items,
            witnessed: Some(p.witnessed),
        },
        log: Some(log_ref(r.log, &key.origin, r.origin)),
        agreement,
        starting_sequence: (!p.refusals.is_empty()).then(|| p.span.first_seq - 1),
        refusals: p.refusals,
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
            "No verified deltas for customer {}{}{}",
            r.customer_id.as_str(),
            if r.asset.is_default() {
                String::new()
            } else {
                format!(" of asset {}", r.asset)
            },
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

/// Each verified row as an item with its leaf; its inclusion proof is
/// added once read.
fn unproven_items(rows: &[DeltaRow], leaves: &[u64]) -> ApiResult<Vec<ProvenItem>> {
    rows.iter()
        .zip(leaves)
        .map(|(row, leaf)| {
            Ok(ProvenItem {
                anchor_id: row.anchor_id.to_string(),
                item_hash: row.item_hash,
                leaf_index: LeafIndex(*leaf),
                inclusion_proof: Vec::new(),
                delta: row.delta,
                raw: views::raw_content(row)?,
            })
        })
        .collect()
}

/// The net of `rows`' deltas.
pub fn sum(rows: &[DeltaRow]) -> ApiResult<Amount> {
    rows.iter().try_fold(Amount::ZERO, |acc, r| {
        acc.checked_add(r.delta)
            .map_err(|e| ApiError::internal(format!("net amount: {e}")))
    })
}

pub mod checkpoint;
mod public;
pub use crate::store::proofs::Kind;
pub use public::{log_ref, public_answer, RecordsPage};
