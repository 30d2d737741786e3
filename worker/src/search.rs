//! The dashboard's search box (issue 30): finds any object of a tenant by
//! its id: an anchorId, a proof root (a submission's, a receipt's or a
//! checkpoint's), a checkpoint id, a customer id, an event id, a
//! `Request-Id`, a delivery id or a fact's content hash, in both
//! environments. Lookups by key only (never a scan): one batch per shard of
//! the tenant and one read of the control database, concurrently.

use bvs_core::hash::Hash32;
use bvs_core::types::Env;
use bvs_core::FieldError;

use crate::app::App;
use crate::auth;
use crate::error::ApiResult;
use crate::ids::{EventId, TenantId};
use crate::ledger::LogId;
use crate::store::search::{self as store, ShardKind};

/// Characters of a searched id at most (the longest id is a customer id).
pub const QUERY_CHARS_MAX: usize = 128;
/// Hits answered at most.
pub const HITS_MAX: usize = 20;

/// What a hit is: what one of a shard's lookups found
/// (`store::search::ShardKind`), or a webhook delivery (the control
/// database).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Shard(ShardKind),
    Delivery,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        let Kind::Shard(kind) = self else {
            return "delivery";
        };
        match kind {
            ShardKind::Delta => "delta",
            ShardKind::Submission => "submission",
            ShardKind::Receipt => "receipt",
            ShardKind::Checkpoint => "checkpoint",
            ShardKind::Customer => "customer",
            ShardKind::Event => "event",
            ShardKind::Request => "request",
            ShardKind::Fact => "fact",
        }
    }
}

/// One object found.
pub struct Hit {
    pub kind: Kind,
    pub id: String,
    pub env: Option<Env>,
    pub customer_id: Option<String>,
    /// The proof root it belongs to (a delta's receipt id, a checkpoint's
    /// merkleRoot, a customer's latest receipt id).
    pub root: Option<Hash32>,
    /// Its status, period, event type or HTTP status.
    pub state: Option<String>,
    /// A delivery's event.
    pub event_id: Option<EventId>,
}

/// A searched id: 1 to 128 characters of `A-Z a-z 0-9 . _ : -`.
///
/// # Errors
/// 400 naming `q`.
pub fn parse_query(text: &str) -> Result<String, FieldError> {
    let t = text.trim();
    let ok = (1..=QUERY_CHARS_MAX).contains(&t.chars().count())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(t.to_string())
    } else {
        Err(FieldError::new(
            "q",
            "must be an id: 1 to 128 letters, digits, '.', '_', ':' or '-'",
        ))
    }
}

/// Everything of the tenant with this id, Sandbox first.
///
/// # Errors
/// D1 errors.
pub async fn find(app: &App, tenant_id: &TenantId, id: &str) -> ApiResult<Vec<Hit>> {
    let contracts = auth::contracts::of_tenant(app, tenant_id).await?;
    let mut logs: Vec<LogId> = contracts
        .iter()
        .map(|c| LogId::new(c.env, c.shard))
        .collect();
    logs.sort();
    let shard_reads = logs.iter().map(|log| async move {
        let db = crate::ledger::db(app, *log)?;
        Ok::<_, crate::error::ApiError>((log.env, store::on_shard(&db, tenant_id, id).await?))
    });
    let (shards, deliveries) =
        futures_util::future::try_join(futures_util::future::try_join_all(shard_reads), async {
            store::deliveries(&app.control_db()?, tenant_id, id).await
        })
        .await?;
    let mut hits = Vec::new();
    for (env, found) in shards {
        for (k, h) in found {
            hits.push(Hit {
                kind: Kind::Shard(k),
                id: h.id,
                env: Some(env),
                customer_id: h.customer_id,
                root: h.root,
                state: h.state,
                event_id: None,
            });
        }
    }
    for d in deliveries {
        hits.push(Hit {
            kind: Kind::Delivery,
            id: d.id.into_string(),
            env: d.env.as_deref().and_then(Env::from_any_name),
            customer_id: None,
            root: None,
            state: Some(d.event_type),
            event_id: Some(d.event_id),
        });
    }
    hits.truncate(HITS_MAX);
    Ok(hits)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::parse_query;

    #[test]
    fn a_query_is_an_id_or_a_400_naming_q() {
        assert_eq!(parse_query("  req_abc:1 ").unwrap(), "req_abc:1");
        assert_eq!(parse_query(&"a".repeat(64)).unwrap().len(), 64);
        for bad in ["", "   ", "a b", "x'--", &"a".repeat(129)] {
            assert_eq!(parse_query(bad).unwrap_err().field, "q", "{bad:?}");
        }
    }
}
