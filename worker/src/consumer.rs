//! Queue consumers. Each message is acked or retried on its own; a failure
//! never panics the isolate.

use worker::{MessageBatch, MessageExt};

use crate::app::App;
use crate::error::ApiResult;
use crate::jobs::Job;
use crate::store;

pub async fn handle_batch(app: &App, batch: MessageBatch<serde_json::Value>) {
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("queue {}: unreadable batch: {e}", batch.queue());
            batch.retry_all();
            return;
        }
    };
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
        match run(app, &job).await {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("queue {}: job {job:?} failed: {e:?}", batch.queue());
                message.retry();
            }
        }
    }
}

async fn run(app: &App, job: &Job) -> ApiResult<()> {
    match job {
        Job::Ping { id } => {
            store::dev::consume_ping(&app.control_db()?, id, app.now_ms).await?;
            Ok(())
        }
    }
}
