//! Witness cosignatures (issue 28, C2SP tlog-witness): each environment's
//! witness policy (`WITNESS_POLICY_<ENV>`, C2SP tlog-policy text; absent
//! means `quorum none`) and what the log list publishes of it.

use std::time::Duration;

use bvs_core::cosignature::Freshness;
use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::policy::{Policy, PolicyWitness};
use bvs_core::types::Env;
use bvs_core::witness::AddCheckpointAnswer;
use futures_util::future::{join_all, select, Either};
use serde::Serialize;
use serde_json::json;
use worker::{
    AbortController, D1Database, Delay, Fetch, Headers, Method, Request, RequestInit,
    RequestRedirect,
};

use super::LogId;
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::jobs::{Job, QUEUE_WEBHOOKS};
use crate::store;
use crate::store::log::HeadRow;
use crate::store::witnesses::Outcome;

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
/// How long a witness may take to answer `add-checkpoint`.
pub const SUBMIT_TIMEOUT_MS: u64 = 5_000;
/// An idle log's latest head is cosigned again (`old` = its size) this long
/// after its last cosignature, well within the verifiers' bound on the
/// latest head's age (`cosignature::LATEST_HEAD_AGE_SECONDS_DEFAULT`, an
/// hour). The every-minute sweep checks.
pub const REFRESH_AFTER_MS: u64 = 15 * 60_000;
/// After a witness is unavailable (timeout, network error, 429, 5xx): no
/// new attempt before this (or its Retry-After, if longer, at most
/// [`BACKOFF_MAX_MS`]). The next ring or sweep after it resubmits.
pub const BACKOFF_MS: u64 = 10_000;
pub const BACKOFF_MAX_MS: u64 = 10 * 60_000;
/// Tenants told per newly witnessed head (`checkpoint.witnessed`); more
/// than that in one head are rare (a head holds one round).
pub const WITNESSED_EVENTS_MAX: u64 = 1_000;
/// Longest error text kept per witness.
const ERROR_CHARS_MAX: usize = 300;

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
            q.send(message).await
        }
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        worker::console_warn!("cosigning doorbell for {} not rung: {e}", log.path_name());
    }
}

/// What one submission to one witness came to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Attempt {
    Cosigned {
        line: String,
    },
    Failed {
        status: &'static str,
        error: String,
        retry_at: u64,
    },
}

