//! DEV_MODE fault (issue 28): the log signs a head that does not extend
//! its latest (a fork) and submits it to every witness, which must refuse
//! it (422). Nothing of it is stored as a head or published.

use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::policy::PolicyWitness;
use serde::Serialize;

use super::submit::{judge, post_checkpoint, Attempt, STATUS_MISBEHAVED};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ledger::LogId;
use crate::store;
use crate::store::log::HeadRow;
use crate::store::witness::Outcome;

/// What each witness answered to a forked head.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkAnswer {
    pub name: String,
    pub vkey: String,
    pub status: String,
    pub error: Option<String>,
}

/// DEV_MODE fault: signs a head of `log` that does not extend its latest
/// (one leaf more, with a root that no leaf gives), submits it to every
/// witness from what each last cosigned, and records their answers (and
/// gives the forked head, for the verifiers to refuse it too). The
/// forked head is never stored as a tree head nor published: a witness
/// that cosigned it would be recorded as misbehaving.
///
/// # Errors
/// The policy, the database, or a log with no head cosigned yet.
pub async fn fork(app: &App, log: LogId) -> ApiResult<(HeadRow, Vec<ForkAnswer>)> {
    let policy = super::policy(app, log.env)?;
    let db = crate::ledger::db(app, log)?;
    let head = crate::ledger::head_or_init(app, log).await?;
    let states = store::witness::states(&db).await?;
    let forked = forked_head(app, log, &head)?;
    let mut answers = Vec::new();
    let mut failed = Vec::new();
    for w in policy.witnesses() {
        let vkey = w.key.vkey();
        let old = states
            .iter()
            .find(|s| s.vkey == vkey)
            .and_then(|s| s.size)
            .unwrap_or(0);
        if old == 0 {
            return Err(ApiError::Conflict(format!(
                "witness {} has cosigned nothing of this log yet: a fork needs a head to fork from",
                w.name
            )));
        }
        let attempt = submit_fork(app, &db, w, old, &head, &forked).await?;
        if let Attempt::Failed {
            status,
            error,
            retry_at,
        } = &attempt
        {
            worker::console_error!(
                "witness {} ({vkey}) on {} (DEV_MODE fork at size {}): {status}: {error}",
                w.name,
                log.path_name(),
                forked.tree_size
            );
            failed.push((vkey.clone(), &w.name, *status, error.clone(), *retry_at));
            answers.push(ForkAnswer {
                name: w.name.clone(),
                vkey,
                status: status.as_str().to_owned(),
                error: Some(error.clone()),
            });
        }
    }
    let statements = failed
        .iter()
        .map(|(vkey, name, status, error, retry_at)| {
            let outcome = Outcome::Failed {
                status: *status,
                error,
                retry_at: *retry_at,
            };
            store::witness::record(vkey.clone(), name, &outcome, app.now_ms)
        })
        .collect::<ApiResult<Vec<_>>>()?;
    store::witness::write(&db, statements).await?;
    Ok((forked, answers))
}

/// Submits the forked head to `w` from the size it last cosigned
/// (`old`), with a consistency proof to the real head (it cannot prove the
/// forked one). A cosignature of the fork is the witness misbehaving.
async fn submit_fork(
    app: &App,
    db: &worker::D1Database,
    w: &PolicyWitness,
    old: u64,
    head: &HeadRow,
    forked: &HeadRow,
) -> ApiResult<Attempt> {
    let proof = if old < head.tree_size {
        crate::ledger::consistency_proof(db, old, head.tree_size).await?
    } else {
        Vec::new()
    };
    let body = bvs_core::witness::add_checkpoint_body(TreeSize(old), &proof, &forked.note)
        .map_err(|e| ApiError::internal(format!("fork request: {e}")))?;
    Ok(
        match judge(
            post_checkpoint(w, body, &forked.note).await,
            forked,
            app.now_ms,
        ) {
            Attempt::Cosigned { .. } => Attempt::Failed {
                status: STATUS_MISBEHAVED,
                error: format!(
                    "the witness cosigned a forked head of size {}",
                    forked.tree_size
                ),
                retry_at: 0,
            },
            failed => failed,
        },
    )
}

/// A head of one leaf more than `head` whose root no leaf gives, signed
/// with the log's key.
fn forked_head(app: &App, log: LogId, head: &HeadRow) -> ApiResult<HeadRow> {
    let key = crate::ledger::LogKey::load(app, log)?;
    let size = head.tree_size + 1;
    let root = Hash32::digest(format!("fork of {} at {}", head.root, app.now_ms).as_bytes());
    let note = key.sign(size, &root)?;
    Ok(HeadRow {
        tree_size: size,
        root,
        note_hash: bvs_core::note::tree_head_hash(&note),
        note,
        created_at: app.now_ms,
    })
}
