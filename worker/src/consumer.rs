//! Queue consumers. Each message is acked or retried on its own; a failure
//! never panics the isolate. Sequencer doorbells in one batch are coalesced
//! per shard: one run per shard appends everything queued there (the shards
//! concurrently), then all of them are acked.

use futures_util::future::join_all;
use worker::{MessageBatch, MessageExt};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::jobs::Job;
use crate::ledger::LogId;
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
    let sequencer_off = crate::profile::stop(app) == Some(crate::profile::Stop::SequencerOff);
    let mut jobs = Vec::with_capacity(messages.len());
    for message in messages {
        match serde_json::from_value::<Job>(message.body().clone()) {
            // DEV_MODE profiling: doorbells are acked unanswered.
            Ok(Job::Sequence { .. }) if sequencer_off => message.ack(),
            Ok(job) => jobs.push((message, job)),
            Err(e) => {
                // A message we cannot read will never become readable: drop it.
                worker::console_error!("queue {}: dropping unknown message: {e}", batch.queue());
                message.ack();
            }
        }
    }
    // One sequencer run per shard named in the batch, the shards at the
    // same time: each run appends to its own shard's log only.
    let mut shards: Vec<LogId> = jobs
        .iter()
        .filter_map(|(_, job)| match job {
            Job::Sequence { env, shard } => Some(LogId::new(*env, *shard)),
            _ => None,
        })
        .collect();
    shards.sort();
    shards.dedup();
    let dispatch = crate::profile::stop(app) != Some(crate::profile::Stop::DispatchOff);
    let outcomes = join_all(shards.iter().map(|log| sequence_shard(app, *log, dispatch))).await;
    let sequenced: Vec<(LogId, bool)> = shards.into_iter().zip(outcomes).collect();
    for (message, job) in jobs {
        let result = match &job {
            Job::Sequence { env, shard } => {
                let log = LogId::new(*env, *shard);
                match sequenced.iter().find(|(l, _)| *l == log) {
                    Some((_, true)) => Ok(()),
                    _ => Err(ApiError::internal("sequencer failed")),
                }
            }
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

/// One sequencer run for a shard, then its webhook dispatch: whether the
/// run succeeded (every doorbell of the shard in the batch shares it).
async fn sequence_shard(app: &App, log: LogId, dispatch: bool) -> bool {
    match ledger::sequencer::run(app, log).await {
        Ok(_) if !dispatch => true,
        Ok(_) => {
            // Events the run wrote become webhook deliveries; the sweep
            // catches up if this fails.
            if let Err(e) = webhooks::dispatch::run(app, log).await {
                worker::console_error!("webhook dispatch {}: {e:?}", log.path_name());
            }
            true
        }
        Err(e) => {
            worker::console_error!("sequencer {}: {e:?}", log.path_name());
            false
        }
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