/// A witness's status words (`witness_state.status`; `cosigned` is
/// written by the store's upsert).
pub const STATUS_UNAVAILABLE: &str = "unavailable";
pub const STATUS_REFUSED: &str = "refused";
pub const STATUS_CONFLICT: &str = "conflict";
pub const STATUS_CONFIG: &str = "config";
pub const STATUS_MISBEHAVED: &str = "misbehaved";

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
    let db = super::db(app, log)?;
    let now = app.now_ms;
    if !store::witnesses::claim_run(&db, now, RUN_INTERVAL_MIN_MS).await? {
        if trigger == Trigger::Ring {
            ring(app, log, 1).await;
        }
        return Ok(());
    }
    let head = super::head_or_init(app, log).await?;
    let states = store::witnesses::states(&db).await?;
    let state_of = |vkey: &str| states.iter().find(|s| s.vkey == vkey);
    let mut todo = Vec::new();
    for w in policy.witnesses() {
        let vkey = w.key.vkey();
        let st = state_of(&vkey);
        let current = st.is_some_and(|s| {
            s.size == Some(head.tree_size) && s.root.as_deref() == Some(head.root.as_str())
        });
        let fresh = st
            .and_then(|s| s.cosigned_at)
            .is_some_and(|t| t + REFRESH_AFTER_MS > now);
        let waiting = st.is_some_and(|s| s.retry_at > now);
        if (current && fresh) || waiting {
            continue;
        }
        let old = st.and_then(|s| s.size).unwrap_or(0);
        todo.push((w, vkey, old));
    }
    if todo.is_empty() {
        return Ok(());
    }
    let attempts = join_all(
        todo.iter()
            .map(|(w, _, old)| submit(&db, w, *old, &head, now)),
    )
    .await;
    let mut statements = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for w in policy.witnesses() {
        let vkey = w.key.vkey();
        let attempt = todo
            .iter()
            .zip(&attempts)
            .find(|((_, v, _), _)| *v == vkey)
            .map(|(_, a)| a);
        match attempt {
            Some(Attempt::Cosigned { line }) => {
                statements.push(store::witnesses::record(
                    &db,
                    &vkey,
                    &w.name,
                    &Outcome::Cosigned {
                        size: head.tree_size,
                        root: &head.root,
                        line,
                    },
                    now,
                )?);
                lines.push(line.clone());
            }
            Some(Attempt::Failed {
                status,
                error,
                retry_at,
            }) => {
                worker::console_error!(
                    "witness {} ({}) on {} at size {}: {status}: {error}",
                    w.name,
                    vkey,
                    log.path_name(),
                    head.tree_size
                );
                statements.push(store::witnesses::record(
                    &db,
                    &vkey,
                    &w.name,
                    &Outcome::Failed {
                        status,
                        error,
                        retry_at: *retry_at,
                    },
                    now,
                )?);
                // A cosignature it gave this head before still counts.
                if let Some(line) = state_of(&vkey).and_then(|s| current_line(s, &head)) {
                    lines.push(line);
                }
            }
            None => {
                if let Some(line) = state_of(&vkey).and_then(|s| current_line(s, &head)) {
                    lines.push(line);
                }
            }
        }
    }
    if !lines.is_empty() {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let note = bvs_core::witness::with_cosignatures(&head.note, &refs)
            .map_err(|e| ApiError::internal(format!("cosigned head: {e}")))?;
        let met = policy
            .check(&note, Freshness::Offline)
            .map_err(|e| ApiError::internal(format!("cosigned head check: {e}")))?
            .met;
        let before = store::witnesses::witnessed_at(&db, head.tree_size).await?;
        statements.push(store::witnesses::publish(
            &db,
            head.tree_size,
            &note,
            lines.len() as u64,
            met,
            now,
        )?);
        if met && before.is_none_or(|b| b.witnessed == 0) {
            statements.extend(witnessed_events(&db, log, head.tree_size).await?);
            worker::console_log!(
                "{}: head {} witnessed ({} cosignatures)",
                log.path_name(),
                head.tree_size,
                lines.len()
            );
        }
    }
    store::witnesses::write(&db, statements).await
}

/// The witness's cosignature line for `head`, if it is the head it last
/// cosigned.
fn current_line(s: &store::witnesses::StateRow, head: &HeadRow) -> Option<String> {
    (s.size == Some(head.tree_size) && s.root.as_deref() == Some(head.root.as_str()))
        .then(|| s.line.clone())
        .flatten()
}

/// `checkpoint.witnessed` for each tenant with a leaf in the range the head
/// of `size` newly witnesses (after the previous quorum head).
async fn witnessed_events(
    db: &D1Database,
    log: LogId,
    size: u64,
) -> ApiResult<Vec<worker::D1PreparedStatement>> {
    let from = match size.checked_sub(1) {
        Some(below) => store::witnesses::newest_witnessed(db, below)
            .await?
            .map_or(0, |h| h.tree_size),
        None => return Ok(Vec::new()),
    };
    let tenants = store::witnesses::tenants_in(db, from, size, WITNESSED_EVENTS_MAX).await?;
    let name = log.path_name();
    let events: Vec<store::events::NewEvent> = tenants
        .into_iter()
        .map(|t| store::events::NewEvent {
            id: format!("evt_witnessed_{name}_{size}_{}", t.tenant_id),
            // `log` ({name, shard, origin}) is added by the dispatch.
            payload: json!({
                "treeSize": size,
                "fromTreeSize": from,
                "witnessed": true,
            })
            .to_string(),
            tenant_id: t.tenant_id,
            kind: store::events::CHECKPOINT_WITNESSED,
        })
        .collect();
    store::events::insert_once_all(db, &events, 0)
}

/// Submits `head` to witness `w`, which last cosigned size `old`; on a 409
/// naming a size we have, once more from there.
async fn submit(db: &D1Database, w: &PolicyWitness, old: u64, head: &HeadRow, now: u64) -> Attempt {
    let first = submit_from(db, w, old, head, now).await;
    match first {
        Ok(AddCheckpointAnswer::Conflict { size }) if size.0 <= head.tree_size && size.0 != old => {
            let again = submit_from(db, w, size.0, head, now).await;
            judge(again, head, now)
        }
        other => judge(other, head, now),
    }
}

