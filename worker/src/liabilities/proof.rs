//! A customer's proof from the stored nodes, and the public answer for a
//! statement's hash (docs/liabilities.md §9).

use std::collections::BTreeMap;

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::liabilities::proof::{LeafProof, LogEvidence, ProofDocument};
use bvs_core::liabilities::statement::{ledger_id, Statement};
use bvs_core::liabilities::tree::{path_addrs, NodeAddr};
use bvs_core::liabilities::{SumNode, TreeKind};
use bvs_core::log::HASH_SCHEME;
use bvs_core::types::{Asset, CustomerId, Period};

use super::{builder_of, StatementView};
use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::TenantId;
use crate::ledger::{db, head_or_init, inclusion_proofs, shard, LogId, LogKey};
use crate::store;
use crate::store::liabilities::{self as store_l, LedgerRow, NodeRow, StatementRow};

/// Stored nodes by (tree, level, index).
type Nodes = BTreeMap<(String, u8, u64), SumNode>;

fn internal(row: &StatementRow, what: &str) -> ApiError {
    ApiError::internal(format!("liabilities {}: {what}", row.id))
}

/// The published statement as stored, read back into core's type.
fn statement_of(row: &StatementRow) -> ApiResult<Statement> {
    let json = row
        .statement_json
        .as_deref()
        .ok_or_else(|| internal(row, "no statement"))?;
    let value = bvs_core::json::parse(json).map_err(|e| internal(row, &e.to_string()))?;
    Statement::from_json(&value).map_err(|e| internal(row, &e.to_string()))
}

/// The period's latest published statement and the customer's row in it.
async fn find(
    db: &worker::D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    (period, asset): (Period, &Asset),
) -> ApiResult<(StatementRow, LedgerRow)> {
    let row = store_l::latest_published(db, tenant_id, &period.to_string(), asset)
        .await?
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::RecordNotFound,
                format!(
                    "No published liabilities statement for period {period}{}",
                    of_asset(asset)
                ),
            )
        })?;
    not_purged(&row)?;
    let leaf = store_l::ledger_of(db, &row.id, customer_id)
        .await?
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::RecordNotFound,
                format!(
                    "customerId {customer_id} has no leaf in the {period} statement (no delta verified by its end)"
                ),
            )
        })?;
    Ok((row, leaf))
}

/// ` of asset CODE/p` for a named asset, nothing for the default one.
fn of_asset(asset: &Asset) -> String {
    match asset.is_default() {
        true => String::new(),
        false => format!(" of asset {asset}"),
    }
}

/// 410 `liabilities_purged` for a statement whose snapshot and nodes the
/// tenant's retention window purged (docs/liabilities.md §12): the
/// statement stays in the log and on public verify, no proof can be made.
///
/// # Errors
/// That 410.
pub fn not_purged(row: &StatementRow) -> ApiResult<()> {
    match row.purged_at {
        None => Ok(()),
        Some(at) => Err(ApiError::coded(
            ErrorCode::LiabilitiesPurged,
            format!(
                "The {} liabilities statement's leaves were purged on {} by the tenant's data \
                 retention window: no proof can be made any more. The statement itself stays \
                 in the log (GET /api/v1/verify/{})",
                row.period,
                crate::views::iso(at),
                row.item_hash.map(|h| h.to_hex()).unwrap_or_default()
            ),
        )),
    }
}

