//! What the service shows of its witnesses (issue 28): each log's
//! witness status, the head a proof goes into, and the latest head as
//! published (with its cosignature lines).

use serde::Serialize;

use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::LogId;
use crate::store;
use crate::store::log::HeadRow;

/// One witness of one log, as the status route shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WitnessStatus {
    /// The policy's name for it.
    pub name: String,
    /// Its cosignature verifier key (type 0x04).
    pub vkey: String,
    /// Its `add-checkpoint` submission prefix.
    pub url: Option<String>,
    /// The last tree size it cosigned (null: none yet), and when.
    pub cosigned_size: Option<u64>,
    pub cosigned_at: Option<String>,
    /// `pending` (not tried yet), or the last attempt's outcome:
    /// `cosigned`, `unavailable`, `refused` (422: a fork), `conflict`,
    /// `config`, `misbehaved`.
    pub status: String,
    /// The last error (kept after a later success), and when.
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
    pub attempted_at: Option<String>,
}

/// One log's witnesses, as the status route shows them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogWitnesses {
    pub environment: &'static str,
    pub shard: u32,
    pub name: String,
    /// The latest signed tree size.
    pub tree_size: u64,
    /// The newest size whose cosignatures meet the quorum (null: none).
    pub witnessed_size: Option<u64>,
    /// The quorum in words, e.g. `local: 2 of w1, w2, w3`.
    pub quorum: String,
    pub witnesses: Vec<WitnessStatus>,
}

/// The witness status of `log`: per configured witness, what it last
/// cosigned and how its last attempt went.
///
/// # Errors
/// The policy or the database.
pub async fn status(app: &App, log: LogId) -> ApiResult<LogWitnesses> {
    let policy = super::policy(app, log.env)?;
    let db = crate::ledger::db(app, log)?;
    let head = crate::ledger::head_or_init(app, log).await?;
    let states = if policy.witnesses().is_empty() {
        Vec::new()
    } else {
        store::witness::states(&db).await?
    };
    let witnessed = store::witness::newest_witnessed(&db, head.tree_size).await?;
    let iso = crate::views::iso;
    let witnesses = policy
        .witnesses()
        .iter()
        .map(|w| {
            let vkey = w.key.vkey();
            let st = states.iter().find(|s| s.vkey == vkey);
            WitnessStatus {
                name: w.name.clone(),
                url: w.url.clone(),
                cosigned_size: st.and_then(|s| s.size),
                cosigned_at: st.and_then(|s| s.cosigned_at).map(iso),
                status: st.map_or_else(|| "pending".to_owned(), |s| s.status.as_str().to_owned()),
                last_error: st.and_then(|s| s.error.clone()),
                last_error_at: st.and_then(|s| s.error_at).map(iso),
                attempted_at: st.map(|s| iso(s.attempted_at)),
                vkey,
            }
        })
        .collect();
    Ok(LogWitnesses {
        environment: log.env.as_str(),
        shard: log.shard,
        name: log.path_name(),
        tree_size: head.tree_size,
        witnessed_size: witnessed.map(|w| w.tree_size),
        quorum: policy.rule(),
        witnesses,
    })
}

/// The head a proof of leaves below `needed` goes into (issue 28): the
/// newest witnessed head when it covers them, else the latest head (with
/// the cosignatures it has). `candidates` are
/// `store::witness::published_candidates_statement`'s rows. Gives the
/// tree size, the published note and whether it is witnessed.
pub fn proof_head(
    latest: &HeadRow,
    candidates: &[store::witness::WitnessedRow],
    needed: u64,
) -> (u64, String, bool) {
    if let Some(w) = candidates
        .iter()
        .filter(|w| w.witnessed == 1 && w.tree_size <= latest.tree_size && w.tree_size >= needed)
        .max_by_key(|w| w.tree_size)
    {
        return (w.tree_size, w.note.clone(), true);
    }
    match candidates.iter().find(|w| w.tree_size == latest.tree_size) {
        Some(w) => (w.tree_size, w.note.clone(), w.witnessed == 1),
        None => (latest.tree_size, latest.note.clone(), false),
    }
}

/// The latest signed tree head of `log` as published: the log's signed
/// note with the cosignature lines collected for it (none yet: the note
/// alone), and whether they meet the quorum.
///
/// # Errors
/// The database.
pub async fn latest_published(app: &App, log: LogId) -> ApiResult<(HeadRow, bool)> {
    let mut head = crate::ledger::head_or_init(app, log).await?;
    let db = crate::ledger::db(app, log)?;
    let mut witnessed = false;
    if let Some(w) = store::witness::witnessed_at(&db, head.tree_size).await? {
        head.note = w.note;
        witnessed = w.witnessed == 1;
    }
    Ok((head, witnessed))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::witness::test_head as head;

    fn row(size: u64, witnessed: u64) -> store::witness::WitnessedRow {
        store::witness::WitnessedRow {
            tree_size: size,
            note: format!("cosigned{size}"),
            cosigners: 2,
            witnessed,
            updated_at: 0,
        }
    }

    #[test]
    fn proofs_go_into_the_newest_witnessed_head_that_covers_them_else_the_latest() {
        let latest = head(10);
        // Witnessed at 8: covers leaves below 8.
        let c = [row(10, 0), row(8, 1)];
        assert_eq!(proof_head(&latest, &c, 8), (8, "cosigned8".into(), true));
        // A leaf at 8 is not in it: the latest, with the lines it has.
        assert_eq!(proof_head(&latest, &c, 9), (10, "cosigned10".into(), false));
        // Nothing published for the latest: its own note.
        let c = [row(8, 1)];
        assert_eq!(proof_head(&latest, &c, 9), (10, "note10".into(), false));
        assert_eq!(proof_head(&latest, &[], 1), (10, "note10".into(), false));
        // The latest witnessed.
        let c = [row(10, 1)];
        assert_eq!(proof_head(&latest, &c, 3), (10, "cosigned10".into(), true));
    }
}