fn judge(answer: Result<AddCheckpointAnswer, String>, head: &HeadRow, now: u64) -> Attempt {
    let failed = |status, error: String| Attempt::Failed {
        status,
        error: error.chars().take(ERROR_CHARS_MAX).collect(),
        retry_at: 0,
    };
    match answer {
        Ok(AddCheckpointAnswer::Cosigned { line, .. }) => Attempt::Cosigned { line },
        Ok(AddCheckpointAnswer::Conflict { size }) => failed(
            STATUS_CONFLICT,
            format!(
                "409: the witness has cosigned size {size} of this log, and head {} does not \
                 extend it from there (a rollback or fork?)",
                head.tree_size
            ),
        ),
        Ok(AddCheckpointAnswer::Inconsistent) => failed(
            STATUS_REFUSED,
            format!(
                "422: the witness refused head {} as inconsistent with what it cosigned (a fork)",
                head.tree_size
            ),
        ),
        Ok(AddCheckpointAnswer::UnknownLog) => failed(
            STATUS_CONFIG,
            "404: the witness does not know this log's origin".into(),
        ),
        Ok(AddCheckpointAnswer::Forbidden) => failed(
            STATUS_CONFIG,
            "403: the witness does not trust this log's key for its origin".into(),
        ),
        Ok(AddCheckpointAnswer::BadRequest) => failed(
            STATUS_CONFIG,
            "400: the witness could not read the request".into(),
        ),
        Ok(AddCheckpointAnswer::Unavailable {
            status,
            retry_after,
        }) => {
            let wait = retry_after
                .map_or(BACKOFF_MS, |s| s.saturating_mul(1000).max(BACKOFF_MS))
                .min(BACKOFF_MAX_MS);
            Attempt::Failed {
                status: STATUS_UNAVAILABLE,
                error: format!("{status}: the witness is unavailable"),
                retry_at: now + wait,
            }
        }
        Err(e) if e.starts_with(UNREACHABLE) => Attempt::Failed {
            status: STATUS_UNAVAILABLE,
            error: e.chars().take(ERROR_CHARS_MAX).collect(),
            retry_at: now + BACKOFF_MS,
        },
        Err(e) => failed(STATUS_MISBEHAVED, e),
    }
}

/// The prefix of an error that means the witness could not be reached.
const UNREACHABLE: &str = "unreachable: ";

/// One `add-checkpoint` of `head` from size `old`, read into its meaning.
async fn submit_from(
    db: &D1Database,
    w: &PolicyWitness,
    old: u64,
    head: &HeadRow,
    now: u64,
) -> Result<AddCheckpointAnswer, String> {
    let _ = now;
    let proof = if old > 0 && old < head.tree_size {
        super::consistency_proof(db, old, head.tree_size)
            .await
            .map_err(|e| format!("consistency proof {old}..{}: {e:?}", head.tree_size))?
    } else {
        Vec::new()
    };
    let old = if old > head.tree_size { 0 } else { old };
    let body = bvs_core::witness::add_checkpoint_body(TreeSize(old), &proof, &head.note)
        .map_err(|e| format!("request not built: {e}"))?;
    post_checkpoint(w, body, &head.note).await
}

/// POSTs `body` to the witness's `add-checkpoint` and reads the answer
/// against `signed_note`.
async fn post_checkpoint(
    w: &PolicyWitness,
    body: String,
    signed_note: &str,
) -> Result<AddCheckpointAnswer, String> {
    let Some(prefix) = w.url.as_deref() else {
        return Err("the witness has no submission URL".into());
    };
    let url = format!("{}/add-checkpoint", prefix.trim_end_matches('/'));
    let headers = Headers::new();
    headers
        .set("user-agent", "bvs-log/1")
        .map_err(|e| format!("header: {e}"))?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual)
        .with_body(Some(body.into()));
    let request =
        Request::new_with_init(&url, &init).map_err(|e| format!("request not built: {e}"))?;
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetch = Fetch::Request(request);
    let exchange = async {
        let mut response = fetch.send_with_signal(&signal).await?;
        let status = response.status_code();
        let content_type = response.headers().get("content-type")?;
        let retry_after = response.headers().get("retry-after")?;
        let text = response.text().await?;
        Ok::<_, worker::Error>((status, content_type, retry_after, text))
    };
    let timeout = Delay::from(Duration::from_millis(SUBMIT_TIMEOUT_MS));
    let (status, content_type, retry_after, text) =
        match select(Box::pin(exchange), Box::pin(timeout)).await {
            Either::Left((Ok(answer), _)) => answer,
            Either::Left((Err(e), _)) => return Err(format!("{UNREACHABLE}network error: {e}")),
            Either::Right(((), _)) => {
                controller.abort();
                return Err(format!(
                    "{UNREACHABLE}no answer within {SUBMIT_TIMEOUT_MS} ms"
                ));
            }
        };
    bvs_core::witness::read_add_checkpoint_answer(
        status,
        content_type.as_deref(),
        retry_after.as_deref(),
        &text,
        signed_note,
        &w.key,
    )
    .map_err(|e| format!("answer not kept: {e}"))
}

