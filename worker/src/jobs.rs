//! Typed queue messages. Every consumer is idempotent: redelivery is harmless.

use bvs_core::types::Env;
use serde::{Deserialize, Serialize};

use crate::ids::{DeliveryId, MailRequestId, StatementId};

/// Queue bindings (producers) by role. Each ledger shard's verification
/// queue is `VERIFY_<ENV>_<n>` (`ledger::LogId::queue_binding`).
pub const QUEUE_WEBHOOKS: &str = "WEBHOOKS";
/// Account mails ride the webhooks queue, the service's side-job queue
/// (no verification ordering to keep; its consumer runs every job kind).
pub const QUEUE_MAIL: &str = QUEUE_WEBHOOKS;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Job {
    /// Diagnostics (DEV_MODE): proves a message goes through the queue and
    /// the consumer runs.
    Ping { id: String },
    /// The sequencer's doorbell: append whatever is QUEUED in shard
    /// `shard` of `env` (`"sandbox"` or `"production"` on the wire; a
    /// message from before sharding has no shard and means shard 0). Sent
    /// on the shard's own verification queue. Carries no data; D1 is the
    /// truth.
    Sequence {
        env: Env,
        #[serde(default)]
        shard: u32,
    },
    /// One attempt at a webhook delivery (when due). Carries only the id;
    /// the delivery row is the truth, and a second ring is a no-op.
    Deliver { delivery_id: DeliveryId },
    /// An account mail request (`auth::mailer`). Carries only the id; the
    /// request row is the truth, claimed once.
    Mail { id: MailRequestId },
    /// A log's cosigning job (issue 28, `witness::cosign`): rung
    /// after a head commits; submits the latest head to the witnesses.
    /// Carries no data; the log and the witness state are the truth.
    Cosign { env: Env, shard: u32 },
    /// A liabilities statement's next pages (issue 31,
    /// `liabilities::run`): in shard `shard` of `env`. Carries only
    /// the id; the statement row is the truth, and each page is guarded, so
    /// a second message is harmless.
    Liabilities {
        env: Env,
        shard: u32,
        id: StatementId,
    },
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The messages' ids are typed, their JSON is the text it always was:
    /// a message queued before the change is still read.
    #[test]
    fn typed_ids_keep_the_messages_json() {
        let cases = [
            (
                Job::Deliver {
                    delivery_id: DeliveryId::from_text("dlv_0123"),
                },
                r#"{"kind":"deliver","delivery_id":"dlv_0123"}"#,
            ),
            (
                Job::Mail {
                    id: MailRequestId::from_text("mrq_0123"),
                },
                r#"{"kind":"mail","id":"mrq_0123"}"#,
            ),
            (
                Job::Liabilities {
                    env: Env::Sandbox,
                    shard: 2,
                    id: StatementId::from_text("lst_0123"),
                },
                r#"{"kind":"liabilities","env":"sandbox","shard":2,"id":"lst_0123"}"#,
            ),
        ];
        for (job, json) in cases {
            assert_eq!(serde_json::to_string(&job).unwrap(), json);
            assert_eq!(serde_json::from_str::<Job>(json).unwrap(), job);
        }
    }
}
