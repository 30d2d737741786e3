//! Queue consumers. Each message is acked or retried on its own; a failure
//! never panics the isolate. Sequencer doorbells in one batch are coalesced:
//! one run appends everything queued, then all of them are acked.

use bvs_core::types::Env;
use worker::{MessageBatch, MessageExt};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::jobs::Job;
use crate::{ledger, store, webhooks};

pub async fn handle_batch(app: &App, batch: MessageBatch<serde_json::Value>) {
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("queue {}: unreadable batch: {e}", batch.queue());
            batch.retry_all();
            return;
        }
    };
    let mut sequenced: Vec<(Env, bool)> = Vec::new();
    for message in messages {
        let job: Job = match serde_json::from_value(message.body().clone()) {
            Ok(job) => job,
            Err(e) => {
                // A message we cannot read will never become readable: drop it.
                worker::console_error!("queue {}: dropping unknown message: {e}", batch.queue());
                message.ack();
                continue;
            }
        };
        let result = match &job {
            Job::Sequence { env } => sequence_once(app, *env, &mut sequenced).await,
            other => run(app, other).await,
        };
        match result {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("queue {}: job {job:?} failed: {e:?}", batch.queue());
                message.retry();
            }
        }
    }
}

/// One sequencer run per environment per batch: a second doorbell for the
/// same environment shares the first one's outcome.
async fn sequence_once(app: &App, env: Env, sequenced: &mut Vec<(Env, bool)>) -> ApiResult<()> {
    let ok = match sequenced.iter().find(|(e, _)| *e == env) {
        Some((_, ok)) => *ok,
        None => {
            let ok = match ledger::sequencer::run(app, env).await {
                Ok(_) => {
                    // Events the run wrote become webhook deliveries; the
                    // sweep catches up if this fails.
                    if let Err(e) = webhooks::dispatch::run(app, env).await {
                        worker::console_error!("webhook dispatch {}: {e:?}", env.as_str());
                    }
                    true
                }
                Err(e) => {
                    worker::console_error!("sequencer {}: {e:?}", env.as_str());
                    false
                }
            };
            sequenced.push((env, ok));
            ok
        }
    };
    if ok {
        Ok(())
    } else {
        Err(ApiError::internal("sequencer failed"))
    }
}

async fn run(app: &App, job: &Job) -> ApiResult<()> {
    match job {
        Job::Ping { id } => {
            store::dev::consume_ping(&app.control_db()?, id, app.now_ms).await?;
            Ok(())
        }
        Job::Sequence { .. } => Ok(()),
        Job::Mail { id } => crate::auth::mailer::process(app, id).await,
        Job::Deliver { delivery_id } => {
            webhooks::delivery::attempt(app, delivery_id, webhooks::delivery::Mode::Scheduled)
                .await?;
            Ok(())
        }
    }
}
