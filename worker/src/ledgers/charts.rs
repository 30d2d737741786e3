//! What the dashboard's charts draw (issue 30, docs/dashboard.md
//! "Charts"): a customer's balance after each verified delta, and per day
//! the tenant's verified deltas and their verification lag (received →
//! verified) at p50 and p99.
//!
//! The per-day figures are counted once, as the webhook dispatcher moves
//! `delta.verified` events on (`raises`, in the batch that marks them
//! dispatched), into buckets of a quarter power of two of milliseconds:
//! bucket 0 holds lags under 1 ms, bucket b ≥ 1 lags in
//! [2^((b−1)/4), 2^(b/4)) ms, so a percentile read back is exact to within
//! 19%, and a day of a tenant is at most about 120 rows however many deltas
//! it verified. A percentile is reported as its bucket's upper bound.

use std::collections::BTreeMap;

use bvs_core::time::parse_iso_ms;
use bvs_core::types::CustomerId;
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store::charts::{self as store, DayRaise, DayRow, PointRow};
use crate::store::events::{EventKind, EventRow};
use crate::store::ledgers::LedgerRow;
use crate::store::Query;

/// Points of a balance chart at most: past it the history is sampled
/// (every k-th verified delta, the first and the last).
pub const HISTORY_POINTS_MAX: u64 = 2_000;
/// Days the daily figures cover.
pub const DAYS_MAX: u64 = 31;
const DAY_MS: u64 = 86_400_000;

/// A customer's balance history: the ledger, its points, and the sampling
/// step (1: every verified delta is a point).
pub struct History {
    pub ledger: LedgerRow,
    pub points: Vec<PointRow>,
    pub step: u64,
}

/// # Errors
/// 404 for a customer without a ledger; D1 errors.
pub async fn history(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
) -> ApiResult<History> {
    let (ledger, points) = store::history(db, tenant_id, customer_id, HISTORY_POINTS_MAX).await?;
    let ledger = ledger
        .ok_or_else(|| ApiError::NotFound(format!("No ledger for customerId {customer_id}")))?;
    let step = ledger.verified_count.div_ceil(HISTORY_POINTS_MAX).max(1);
    Ok(History {
        ledger,
        points,
        step,
    })
}

/// The bucket of a lag (see the module's doc).
pub fn bucket_of(lag_ms: u64) -> u32 {
    if lag_ms == 0 {
        return 0;
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let b = ((lag_ms as f64).log2() * 4.0).floor() as u32 + 1;
    b
}

/// The upper bound of a bucket, in milliseconds (rounded up).
pub fn upper_ms(bucket: u32) -> u64 {
    if bucket == 0 {
        return 1;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = (f64::from(bucket) / 4.0).exp2().ceil() as u64;
    ms
}

/// The `p`-quantile (0 < p ≤ 1) of a day's buckets, as an upper bound in
/// ms; `None` for an empty day.
pub fn percentile(buckets: &[(u32, u64)], p: f64) -> Option<u64> {
    let total: u64 = buckets.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return None;
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = ((total as f64) * p).ceil().max(1.0) as u64;
    let mut seen = 0;
    let mut sorted = buckets.to_vec();
    sorted.sort_unstable();
    for (b, n) in sorted {
        seen += n;
        if seen >= rank {
            return Some(upper_ms(b));
        }
    }
    None
}

/// `YYYY-MM-DD` (UTC) of `ms`.
pub fn day_of(ms: u64) -> String {
    let iso = bvs_core::time::format_iso_ms(i64::try_from(ms).unwrap_or(i64::MAX));
    iso.get(..10).unwrap_or_default().to_string()
}

/// The day raises of these outbox events: one per (tenant, day of
/// verification, lag bucket) of their `delta.verified` events.
pub fn raises(events: &[EventRow]) -> Vec<DayRaise> {
    let mut counts: BTreeMap<(TenantId, String, u32), u64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == EventKind::DeltaVerified) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&e.payload) else {
            continue;
        };
        let at = |field: &str| {
            v.get(field)
                .and_then(|t| t.as_str())
                .and_then(|t| parse_iso_ms(t).ok())
                .and_then(|ms| u64::try_from(ms).ok())
        };
        let (Some(received), Some(verified)) = (at("receivedAt"), at("blockTimestamp")) else {
            continue;
        };
        let key = (
            e.tenant_id.clone(),
            day_of(verified),
            bucket_of(verified.saturating_sub(received)),
        );
        *counts.entry(key).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|((tenant_id, day, bucket), n)| DayRaise {
            tenant_id,
            day,
            bucket,
            n,
        })
        .collect()
}

