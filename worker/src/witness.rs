//! Witness cosignatures (issue 28, C2SP tlog-witness): each environment's
//! witness policy (`WITNESS_POLICY_<ENV>`, C2SP tlog-policy text; absent
//! means `quorum none`) and what the log list publishes of it.

mod fork;
mod status;
mod submit;

use bvs_core::cosignature::Freshness;
use bvs_core::policy::{Policy, PolicyWitness};
use bvs_core::types::Env;
use futures_util::future::join_all;
use serde::Serialize;
use serde_json::json;
use worker::D1Database;

pub use fork::fork;
pub use status::{latest_published, proof_head, status};
use submit::Attempt;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::EventId;
use crate::jobs::{Job, QUEUE_WEBHOOKS};
use crate::ledger::LogId;
use crate::store;
use crate::store::log::HeadRow;
use crate::store::witness::Outcome;

/// The var that holds an environment's witness policy.
pub fn policy_var(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "WITNESS_POLICY_SANDBOX",
        Env::Production => "WITNESS_POLICY_PRODUCTION",
    }
}

/// The witness policy of `env`: its witnesses (each with its submission
/// URL) and quorum. Absent or blank is `quorum none` (no witnesses).
///
/// # Errors
/// Internal (a configuration error, logged by line): text that is not
/// tlog-policy, or a witness without a submission URL.
pub fn policy(app: &App, env: Env) -> ApiResult<Policy> {
    let var = policy_var(env);
    let text = app
        .var(var)
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "quorum none\n".to_owned());
    // A var written on one line in wrangler.toml may use literal `\n`.
    let text = text.replace("\\n", "\n");
    let policy = Policy::parse(&text).map_err(|e| ApiError::internal(format!("{var}: {e}")))?;
    if let Some(w) = policy.witnesses().iter().find(|w| w.url.is_none()) {
        return Err(ApiError::internal(format!(
            "{var}: witness {} has no submission URL",
            w.name
        )));
    }
    Ok(policy)
}

/// The log list's `witnessPolicy`: the quorum as k of these witnesses'
/// cosignature verifier keys.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Threshold {
    pub quorum: usize,
    pub witnesses: Vec<String>,
}

/// One log's published policy: the k-of-n form (`None` when the quorum
/// has nested groups) and the C2SP tlog-policy text naming only that log.
///
/// # Errors
/// Internal: the log's verifier key is not one (never for our own key).
pub fn published(policy: &Policy, log_vkey: &str) -> ApiResult<(Option<Threshold>, String)> {
    let one = policy
        .with_logs(&[log_vkey])
        .map_err(|e| ApiError::internal(format!("witness policy for {log_vkey}: {e}")))?;
    let threshold = policy.threshold().map(|(quorum, ws)| Threshold {
        quorum,
        witnesses: ws.iter().map(|w| w.key.vkey()).collect(),
    });
    Ok((threshold, one.to_text()))
}

// ------------------------------------------------------------ the cosigning job

/// Least time between two runs of a log's cosigning job: a burst of heads
/// costs each witness one request a second at most (witnesses ask logs to
/// mind their rates). A ring inside it comes back after it.
pub const RUN_INTERVAL_MIN_MS: u64 = 1_000;
/// An idle log's latest head is cosigned again (`old` = its size) this long
/// after its last cosignature, well within the verifiers' bound on the
/// latest head's age (`cosignature::LATEST_HEAD_AGE_SECONDS_DEFAULT`, an
/// hour). The every-minute sweep checks.
pub const REFRESH_AFTER_MS: u64 = 15 * 60_000;
/// Tenants told per newly witnessed head (`checkpoint.witnessed`); more
/// than that in one head are rare (a head holds one round).
pub const WITNESSED_EVENTS_MAX: u64 = 1_000;

/// Why the job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A head was committed (the consumer's ring).
    Ring,
    /// The every-minute sweep: resubmit after back-off, refresh an idle head.
    Sweep,
}

