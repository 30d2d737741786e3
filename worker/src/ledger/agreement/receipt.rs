//! A receipt's agreement side (issue 19): for a receipt that is a
//! committed checkpoint of its customer, the customer's key binding and
//! statements with their inclusion proofs into the receipt's tree head.

use bvs_core::agreement::{BalanceStatement, Statement};
use bvs_core::hash::Hash32;
use bvs_core::receipt::{LoggedItem, ReceiptAgreement, ReceiptStatement};
use bvs_core::LeafIndex;
use worker::D1Database;

use super::super::prove::ReceiptRequest;
use super::checkpoint_ref;
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::store::agreements;
use crate::store::checkpoints;
use crate::store::CheckpointStatus;
use crate::views;

/// The agreement side of a receipt whose deltas are exactly a committed
/// checkpoint of this customer (its merkleRoot is the receipt's root):
/// the checkpoint, the balance statement to sign, and the key binding and
/// statements by that key **already in the log at `tree_size`**, each with
/// its inclusion proof into that tree (docs/agreement.md). A statement
/// still queued shows in a later receipt; without a logged key binding,
/// no statements are listed. None when no such checkpoint exists.
///
/// # Errors
/// D1 errors.
pub async fn of_receipt(
    app: &App,
    db: &D1Database,
    r: &ReceiptRequest<'_>,
    root: &Hash32,
    tree_size: u64,
) -> ApiResult<Option<ReceiptAgreement>> {
    let (log, tenant_id, customer_id) = (r.log, r.tenant_id, r.customer_id.as_str());
    let Some(c) = checkpoints::by_root(db, &root.to_hex())
        .await?
        .into_iter()
        .find(|c| {
            c.tenant_id == tenant_id
                && c.customer_id == customer_id
                && c.status == CheckpointStatus::Committed
        })
    else {
        return Ok(None);
    };
    let ledger_id = super::submit::ledger_id(tenant_id, customer_id);
    let (reference, balance) = checkpoint_ref(app, log, db, &c, &ledger_id).await?;
    let balance_statement = Statement::Balance(BalanceStatement {
        checkpoint: reference.clone(),
        balance,
    })
    .to_text();
    let mut agreement = ReceiptAgreement {
        checkpoint_id: c.id.clone(),
        origin: reference.origin.as_str().to_string(),
        ledger_id: reference.ledger,
        period: c.period.clone(),
        merkle_root: c.merkle_root,
        delta_count: c.delta_count,
        balance,
        balance_statement,
        counterparty_key: None,
        key_statement: None,
        key_proof: None,
        statements: Vec::new(),
    };
    let Some(key) = agreements::keys(db, &ledger_id).await?.pop() else {
        return Ok(Some(agreement));
    };
    let Some(key_leaf) = logged_leaf(db, tenant_id, &key.item_hash, tree_size).await? else {
        return Ok(Some(agreement));
    };
    let mut signed = Vec::new();
    for a in agreements::of_checkpoint(db, &c.id).await? {
        if a.verifier_key != key.verifier_key {
            continue;
        }
        if let Some(leaf) = logged_leaf(db, tenant_id, &a.item_hash, tree_size).await? {
            signed.push((a, leaf));
        }
    }
    let leaves: Vec<u64> = std::iter::once(key_leaf)
        .chain(signed.iter().map(|(_, l)| *l))
        .collect();
    let mut proofs = super::super::inclusion_proofs(db, &leaves, tree_size)
        .await?
        .into_iter();
    agreement.key_proof = Some(LoggedItem {
        item_hash: stored_item_hash(&key.item_hash)?,
        leaf_index: LeafIndex(key_leaf),
        inclusion_proof: proofs.next().unwrap_or_default(),
    });
    agreement.counterparty_key = Some(key.verifier_key);
    agreement.key_statement = Some(key.statement);
    for (a, leaf) in signed {
        agreement.statements.push(ReceiptStatement {
            kind: a.kind,
            item_hash: stored_item_hash(&a.item_hash)?,
            statement: a.statement,
            recorded_at: views::iso(a.created_at),
            leaf_index: LeafIndex(leaf),
            inclusion_proof: proofs.next().unwrap_or_default(),
        });
    }
    Ok(Some(agreement))
}

fn stored_item_hash(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|_| ApiError::internal("stored item hash is not a hash"))
}

/// The leaf of the tenant's fact with this content hash, if it is in the
/// tree of `tree_size`.
async fn logged_leaf(
    db: &D1Database,
    tenant_id: &str,
    item_hash: &str,
    tree_size: u64,
) -> ApiResult<Option<u64>> {
    Ok(crate::store::facts::fact(db, tenant_id, item_hash)
        .await?
        .and_then(|f| f.leaf_index)
        .filter(|leaf| *leaf < tree_size))
}
