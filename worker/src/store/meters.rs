//! Metered writes (ledger databases): a counter row per tenant, meter and
//! period, raised in the same D1 batch as the write it counts. The table's
//! `CHECK (used <= cap)` is the ceiling: a raise past the cap fails its
//! statement, D1 rolls the whole batch back, so a write over its limit
//! writes nothing and concurrent writes can never both take the last unit
//! (migrations/ledger/0031_meters.sql).

use serde::Deserialize;
use worker::{D1Database, D1Result};

use super::{args, first, Query};
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;

/// Raises a meter by `?4` with cap `?5`.
const RAISE: &str = "INSERT INTO meters (tenant_id, meter, period, used, cap) \
     VALUES (?1, ?2, ?3, ?4, ?5) \
     ON CONFLICT (tenant_id, meter, period) DO UPDATE SET used = used + excluded.used, \
     cap = excluded.cap";
/// The same, only if the batch's previous statement changed a row (an
/// `INSERT OR IGNORE` that found a duplicate raises nothing). A raise
/// changes one row, so raises chain.
const RAISE_IF_CHANGED: &str = "INSERT INTO meters (tenant_id, meter, period, used, cap) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE changes() > 0 \
     ON CONFLICT (tenant_id, meter, period) DO UPDATE SET used = used + excluded.used, \
     cap = excluded.cap";
/// Lowers the backlog of the tenants `?1` (`[tenant_id, verified]` each):
/// a sequencer round's, in its batch. Never below 0 (deltas queued before
/// the meter existed were counted by migration 0070, any emitted between
/// that migration and the new Worker were not).
const RELEASE_BACKLOG_SET: &str =
    "UPDATE meters SET used = MAX(0, used - json_extract(j.value, '$[1]')) \
     FROM json_each(?1) AS j WHERE meters.tenant_id = json_extract(j.value, '$[0]') \
     AND meters.meter = 'backlog' AND meters.period = ''";
/// Lowers tenant `?1`'s backlog by one if the batch's previous statement
/// changed a row (a delta's FAILED mark that took).
const RELEASE_BACKLOG_IF_CHANGED: &str = "UPDATE meters SET used = MAX(0, used - 1) \
     WHERE tenant_id = ?1 AND meter = 'backlog' AND period = '' AND changes() > 0";
const SELECT_USED: &str =
    "SELECT used FROM meters WHERE tenant_id = ?1 AND meter = ?2 AND period = ?3";

/// The D1 (SQLite) message of a failed CHECK constraint.
const CHECK_FAILED: &str = "CHECK constraint failed";

/// What is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meter {
    /// Facts recorded in a calendar month.
    Facts,
    /// Checkpoints created in a calendar month.
    Checkpoints,
    /// Bytes of fact and delta content held (period `""`).
    Bytes,
    /// Deltas emitted in a calendar month: the plan's monthly quota
    /// (issue 16: next to the write, in the write's own batch).
    Deltas,
    /// Bytes of request log written in a day (period `YYYY-MM-DD`).
    RequestLog,
    /// Invitations issued in a calendar month (issue 25).
    Invitations,
    /// Uses of one invitation (period: its token hash; cap 1): a second
    /// use fails the registration's batch.
    InvitationUses,
    /// Key bindings of one ledger (period: its ledger id).
    CounterpartyKeys,
    /// Statements about one checkpoint (period: its id).
    Statements,
    /// Deltas emitted and not verified yet (period `""`): the plan's bound
    /// on a tenant's backlog on its shard (issue 27: backpressure). Raised
    /// by the emit's batch, lowered by the sequencer's round (and a
    /// delta's FAILED mark) in theirs.
    Backlog,
}

impl Meter {
    pub fn as_str(self) -> &'static str {
        match self {
            Meter::Facts => "facts",
            Meter::Checkpoints => "checkpoints",
            Meter::Bytes => "bytes",
            Meter::Deltas => "deltas",
            Meter::RequestLog => "request_log",
            Meter::Invitations => "invitations",
            Meter::InvitationUses => "invitation_uses",
            Meter::CounterpartyKeys => "counterparty_keys",
            Meter::Statements => "statements",
            Meter::Backlog => "backlog",
        }
    }
}