/// Every stored node the customer's paths need, with the latest head: one
/// batch.
async fn read_nodes(
    db: &worker::D1Database,
    row: &StatementRow,
    statement: &Statement,
    leaves: &[(TreeKind, u64)],
) -> ApiResult<(Nodes, store::log::HeadRow)> {
    let mut addrs: Vec<(&'static str, u8, u64)> = Vec::new();
    for (kind, index) in leaves {
        let count = statement.tree(*kind).leaf_count;
        for a in path_addrs(*index, count).map_err(|e| internal(row, &e.to_string()))? {
            addrs.push((kind.name(), a.level, a.index));
        }
    }
    let results = store::batch(
        db,
        vec![
            store_l::nodes_statement(&row.id, &addrs)?,
            store::log::latest_head_statement()?,
        ],
    )
    .await?;
    let head = store::rows::<store::log::HeadRow>(&results, 1)?
        .into_iter()
        .next()
        .ok_or_else(|| internal(row, "no head"))?;
    let mut nodes = Nodes::new();
    for n in store::rows::<NodeRow>(&results, 0)? {
        let node = SumNode {
            hash: n.hash,
            sum: n.sum,
        };
        nodes.insert((n.tree, n.level, n.idx), node);
    }
    Ok((nodes, head))
}

/// A customer's proof for the latest published statement of `period`
/// (docs/liabilities.md "The proof document"), as JSON text: its leaf and
/// path in each tree it is in, from the stored nodes in one read, and the
/// statement's inclusion in the latest signed head.
///
/// # Errors
/// 404 when the period has no published statement or the customer no
/// leaf in it; 410 when retention purged its leaves; D1 errors.
pub async fn proof(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    customer_id: &CustomerId,
    of: (Period, &Asset),
) -> ApiResult<String> {
    Ok(document(app, tenant_id, log, customer_id, of)
        .await?
        .to_json())
}

/// The proof document of [`proof`], before it is written.
async fn document(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    customer_id: &CustomerId,
    of: (Period, &Asset),
) -> ApiResult<ProofDocument> {
    let db = db(app, log)?;
    let (row, leaf) = find(&db, tenant_id, customer_id, of).await?;
    let statement = statement_of(&row)?;
    let builder = builder_of(&row).map_err(|_| internal(&row, "builder state"))?;
    let balance = leaf.balance;
    let l_index = leaf
        .liabilities_index
        .ok_or_else(|| internal(&row, "no leaf index"))?;
    let leaf_index = row
        .leaf_index
        .ok_or_else(|| internal(&row, "not in the log"))?;
    let mut leaves = vec![(TreeKind::Liabilities, l_index)];
    leaves.extend(leaf.receivables_index.map(|r| (TreeKind::Receivables, r)));
    let (nodes, head) = read_nodes(&db, &row, &statement, &leaves).await?;
    let ledger = ledger_id(tenant_id.as_str(), customer_id.as_str());
    let leaf_proof = |kind: TreeKind, index: u64, amount: Amount| -> ApiResult<LeafProof> {
        let count = statement.tree(kind).leaf_count;
        let node = |a: NodeAddr| {
            nodes
                .get(&(kind.name().to_owned(), a.level, a.index))
                .copied()
        };
        LeafProof::from_stored(builder.seed(), kind, &ledger, amount, index, count, node)
            .map_err(|e| internal(&row, &e.to_string()))
    };
    let owed = if balance.signum() > 0 {
        balance
    } else {
        Amount::ZERO
    };
    let liabilities = leaf_proof(TreeKind::Liabilities, l_index, owed)?;
    let receivables = match leaf.receivables_index {
        Some(r) => {
            let due = balance
                .checked_neg()
                .map_err(|e| internal(&row, &e.to_string()))?;
            Some(leaf_proof(TreeKind::Receivables, r, due)?)
        }
        None => None,
    };
    let inclusion_proof = inclusion_proofs(&db, &[leaf_index], head.tree_size)
        .await?
        .into_iter()
        .next()
        .unwrap_or_default();
    let doc = ProofDocument {
        statement_hash: statement.item_hash(),
        statement,
        customer_id: Some(customer_id.as_str().to_owned()),
        ledger_id: ledger,
        balance,
        liabilities,
        receivables,
        log: Some(LogEvidence {
            hash_scheme: HASH_SCHEME.name().to_string(),
            tree_head: head.note,
            public_key: LogKey::load(app, log)?.verifier_key()?,
            leaf_index,
            inclusion_proof,
        }),
    };
    Ok(doc)
}

/// The public answer for a statement's hash (answer kind `liabilities`,
/// docs/liabilities.md §9), or `None` when no published statement has it:
/// the statement (totals, counts, roots; never a leaf, path, salt or
/// ledger), when it was published, what it supersedes and what superseded
/// it, and its inclusion proof into the latest signed head.
///
/// # Errors
/// D1 errors.
pub async fn public_answer(app: &App, root: &Hash32) -> ApiResult<Option<String>> {
    let Some(at) = shard::of_root(app, root).await? else {
        return Ok(None);
    };
    let db = db(app, at)?;
    let Some(row) = store_l::published_by_item(&db, root).await? else {
        return Ok(None);
    };
    let statement = row
        .statement_json
        .as_deref()
        .ok_or_else(|| internal(&row, "no statement"))?;
    let leaf_index = row
        .leaf_index
        .ok_or_else(|| internal(&row, "not in the log"))?;
    let head = head_or_init(app, at).await?;
    let proof = inclusion_proofs(&db, &[leaf_index], head.tree_size)
        .await?
        .into_iter()
        .next()
        .unwrap_or_default();
    let key = LogKey::load(app, at)?;
    let view = StatementView::of(&row);
    let rest = serde_json::json!({
        "kind": "liabilities",
        "statementHash": row.item_hash,
        "asset": (!row.asset.is_default()).then(|| row.asset.key()),
        "environment": view.environment,
        "period": view.period,
        "liabilities": view.liabilities,
        "receivables": view.receivables,
        "publishedAt": view.published_at,
        "supersedes": view.supersedes,
        "supersededBy": view.superseded_by,
        "log": {
            "hashScheme": HASH_SCHEME.name(),
            "leafIndex": leaf_index,
            "inclusionProof": proof.iter().map(|h| h.to_hex()).collect::<Vec<_>>(),
            "treeHead": head.note,
            "publicKey": key.verifier_key()?,
        },
    })
    .to_string();
    // The statement exactly as hashed, first.
    let body = rest.strip_prefix('{').unwrap_or(&rest);
    Ok(Some(format!("{{\"statement\":{statement},{body}")))
}

/// The customer's proof (as [`proof`]) for the period of its committed
/// checkpoint `root` (docs/liabilities.md §10): the checkpoint's
/// merkleRoot is what the customer holds (its receipt's `itemsRoot`, the
/// agreement page's `?root=`) and what already opens the checkpoint's
/// public answer with its balance, so it opens this customer's proof
/// too, and no other.
///
/// # Errors
/// 404 when no committed single-customer checkpoint has that root, the
/// period has no published statement or the customer no leaf; D1 errors.
pub async fn proof_by_checkpoint(app: &App, root: &Hash32) -> ApiResult<String> {
    let missing = || {
        ApiError::coded(
            ErrorCode::RecordNotFound,
            format!("No committed single-customer checkpoint has merkleRoot {root}"),
        )
    };
    let log = shard::of_root(app, root).await?.ok_or_else(missing)?;
    let checkpoints = store::checkpoints::by_root(&db(app, log)?, root).await?;
    let (c, customer) = checkpoints
        .iter()
        .find_map(|c| {
            (c.status == store::CheckpointStatus::Committed)
                .then_some(c)
                .zip(c.customer_id.customer())
        })
        .ok_or_else(missing)?;
    let period = Period::parse(&c.period)?;
    // A bare root holder is not told the vendor's name for the customer
    // (issue 40): the customer knows its own, and its verifier recomputes
    // the ledger id from it. Neither does a 404 name it.
    let mut doc = document(app, &c.tenant_id, log, customer, (period, &c.asset))
        .await
        .map_err(|e| match e {
            ApiError::Coded(ErrorCode::RecordNotFound, _) => ApiError::coded(
                ErrorCode::RecordNotFound,
                format!(
                    "The customer of checkpoint {root} has no leaf in a published {period} \
                     liabilities statement (none is published yet, or no delta of it was \
                     verified by the period's end)"
                ),
            ),
            other => other,
        })?;
    doc.customer_id = None;
    Ok(doc.to_json())
}

/// The proof a period's receipt carries (`liabilities`,
/// docs/liabilities.md §10): the customer's proof for the latest published
/// statement of `period` (only a closed period has one), or `None` when
/// the period has no published statement or the customer no leaf in it.
///
/// # Errors
/// D1 errors.
pub async fn for_receipt(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    customer_id: &CustomerId,
    of: (Period, &Asset),
) -> ApiResult<Option<String>> {
    // Only a closed period has a published statement: no clock check here
    // (the job's own clock decided when the period closed).
    match proof(app, tenant_id, log, customer_id, of).await {
        Ok(doc) => Ok(Some(doc)),
        Err(ApiError::Coded(ErrorCode::RecordNotFound | ErrorCode::LiabilitiesPurged, _)) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}