/// Rings the cosigning job of `log` (on the side-job queue), `delay_secs`
/// from now. A lost ring only delays: the minute sweep runs the job too.
pub async fn ring(app: &App, log: LogId, delay_secs: u32) {
    let job = Job::Cosign {
        env: log.env,
        shard: log.shard,
    };
    let sent = match app.env.queue(QUEUE_WEBHOOKS) {
        Ok(q) => {
            let message = worker::MessageBuilder::new(job)
                .delay_seconds(delay_secs)
                .build();
            match crate::roundtrips::outbound().await {
                Ok(()) => q.send(message).await,
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("cosigning doorbell for {} not rung: {e}", log.path_name());
    }
}

/// The cosigning job of `log`: submits its latest head to each witness
/// that has not cosigned it (or whose cosignature is due a refresh, or
/// whose back-off is over), records each outcome, and publishes the head
/// with the cosignatures it has (`witnessed_heads`), with a
/// `checkpoint.witnessed` event per tenant whose items it newly witnesses.
///
/// # Errors
/// The policy or the database; a witness's failure is recorded, never an
/// error here.
pub async fn cosign(app: &App, log: LogId, trigger: Trigger) -> ApiResult<()> {
    let policy = policy(app, log.env)?;
    if policy.witnesses().is_empty() {
        return Ok(());
    }
    let db = crate::ledger::db(app, log)?;
    let now = app.now_ms;
    if !store::witness::claim_run(&db, now, RUN_INTERVAL_MIN_MS).await? {
        if trigger == Trigger::Ring {
            ring(app, log, 1).await;
        }
        return Ok(());
    }
    let head = crate::ledger::head_or_init(app, log).await?;
    let states = store::witness::states(&db).await?;
    let todo = due(&policy, &states, &head, now);
    if todo.is_empty() {
        return Ok(());
    }
    let attempts = join_all(
        todo.iter()
            .map(|(w, old)| submit::submit(&db, w, *old, &head, now)),
    )
    .await;
    let mut statements = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for w in policy.witnesses() {
        let vkey = w.key.vkey();
        let attempt = todo
            .iter()
            .zip(&attempts)
            .find(|((t, _), _)| t.key.vkey() == vkey)
            .map(|(_, a)| a);
        if let Some(a) = attempt {
            statements.push(record(log, w, vkey.clone(), a, &head, now)?);
        }
        let line = match attempt {
            Some(Attempt::Cosigned { line }) => Some(line.clone()),
            // A cosignature it gave this head before still counts.
            _ => states
                .iter()
                .find(|s| s.vkey == vkey)
                .and_then(|s| current_line(s, &head)),
        };
        lines.extend(line);
    }
    if !lines.is_empty() {
        statements.extend(publish(&db, log, &policy, &head, &lines, now).await?);
    }
    store::witness::write(&db, statements).await
}

/// The witnesses to submit `head` to now, each with the size it last
/// cosigned: not current, or due a refresh, and not backing off.
fn due<'p>(
    policy: &'p Policy,
    states: &[store::witness::StateRow],
    head: &HeadRow,
    now: u64,
) -> Vec<(&'p PolicyWitness, u64)> {
    let mut todo = Vec::new();
    for w in policy.witnesses() {
        let vkey = w.key.vkey();
        let st = states.iter().find(|s| s.vkey == vkey);
        let current = st.is_some_and(|s| current_line(s, head).is_some());
        let fresh = st
            .and_then(|s| s.cosigned_at)
            .is_some_and(|t| t + REFRESH_AFTER_MS > now);
        let waiting = st.is_some_and(|s| s.retry_at > now);
        if (current && fresh) || waiting {
            continue;
        }
        todo.push((w, st.and_then(|s| s.size).unwrap_or(0)));
    }
    todo
}

/// The statement recording witness `w`'s attempt (a failure is logged).
fn record<'a>(
    log: LogId,
    w: &'a PolicyWitness,
    vkey: String,
    attempt: &'a Attempt,
    head: &'a HeadRow,
    now: u64,
) -> ApiResult<crate::store::Query<'a>> {
    let outcome = match attempt {
        Attempt::Cosigned { line } => Outcome::Cosigned {
            size: head.tree_size,
            root: &head.root,
            line,
        },
        Attempt::Failed {
            status,
            error,
            retry_at,
        } => {
            worker::console_error!(
                "witness {} ({vkey}) on {} at size {}: {status}: {error}",
                w.name,
                log.path_name(),
                head.tree_size
            );
            Outcome::Failed {
                status: *status,
                error,
                retry_at: *retry_at,
            }
        }
    };
    store::witness::record(vkey, &w.name, &outcome, now)
}