/// One raise of one meter.
#[derive(Debug, Clone, Copy)]
pub struct Raise<'a> {
    pub tenant_id: &'a TenantId,
    pub meter: Meter,
    /// `YYYY-MM` for monthly meters, `""` for `Bytes`.
    pub period: &'a str,
    pub add: u64,
    pub cap: u64,
}

/// The statement raising `r`, run first in its write's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn raise<'a>(r: &Raise<'a>) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        RAISE,
        args![r.tenant_id, r.meter.as_str(), r.period, r.add, r.cap],
    ))
}

/// The statement raising `r` only if the previous statement changed a row.
///
/// # Errors
/// A value that cannot be bound.
pub fn raise_if_changed<'a>(r: &Raise<'a>) -> ApiResult<Query<'a>> {
    Ok(Query::new(
        RAISE_IF_CHANGED,
        args![r.tenant_id, r.meter.as_str(), r.period, r.add, r.cap],
    ))
}

/// Runs a metered write's batch atomically. `Ok(Err(meter))` when a raise
/// went past its cap: then nothing of the batch was written, and `meter` is
/// the first of `raises` that does not fit.
///
/// # Errors
/// Any other D1 error.
pub async fn batch_within_caps(
    db: &D1Database,
    statements: Vec<Query<'_>>,
    raises: &[Raise<'_>],
) -> ApiResult<Result<Vec<D1Result>, Meter>> {
    let sent = {
        let _trip = crate::roundtrips::d1();
        super::send_batch(db, statements).await?
    };
    match sent {
        Ok(results) => Ok(Ok(results)),
        Err(e) => {
            let text = e.to_string();
            if !text.contains(CHECK_FAILED) {
                return Err(ApiError::internal(format!("d1 batch: {text}")));
            }
            for r in raises {
                if used(db, r).await?.saturating_add(r.add) > r.cap {
                    return Ok(Err(r.meter));
                }
            }
            // Someone else's write freed room since: still, this one failed.
            let first = raises
                .first()
                .ok_or_else(|| ApiError::internal(format!("d1 batch: {text}")))?;
            Ok(Err(first.meter))
        }
    }
}

/// The statements lowering the backlog of `(tenant, verified deltas)`
/// pairs, for a sequencer round's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn release_backlog_all<'a>(released: &[(&str, u64)]) -> super::Statements<'a> {
    super::over_json(RELEASE_BACKLOG_SET, released, &[])
}

/// Gives back monthly delta quota (`?1`: `[tenant_id, period, n]` each):
/// a sequencer round's refused deltas (issue 43), each to the month it
/// was charged to. Never below 0.
const REFUND_DELTAS_SET: &str =
    "UPDATE meters SET used = MAX(0, used - json_extract(j.value, '$[2]')) \
     FROM json_each(?1) AS j WHERE meters.tenant_id = json_extract(j.value, '$[0]') \
     AND meters.meter = 'deltas' AND meters.period = json_extract(j.value, '$[1]')";

/// The statements giving back `(tenant, month, refused deltas)` of the
/// monthly delta quota, for a sequencer round's batch.
///
/// # Errors
/// A value that cannot be bound.
pub fn refund_deltas_all<'a>(refunds: &[(&str, String, u64)]) -> super::Statements<'a> {
    super::over_json(REFUND_DELTAS_SET, refunds, &[])
}

/// The statement lowering `tenant_id`'s backlog by one, right after a
/// delta's FAILED mark (only if that mark changed the delta).
///
/// # Errors
/// A value that cannot be bound.
pub fn release_backlog_if_changed<'a>(tenant_id: &'a TenantId) -> ApiResult<Query<'a>> {
    Ok(Query::new(RELEASE_BACKLOG_IF_CHANGED, args![tenant_id]))
}

/// How much of the tenant's `meter` in `period` is used (0 without a row).
///
/// # Errors
/// D1 errors.
pub async fn used_of(
    db: &D1Database,
    tenant_id: &TenantId,
    meter: Meter,
    period: &str,
) -> ApiResult<u64> {
    used(
        db,
        &Raise {
            tenant_id,
            meter,
            period,
            add: 0,
            cap: 0,
        },
    )
    .await
}

async fn used(db: &D1Database, r: &Raise<'_>) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct Used {
        used: u64,
    }
    let row: Option<Used> = first(
        db,
        Query::new(SELECT_USED, args![r.tenant_id, r.meter.as_str(), r.period]),
    )
    .await?;
    Ok(row.map_or(0, |u| u.used))
}
