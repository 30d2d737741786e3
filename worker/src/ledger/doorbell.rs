//! One doorbell for many writes (issue 16): the writes of one isolate that
//! ring a shard's sequencer within [`RING_COALESCE_MS`] share one queue
//! message. Every write still has a message sent after it committed: a
//! ring that finds a send of its shard pending marks it, and the pending
//! send starts (or, if it already started, is followed by another that
//! starts) after the mark. Under load this turns one queue send per emit
//! into a few per second per shard and isolate, and the consumer's batches
//! get fewer messages for the same deltas. A lost message (the isolate
//! dies meanwhile) only delays verification, as before: the sweeper
//! re-rings for anything QUEUED too long.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use super::LogId;
use crate::app::App;
use crate::jobs::Job;

/// How long a doorbell waits for other rings of its shard to share it:
/// the most it adds to a delta's verification.
pub const RING_COALESCE_MS: u64 = 50;

/// Rings the shard `log`'s own verification queue after the response (a
/// request's doorbell never delays its answer; the sweeper re-rings what a
/// lost ring leaves QUEUED); failures are logged only. Rings of one isolate
/// within [`RING_COALESCE_MS`] share one message, sent after each
/// of them ([`claim`], [`deliver`]).
pub async fn ring(app: &App, log: LogId) {
    if !claim(log) {
        return;
    }
    let job = Job::Sequence {
        env: log.env,
        shard: log.shard,
    };
    let queue = std::rc::Rc::new(app.env.queue(&log.queue_binding()));
    app.after_response(deliver(log, move || {
        let (queue, job) = (std::rc::Rc::clone(&queue), job.clone());
        async move {
            let sent = match queue.as_ref() {
                Ok(q) => match crate::roundtrips::outbound().await {
                    Ok(()) => q.send(job).await.map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                },
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = sent {
                worker::console_warn!(
                    "verification doorbell for {} not rung: {e}",
                    log.path_name()
                );
            }
        }
    }))
    .await;
}

thread_local! {
    /// Shards with a send of this isolate pending: `true` when a ring came
    /// after the pending send last started, so another must follow.
    static PENDING: RefCell<BTreeMap<LogId, bool>> = const { RefCell::new(BTreeMap::new()) };
}

/// Whether this ring must send for `log` itself: `false` when a send of
/// this isolate for `log` is pending, which is marked to cover this ring.
pub fn claim(log: LogId) -> bool {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.get_mut(&log) {
            Some(again) => {
                *again = true;
                false
            }
            None => {
                p.insert(log, false);
                true
            }
        }
    })
}

/// Runs `send` for a ring that claimed `log`: after [`RING_COALESCE_MS`],
/// then again for as long as rings marked it while it was sending.
pub async fn deliver<F, Fut>(log: LogId, send: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    // However this ends (even dropped half way), the shard is free again.
    let _pending = Pending(log);
    loop {
        worker::Delay::from(Duration::from_millis(RING_COALESCE_MS)).await;
        // Rings from here on are not covered by this send: they mark again.
        PENDING.with(|p| p.borrow_mut().insert(log, false));
        send().await;
        if !PENDING.with(|p| p.borrow().get(&log).copied().unwrap_or(false)) {
            return;
        }
    }
}

struct Pending(LogId);

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING.with(|p| p.borrow_mut().remove(&self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::{claim, Pending};
    use crate::ledger::LogId;
    use bvs_core::types::Env;

    #[test]
    fn a_pending_send_covers_later_rings_of_its_shard_only() {
        let a = LogId::new(Env::Sandbox, 0);
        let b = LogId::new(Env::Sandbox, 1);
        assert!(claim(a), "the first ring sends");
        assert!(!claim(a), "a second one is covered");
        assert!(claim(b), "another shard sends on its own");
        drop(Pending(a));
        drop(Pending(b));
        assert!(claim(a), "once the send is over, a ring sends again");
        drop(Pending(a));
    }
}
