//! Queue consumers. Each message is acked or retried on its own; a failure
//! never panics the isolate.
//!
//! Each ledger shard has its own verification queue, consumed with
//! `max_concurrency = 1`, and the queue's name says whose it is
//! (`ledger::shard::of_queue`). A batch of a shard's queue runs that
//! shard's sequencer once for all its doorbells, and no other shard's: so
//! one invocation at a time appends to a shard's log (one writer), and a
//! busy shard holds only its own queue, never a quiet shard's doorbell. A
//! doorbell for another shard found there (one sent before each shard had
//! its own queue) is rung again on its own shard's queue and acked.

use futures_util::future::join_all;
use worker::{Message, MessageBatch, MessageExt};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::jobs::Job;
use crate::ledger::{shard, LogId};
use crate::{liabilities, sequencer, store, webhooks, witness};

/// What a batch of queue `own` does with a doorbell for shard `log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doorbell {
    /// Run the shard's sequencer here: the queue is the shard's own (or,
    /// for a queue whose name names no shard, no other queue would).
    Run(LogId),
    /// Ring it on its own shard's queue: that queue's consumer is the
    /// shard's one writer.
    Forward(LogId),
}

fn route(own: Option<LogId>, log: LogId) -> Doorbell {
    match own {
        Some(own) if own != log => Doorbell::Forward(log),
        _ => Doorbell::Run(log),
    }
}

pub async fn handle_batch(app: &App, batch: MessageBatch<serde_json::Value>) {
    // The deployed shape (issue 42): a delivery crosses the network too.
    crate::roundtrips::crossing().await;
    let queue = batch.queue();
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("queue {queue}: unreadable batch: {e}");
            batch.retry_all();
            return;
        }
    };
    let jobs = read_jobs(app, &queue, messages);
    let own = shard::of_queue(&queue);
    let doorbell = |job: &Job| match job {
        Job::Sequence { env, shard } => Some(route(own, LogId::new(*env, *shard))),
        _ => None,
    };
    // One sequencer run per shard this batch runs: its own shard's (a queue
    // whose name names no shard runs each shard named, at the same time).
    let mut shards: Vec<LogId> = jobs
        .iter()
        .filter_map(|(_, job)| match doorbell(job) {
            Some(Doorbell::Run(log)) => Some(log),
            _ => None,
        })
        .collect();
    shards.sort();
    shards.dedup();
    if own.is_none() && !shards.is_empty() {
        worker::console_warn!(
            "queue {queue}: its name names no shard (docs/deploy.md): sequencing {} shard(s) here",
            shards.len()
        );
    }
    let dispatch = crate::profile::stop(app) != Some(crate::profile::Stop::DispatchOff);
    let outcomes = join_all(shards.iter().map(|log| sequence_shard(app, *log, dispatch))).await;
    let sequenced: Vec<(LogId, bool)> = shards.into_iter().zip(outcomes).collect();
    for (message, job) in jobs {
        let result = match doorbell(&job) {
            Some(Doorbell::Run(log)) => match sequenced.iter().find(|(l, _)| *l == log) {
                Some((_, true)) => Ok(()),
                _ => Err(ApiError::internal("sequencer failed")),
            },
            Some(Doorbell::Forward(log)) => {
                // A lost ring only delays: the sweeper re-rings the shard.
                crate::ledger::doorbell::ring(app, log).await;
                Ok(())
            }
            None => run(app, &job).await,
        };
        match result {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("queue {queue}: job {job:?} failed: {e:?}");
                message.retry();
            }
        }
    }
}

/// The batch's jobs, each with its message; an unreadable message (it will
/// never become readable) is dropped, and under DEV_MODE profiling's
/// `SequencerOff` a doorbell is acked unanswered.
fn read_jobs(
    app: &App,
    queue: &str,
    messages: Vec<Message<serde_json::Value>>,
) -> Vec<(Message<serde_json::Value>, Job)> {
    let sequencer_off = crate::profile::stop(app) == Some(crate::profile::Stop::SequencerOff);
    let mut jobs = Vec::with_capacity(messages.len());
    for message in messages {
        match serde_json::from_value::<Job>(message.body().clone()) {
            // DEV_MODE profiling: doorbells are acked unanswered.
            Ok(Job::Sequence { .. }) if sequencer_off => message.ack(),
            Ok(job) => jobs.push((message, job)),
            Err(e) => {
                // A message we cannot read will never become readable: drop it.
                worker::console_error!("queue {queue}: dropping unknown message: {e}");
                message.ack();
            }
        }
    }
    jobs
}

/// One sequencer run for a shard, then its webhook dispatch: whether the
/// run succeeded (every doorbell of the shard in the batch shares it).
async fn sequence_shard(app: &App, log: LogId, dispatch: bool) -> bool {
    let run = sequencer::run(app, log).await;
    if matches!(run, Ok(n) if n > 0) {
        // A new head: its cosigning job, on the side-job queue (issue 28).
        witness::ring(app, log, 0).await;
    }
    match run {
        Ok(_) if !dispatch => true,
        Ok(_) => {
            // Events the run wrote become webhook deliveries; the sweep
            // catches up if this fails.
            let queries = webhooks::dispatch::RUN_QUERIES_MAX;
            if let Err(e) = webhooks::dispatch::run(app, log, queries).await {
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
        Job::Liabilities { env, shard, id } => liabilities::run(app, *env, *shard, id).await,
        Job::Deliver { delivery_id } => {
            webhooks::delivery::attempt(app, delivery_id, webhooks::delivery::Mode::Scheduled)
                .await?;
            Ok(())
        }
        Job::Cosign { env, shard } => {
            let log = LogId::new(*env, *shard);
            let trigger = witness::Trigger::Ring;
            witness::cosign(app, log, trigger).await?;
            // Its `checkpoint.witnessed` events become deliveries now (the
            // sweep catches up if this fails).
            let queries = webhooks::dispatch::RUN_QUERIES_MAX;
            if let Err(e) = webhooks::dispatch::run(app, log, queries).await {
                worker::console_error!("webhook dispatch {}: {e:?}", log.path_name());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use bvs_core::types::Env;

    use super::*;

    #[test]
    fn a_shards_queue_runs_only_its_own_shard() {
        let zero = LogId::new(Env::Sandbox, 0);
        let one = LogId::new(Env::Sandbox, 1);
        let live = LogId::new(Env::Production, 1);
        assert_eq!(route(Some(one), one), Doorbell::Run(one));
        assert_eq!(route(Some(zero), one), Doorbell::Forward(one));
        assert_eq!(route(Some(one), live), Doorbell::Forward(live));
        // A queue named against the rule: run what it names here.
        assert_eq!(route(None, live), Doorbell::Run(live));
    }
}
