//! Work the minute sweep finishes in bounded slices (issue 25): the
//! per-ledger roots of deltas from before them (migration 0060), and the
//! check of a checkpoint's records that was too large to do when it was
//! created (or that predates the check). Each run does a bounded amount
//! per shard and the next run continues; re-running is harmless.

use bvs_core::frontier::Frontier;
use bvs_core::hash::Hash32;
use bvs_core::merkle;
use bvs_core::types::CustomerId;

use super::{db, LogId};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::{SubmissionId, TenantId};
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::deltas::{self, BackfillRow};
use crate::store::{self, ledgers};

/// Single emits given their ledger root per run and shard (one UPDATE).
pub const SINGLE_DELTAS_PER_RUN: u64 = 5_000;
/// Batches given their ledgers' roots per run and shard (each at most
/// `BATCH_DELTAS_MAX` deltas).
pub const BATCHES_PER_RUN: u64 = 20;
/// Records of a checkpoint read per page when checking it; a checkpoint
/// up to this size is checked when it is created.
pub const CHECK_PAGE_ROWS: u64 = 5_000;
/// Records checked per run and shard.
pub const CHECK_ROWS_PER_RUN: u64 = 50_000;

/// Gives deltas from before per-ledger roots theirs: single emits in bulk,
/// then a few batches (each ledger of a batch its own root, its ledger's
/// latest root moved off the batch's, the new roots indexed). Returns the
/// deltas given a root.
///
/// # Errors
/// D1 errors; the next run retries.
pub async fn ledger_roots(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    let mut done = deltas::backfill_single(&db, SINGLE_DELTAS_PER_RUN).await?;
    let rows = deltas::batches_without_ledger_root(&db, BATCHES_PER_RUN).await?;
    if rows.is_empty() {
        return Ok(done);
    }
    let mut statements = Vec::new();
    let mut new_roots = Vec::new();
    let parts = ledger_parts(&rows);
    for part in &parts {
        statements.push(deltas::set_ledger_root(
            &part.submission_id,
            &part.customer_id,
            &part.root,
        )?);
        if part.root != part.items_root {
            statements.push(ledgers::replace_latest_root(
                &part.tenant_id,
                &part.customer_id,
                &part.items_root,
                &part.root,
            )?);
            new_roots.push(part.root);
        }
    }
    // Indexed first: a root is handed out only once its deltas have it.
    if !new_roots.is_empty() {
        store::roots::insert_all(
            &app.control_db()?,
            &new_roots,
            log.env,
            log.shard,
            app.now_ms,
        )
        .await?;
    }
    store::batch(&db, statements).await?;
    done += rows.len() as u64;
    Ok(done)
}

/// One ledger's deltas of one submission, and their root.
struct LedgerPart {
    submission_id: SubmissionId,
    tenant_id: TenantId,
    customer_id: CustomerId,
    items_root: Hash32,
    root: Hash32,
}

/// The ledger parts of `rows` (every delta of some submissions, in
/// submission and position order).
fn ledger_parts(rows: &[BackfillRow]) -> Vec<LedgerPart> {
    let mut parts: Vec<(LedgerPart, Vec<Hash32>)> = Vec::new();
    for r in rows {
        let at = parts.iter().position(|(p, _)| {
            p.submission_id == r.submission_id && p.customer_id == r.customer_id
        });
        match at {
            Some(i) => parts[i].1.push(r.item_hash),
            None => parts.push((
                LedgerPart {
                    submission_id: r.submission_id.clone(),
                    tenant_id: r.tenant_id.clone(),
                    customer_id: r.customer_id.clone(),
                    items_root: r.items_root,
                    root: r.items_root,
                },
                vec![r.item_hash],
            )),
        }
    }
    parts
        .into_iter()
        .map(|(mut p, items)| {
            p.root = merkle::root(&items);
            p
        })
        .collect()
}

