//! One witness's `add-checkpoint` (C2SP tlog-witness) over HTTP, with a
//! timeout, and what its answer is recorded as.

use std::time::Duration;

use bvs_core::merkle::TreeSize;
use bvs_core::policy::PolicyWitness;
use bvs_core::witness::{AddCheckpointAnswer, ANSWER_BYTES_MAX};
use futures_util::future::{select, Either};
use futures_util::StreamExt;
use worker::{
    AbortController, D1Database, Delay, Fetch, Headers, Method, Request, RequestInit,
    RequestRedirect, Response, ResponseBody,
};

use crate::store::log::HeadRow;
use crate::store::witness::WitnessState;

/// How long a witness may take to answer `add-checkpoint`.
pub const SUBMIT_TIMEOUT_MS: u64 = 5_000;
/// After a witness is unavailable (timeout, network error, 429, 5xx): no
/// new attempt before this (or its Retry-After, if longer, at most
/// [`BACKOFF_MAX_MS`]). The next ring or sweep after it resubmits.
pub const BACKOFF_MS: u64 = 10_000;
pub const BACKOFF_MAX_MS: u64 = 10 * 60_000;
/// Longest error text kept per witness.
const ERROR_CHARS_MAX: usize = 300;

/// What one submission to one witness came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    Cosigned {
        line: String,
    },
    Failed {
        status: WitnessState,
        error: String,
        retry_at: u64,
    },
}

/// A witness's failed states (`witness_state.status`; `cosigned` is
/// written by the store's upsert).
pub const STATUS_UNAVAILABLE: WitnessState = WitnessState::Unavailable;
pub const STATUS_REFUSED: WitnessState = WitnessState::Refused;
pub const STATUS_CONFLICT: WitnessState = WitnessState::Conflict;
pub const STATUS_CONFIG: WitnessState = WitnessState::Config;
pub const STATUS_MISBEHAVED: WitnessState = WitnessState::Misbehaved;

/// Submits `head` to witness `w`, which last cosigned size `old`; on a 409
/// naming a size we have, once more from there.
pub async fn submit(
    db: &D1Database,
    w: &PolicyWitness,
    old: u64,
    head: &HeadRow,
    now: u64,
) -> Attempt {
    let first = submit_from(db, w, old, head, now).await;
    match first {
        Ok(AddCheckpointAnswer::Conflict { size }) if size.0 <= head.tree_size && size.0 != old => {
            let again = submit_from(db, w, size.0, head, now).await;
            judge(again, head, now)
        }
        other => judge(other, head, now),
    }
}

pub fn judge(answer: Result<AddCheckpointAnswer, String>, head: &HeadRow, now: u64) -> Attempt {
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
pub const UNREACHABLE: &str = "unreachable: ";

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
        crate::ledger::consistency_proof(db, old, head.tree_size)
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
pub async fn post_checkpoint(
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
        crate::roundtrips::outbound().await?;
        let mut response = fetch.send_with_signal(&signal).await?;
        let status = response.status_code();
        let content_type = response.headers().get("content-type")?;
        let retry_after = response.headers().get("retry-after")?;
        let body = read_bounded(&mut response, ANSWER_BYTES_MAX).await?;
        Ok::<_, worker::Error>((status, content_type, retry_after, body))
    };
    let timeout = Delay::from(Duration::from_millis(SUBMIT_TIMEOUT_MS));
    let (status, content_type, retry_after, body) =
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
    let Some(body) = body else {
        // Refused unread: the rest of the body is not waited for.
        controller.abort();
        return Err(format!(
            "answer not kept: a body of more than {ANSWER_BYTES_MAX} bytes"
        ));
    };
    let text = String::from_utf8(body).map_err(|_| "answer not kept: not UTF-8".to_string())?;
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

/// `response`'s body as it streams in, or `None` as soon as it passes
/// `max` bytes (the rest is never read: a hostile witness's endless or huge
/// answer costs at most `max` bytes and no waiting for its end).
async fn read_bounded(response: &mut Response, max: usize) -> worker::Result<Option<Vec<u8>>> {
    if !matches!(response.body(), ResponseBody::Stream(_)) {
        let bytes = response.bytes().await?;
        return Ok((bytes.len() <= max).then_some(bytes));
    }
    let mut stream = response.stream()?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::witness::test_head as head;

    #[test]
    fn a_witness_that_is_down_is_retried_after_a_back_off_and_a_fork_is_refused() {
        let h = head(5);
        let now = 1_000_000;
        let down = judge(
            Ok(AddCheckpointAnswer::Unavailable {
                status: 503,
                retry_after: Some(60),
            }),
            &h,
            now,
        );
        assert!(
            matches!(down, Attempt::Failed { status: STATUS_UNAVAILABLE, retry_at, .. } if retry_at == now + 60_000)
        );
        let unreachable = judge(Err(format!("{UNREACHABLE}no answer")), &h, now);
        assert!(
            matches!(unreachable, Attempt::Failed { status: STATUS_UNAVAILABLE, retry_at, .. } if retry_at == now + BACKOFF_MS)
        );
        let fork = judge(Ok(AddCheckpointAnswer::Inconsistent), &h, now);
        assert!(
            matches!(&fork, Attempt::Failed { status: STATUS_REFUSED, error, retry_at: 0 } if error.starts_with("422"))
        );
        let bad = judge(Err("answer not kept: x".into()), &h, now);
        assert!(matches!(
            bad,
            Attempt::Failed {
                status: STATUS_MISBEHAVED,
                ..
            }
        ));
        let config = judge(Ok(AddCheckpointAnswer::Forbidden), &h, now);
        assert!(matches!(
            config,
            Attempt::Failed {
                status: STATUS_CONFIG,
                ..
            }
        ));
    }
}