/// The statements raising the day figures of `events`, to follow the
/// statement that marks them dispatched in one batch: they count only if
/// that statement changed a row (a second run over the same events, which
/// marks nothing, counts nothing).
///
/// # Errors
/// A value that cannot be bound.
pub fn raise_statements<'a>(events: &[EventRow]) -> ApiResult<Vec<Query<'a>>> {
    store::raise_days(&raises(events))
}

/// One day's figures.
pub struct Day {
    pub day: String,
    pub verified: u64,
    pub p50_ms: Option<u64>,
    pub p99_ms: Option<u64>,
}

/// The tenant's figures for each of the `days` days up to `now_ms`'s day,
/// oldest first (days without deltas included, as zeros).
///
/// # Errors
/// D1 errors.
pub async fn daily(
    db: &D1Database,
    tenant_id: &TenantId,
    now_ms: u64,
    days: u64,
) -> ApiResult<Vec<Day>> {
    let days = days.clamp(1, DAYS_MAX);
    let first = now_ms.saturating_sub((days - 1) * DAY_MS);
    let rows = store::days(db, tenant_id, &day_of(first), &day_of(now_ms)).await?;
    Ok((0..days)
        .map(|i| {
            let day = day_of(first + i * DAY_MS);
            let buckets: Vec<(u32, u64)> = rows
                .iter()
                .filter(|r: &&DayRow| r.day == day)
                .map(|r| (r.bucket, r.n))
                .collect();
            Day {
                verified: buckets.iter().map(|(_, n)| n).sum(),
                p50_ms: percentile(&buckets, 0.5),
                p99_ms: percentile(&buckets, 0.99),
                day,
            }
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_falls_in_a_bucket_whose_upper_bound_is_within_a_fifth_above_it() {
        for lag in [1_u64, 2, 3, 7, 50, 999, 1_000, 1_234, 60_000, 86_400_000] {
            let up = upper_ms(bucket_of(lag));
            assert!(up > lag || (lag == 1 && up >= 1), "{lag} -> {up}");
            #[allow(clippy::cast_precision_loss)]
            let ratio = up as f64 / lag as f64;
            assert!(ratio <= 1.2 || lag < 8, "{lag} -> {up}");
        }
        assert_eq!(bucket_of(0), 0);
        assert_eq!(upper_ms(0), 1);
    }

    #[test]
    fn percentiles_walk_the_buckets() {
        let b = |lag| bucket_of(lag);
        // 98 fast deltas (~100 ms) and 2 slow ones (~10 s).
        let day = vec![(b(100), 98), (b(10_000), 2)];
        assert_eq!(percentile(&day, 0.5), Some(upper_ms(b(100))));
        assert_eq!(percentile(&day, 0.99), Some(upper_ms(b(10_000))));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn delta_verified_events_raise_their_day_and_bucket() {
        let event = |received: &str, verified: &str| EventRow {
            id: "e".into(),
            tenant_id: "t".into(),
            kind: EventKind::DeltaVerified,
            payload: format!(r#"{{"receivedAt":"{received}","blockTimestamp":"{verified}"}}"#),
            created_at: 0,
        };
        let mut other = event("2026-11-24T10:00:00.000Z", "2026-11-24T10:00:01.000Z");
        other.kind = EventKind::CheckpointVerified;
        let r = raises(&[
            event("2026-11-24T10:00:00.000Z", "2026-11-24T10:00:01.000Z"),
            event("2026-11-24T11:00:00.000Z", "2026-11-24T11:00:01.000Z"),
            event("2026-11-24T23:59:59.900Z", "2026-11-25T00:00:00.100Z"),
            other,
        ]);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].day.as_str(), r[0].n), ("2026-11-24", 2));
        assert_eq!(r[0].bucket, bucket_of(1_000));
        assert_eq!((r[1].day.as_str(), r[1].n), ("2026-11-25", 1));
    }
}