/// The statements publishing `head` with `lines` (and, when it newly meets
/// the quorum, the tenants' `checkpoint.witnessed` events).
async fn publish(
    db: &D1Database,
    log: LogId,
    policy: &Policy,
    head: &HeadRow,
    lines: &[String],
    now: u64,
) -> ApiResult<Vec<crate::store::Query<'static>>> {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let note = bvs_core::witness::with_cosignatures(&head.note, &refs)
        .map_err(|e| ApiError::internal(format!("cosigned head: {e}")))?;
    let met = policy
        .check(&note, Freshness::Offline)
        .map_err(|e| ApiError::internal(format!("cosigned head check: {e}")))?
        .met;
    let before = store::witness::witnessed_at(db, head.tree_size).await?;
    let mut statements = vec![store::witness::publish(
        head.tree_size,
        note,
        lines.len() as u64,
        met,
        now,
    )?];
    if met && before.is_none_or(|b| b.witnessed == 0) {
        statements.extend(witnessed_events(db, log, head.tree_size, now).await?);
        statements.push(store::witness::delete_older_statement(head.tree_size)?);
        worker::console_log!(
            "{}: head {} witnessed ({} cosignatures)",
            log.path_name(),
            head.tree_size,
            lines.len()
        );
    }
    Ok(statements)
}

/// The witness's cosignature line for `head`, if it is the head it last
/// cosigned.
fn current_line(s: &store::witness::StateRow, head: &HeadRow) -> Option<String> {
    (s.size == Some(head.tree_size) && s.root == Some(head.root))
        .then(|| s.line.clone())
        .flatten()
}

/// `checkpoint.witnessed` for each tenant with a leaf in the range the head
/// of `size` newly witnesses (after the previous quorum head).
async fn witnessed_events(
    db: &D1Database,
    log: LogId,
    size: u64,
    now: u64,
) -> ApiResult<Vec<crate::store::Query<'static>>> {
    let from = match size.checked_sub(1) {
        Some(below) => store::witness::newest_witnessed(db, below)
            .await?
            .map_or(0, |h| h.tree_size),
        None => return Ok(Vec::new()),
    };
    let tenants = store::witness::tenants_in(db, from, size, WITNESSED_EVENTS_MAX).await?;
    let name = log.path_name();
    let events: Vec<store::events::NewEvent> = tenants
        .into_iter()
        .map(|t| store::events::NewEvent {
            id: EventId::from_text(format!("evt_witnessed_{name}_{size}_{}", t.tenant_id)),
            // `log` ({name, shard, origin}) is added by the dispatch.
            payload: json!({
                "treeSize": size,
                "fromTreeSize": from,
                "witnessed": true,
            })
            .to_string(),
            tenant_id: t.tenant_id,
            kind: store::events::EventKind::CheckpointWitnessed,
        })
        .collect();
    store::events::insert_once_all(&events, now)
}

/// A head of `size` with made-up root and note, for the job's and the
/// status's unit tests.
#[cfg(test)]
fn test_head(size: u64) -> HeadRow {
    HeadRow {
        tree_size: size,
        root: bvs_core::hash::Hash32::digest(format!("root{size}").as_bytes()),
        note: format!("note{size}"),
        note_hash: bvs_core::hash::Hash32([0; 32]),
        created_at: 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn one_logs_policy_names_that_log_and_the_k_of_n() {
        let w1 = bvs_core::cosignature::witness_vkey("w1.example", &[1; 32]).unwrap();
        let w2 = bvs_core::cosignature::witness_vkey("w2.example", &[2; 32]).unwrap();
        let log = bvs_core::note::public_key_string("example.com/log", &[9; 32]).unwrap();
        let text = format!(
            "witness a {w1} http://127.0.0.1:1\nwitness b {w2} http://127.0.0.1:2\ngroup g 2 a b\nquorum g\n"
        );
        let policy = Policy::parse(&text).unwrap();
        let (threshold, published) = published(&policy, &log).unwrap();
        assert_eq!(
            threshold,
            Some(Threshold {
                quorum: 2,
                witnesses: vec![w1, w2]
            })
        );
        assert!(published.starts_with(&format!("log {log}\n")));
        assert!(published.ends_with("quorum g\n"));
        let none = Policy::parse("quorum none\n").unwrap();
        let (threshold, _) = super::published(&none, &log).unwrap();
        assert_eq!(
            threshold,
            Some(Threshold {
                quorum: 0,
                witnesses: vec![]
            })
        );
    }
}
