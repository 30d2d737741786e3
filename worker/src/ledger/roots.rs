//! The proof-root index's own home (issue 15, issue 26): which shard
//! issued a proof root, written in the control database (`store::roots`)
//! beside the write that creates the root — the emit's batch
//! (`emit`), a receipt's record (`proofs`) — and written
//! again by the sequencer for what it appends ([`backfill_roots`]), so
//! public verify reads one shard (`ledger::shard`).

use bvs_core::hash::Hash32;

use super::LogId;
use crate::app::App;
use crate::error::ApiResult;
use crate::store::roots;

/// Runs `write` (the D1 call that creates `root` on the shard `log`)
/// while the control database's index records which shard issued `root`
/// (`store::roots`, INSERT OR IGNORE), so public verify finds the one
/// shard to read as soon as the write's answer is out. The two are not
/// atomic: an index row whose write was refused points to a shard without
/// the root (public verify answers 404 there), and a failed index write
/// is only logged; the sequencer writes a submission's row again when it
/// appends it ([`backfill_roots`]), and a receipt's is written again the
/// next time the receipt is asked for.
pub async fn with_root_index<T>(
    app: &App,
    log: LogId,
    root: &Hash32,
    write: impl std::future::Future<Output = ApiResult<T>>,
) -> ApiResult<T> {
    with_roots_index(app, log, &[*root], write).await
}

/// [`with_root_index`] for several roots (one control-database call).
pub async fn with_roots_index<T>(
    app: &App,
    log: LogId,
    roots: &[Hash32],
    write: impl std::future::Future<Output = ApiResult<T>>,
) -> ApiResult<T> {
    let index = async {
        let db = app.control_db()?;
        match roots {
            [root] => roots::insert(&db, root, log.env, log.shard, app.now_ms)
                .await
                .map(|_| ()),
            _ => roots::insert_all(&db, roots, log.env, log.shard, app.now_ms).await,
        }
    };
    let (written, indexed) = futures_util::future::join(write, index).await;
    if let Err(e) = indexed {
        worker::console_warn!("proof roots {roots:?} not indexed yet: {e:?}");
    }
    written
}

/// Writes the index rows of the submissions the sequencer just appended
/// (INSERT OR IGNORE: normally [`with_root_index`] wrote them already), so
/// a root whose index write failed is findable once its
/// deltas are in the log; failures are logged only.
pub async fn backfill_roots(app: &App, log: LogId, roots: impl Iterator<Item = Hash32>) {
    let mut roots: Vec<Hash32> = roots.collect();
    roots.sort_unstable();
    roots.dedup();
    if roots.is_empty() {
        return;
    }
    let written = match app.control_db() {
        Ok(db) => roots::insert_all(&db, &roots, log.env, log.shard, app.now_ms).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        worker::console_warn!("proof roots of {} not indexed: {e:?}", log.path_name());
    }
}