/// Whether the records a checkpoint's public answer lists (`records`: all
/// of them, in log order) recompute its merkleRoot: as many as it covers,
/// with that RFC 9162 root.
fn records_match(c: &CheckpointRow, records: &Frontier) -> bool {
    records.size() == c.delta_count && records.root() == c.merkle_root
}

/// Checks a new checkpoint's records when it is small enough to do at
/// once (`CHECK_PAGE_ROWS`): `Some(1)` passed, `Some(0)` failed, `None`
/// left to the sweep ([`checkpoint_records`]).
///
/// # Errors
/// D1 errors.
pub async fn check_new_checkpoint(
    app: &App,
    log: LogId,
    c: &CheckpointRow,
) -> ApiResult<Option<u64>> {
    if c.delta_count > CHECK_PAGE_ROWS {
        return Ok(None);
    }
    let records = checkpoints::records_page(&db(app, log)?, c, None, CHECK_PAGE_ROWS + 1).await?;
    let mut frontier = Frontier::new();
    for r in &records {
        frontier.push(&r.item_hash);
    }
    Ok(Some(u64::from(records_match(c, &frontier))))
}

/// Checks the records of checkpoints not checked yet, oldest first, a
/// page at a time, keeping the progress through a large one on its row;
/// stops after `CHECK_ROWS_PER_RUN` records. Returns the records read.
///
/// # Errors
/// D1 errors; the next run continues from the stored progress.
pub async fn checkpoint_records(app: &App, log: LogId) -> ApiResult<u64> {
    let db = db(app, log)?;
    let mut read = 0;
    for c in checkpoints::unchecked(&db, 10).await? {
        let mut frontier = match &c.check_frontier {
            Some(text) => Frontier::from_text(text).map_err(ApiError::internal)?,
            None => Frontier::new(),
        };
        let mut after = c.check_after_leaf;
        loop {
            if read >= CHECK_ROWS_PER_RUN {
                let at = after.unwrap_or(0);
                checkpoints::set_check_progress(&db, &c.id, &frontier.to_text(), at).await?;
                return Ok(read);
            }
            let page = checkpoints::records_page(&db, &c, after, CHECK_PAGE_ROWS).await?;
            read += page.len() as u64;
            for r in &page {
                frontier.push(&r.item_hash);
            }
            after = page.last().map(|r| r.leaf_index).or(after);
            // A page short of full is the last; more records than the
            // checkpoint covers already fail it.
            if (page.len() as u64) < CHECK_PAGE_ROWS || frontier.size() > c.delta_count {
                let verdict = u64::from(records_match(&c, &frontier));
                checkpoints::set_checked(&db, &c.id, verdict).await?;
                break;
            }
        }
    }
    Ok(read)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn row(submission: &str, customer: &str, _position: u64, item: &str) -> BackfillRow {
        BackfillRow {
            tenant_id: "t".into(),
            customer_id: CustomerId::parse(customer).unwrap(),
            submission_id: submission.into(),
            item_hash: Hash32::digest(item.as_bytes()),
            items_root: Hash32::digest(submission.as_bytes()),
        }
    }

    #[test]
    fn each_ledger_of_a_batch_gets_the_root_over_its_own_items_in_order() {
        let rows = [
            row("b1", "x", 0, "x0"),
            row("b1", "y", 1, "y0"),
            row("b1", "x", 2, "x1"),
            row("b2", "z", 0, "z0"),
        ];
        let parts = ledger_parts(&rows);
        assert_eq!(parts.len(), 3);
        let x = &parts[0];
        assert_eq!(
            (x.submission_id.as_str(), x.customer_id.as_str()),
            ("b1", "x")
        );
        let h = |s: &str| Hash32::digest(s.as_bytes());
        assert_eq!(x.root, merkle::root(&[h("x0"), h("x1")]));
        assert_eq!(parts[1].root, merkle::root(&[h("y0")]));
        assert_eq!(parts[2].root, merkle::root(&[h("z0")]));
    }
}