// ------------------------------------------------------- DEV_MODE: a forked head

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
/// witness from what each last cosigned, and records their answers. The
/// forked head is never stored as a tree head nor published: a witness
/// that cosigned it would be recorded as misbehaving.
///
/// # Errors
/// The policy, the database, or a log with no head cosigned yet.
pub async fn fork(app: &App, log: LogId) -> ApiResult<(u64, Vec<ForkAnswer>)> {
    let policy = policy(app, log.env)?;
    let db = super::db(app, log)?;
    let head = super::head_or_init(app, log).await?;
    let states = store::witnesses::states(&db).await?;
    let key = super::LogKey::load(app, log)?;
    let size = head.tree_size + 1;
    let root = Hash32::digest(format!("fork of {} at {}", head.root, app.now_ms).as_bytes());
    let forked_note = key.sign(size, &root)?;
    let forked = HeadRow {
        tree_size: size,
        root: root.to_hex(),
        note_hash: bvs_core::note::tree_head_hash(&forked_note).to_hex(),
        note: forked_note,
        created_at: app.now_ms,
    };
    let mut answers = Vec::new();
    let mut statements = Vec::new();
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
        // The proof to the real head: it cannot prove the forked one.
        let proof = if old < head.tree_size {
            super::consistency_proof(&db, old, head.tree_size).await?
        } else {
            Vec::new()
        };
        let body = bvs_core::witness::add_checkpoint_body(TreeSize(old), &proof, &forked.note)
            .map_err(|e| ApiError::internal(format!("fork request: {e}")))?;
        let attempt = match judge(
            post_checkpoint(w, body, &forked.note).await,
            &forked,
            app.now_ms,
        ) {
            Attempt::Cosigned { .. } => Attempt::Failed {
                status: STATUS_MISBEHAVED,
                error: format!("the witness cosigned a forked head of size {size}"),
                retry_at: 0,
            },
            failed => failed,
        };
        if let Attempt::Failed {
            status,
            error,
            retry_at,
        } = &attempt
        {
            worker::console_error!(
                "witness {} ({vkey}) on {} (DEV_MODE fork at size {size}): {status}: {error}",
                w.name,
                log.path_name()
            );
            statements.push(store::witnesses::record(
                &db,
                &vkey,
                &w.name,
                &Outcome::Failed {
                    status,
                    error,
                    retry_at: *retry_at,
                },
                app.now_ms,
            )?);
            answers.push(ForkAnswer {
                name: w.name.clone(),
                vkey,
                status: (*status).to_owned(),
                error: Some(error.clone()),
            });
        }
    }
    store::witnesses::write(&db, statements).await?;
    Ok((size, answers))
}

// ------------------------------------------------------------ the status view

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
    let policy = policy(app, log.env)?;
    let db = super::db(app, log)?;
    let head = super::head_or_init(app, log).await?;
    let states = if policy.witnesses().is_empty() {
        Vec::new()
    } else {
        store::witnesses::states(&db).await?
    };
    let witnessed = store::witnesses::newest_witnessed(&db, head.tree_size).await?;
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
                status: st.map_or_else(|| "pending".to_owned(), |s| s.status.clone()),
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
/// `store::witnesses::published_candidates_statement`'s rows. Gives the
/// tree size, the published note and whether it is witnessed.
pub fn proof_head(
    latest: &HeadRow,
    candidates: &[store::witnesses::WitnessedRow],
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
    let mut head = super::head_or_init(app, log).await?;
    let db = super::db(app, log)?;
    let mut witnessed = false;
    if let Some(w) = store::witnesses::witnessed_at(&db, head.tree_size).await? {
        head.note = w.note;
        witnessed = w.witnessed == 1;
    }
    Ok((head, witnessed))
}

#[cfg(test)]
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
