//! The request log's writer: rows wait in isolate memory and are written
//! together after [`FLUSH_AFTER_MS`], one D1 batch per shard holding every
//! tenant's rows (per tenant: the day's bytes meter raised if they fit,
//! then the rows, written only if the raise took), the shards of a flush
//! concurrently. The first row of a quiet isolate starts a flush in its own
//! `after_response` work; rows that come while it waits or writes join it
//! (as `ledger::doorbell` does for queue sends). What a tenant needs for
//! its rows (plan, retention window, Sandbox shard) is read from the
//! control database once per flush, and kept for [`TENANT_CACHE_MS`].

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bvs_core::types::Env;
use serde_json::json;

use super::Source;
use crate::app::App;
use crate::error::ApiResult;
use crate::ids::{KeyId, TenantId};
use crate::ledger::LogId;
use crate::plan::Plan;
use crate::store::request_log::{self as store, TenantRow};

/// How long a row waits for others to share its write: the most it adds
/// before a request shows in the log.
pub const FLUSH_AFTER_MS: u64 = 250;
/// Rows an isolate holds at most; rows past it are not logged (a flush
/// that cannot keep up must not grow memory).
pub const PENDING_ROWS_MAX: usize = 2_000;
/// Writes one flush makes at most before it ends (about 5 s of a busy
/// isolate): the `after_response` work that runs it stays well inside the
/// runtime's 30 s after a response; the next row starts another.
pub const FLUSH_ROUNDS_MAX: u32 = 20;
/// A flush that started this long ago is taken for dead (its work was cut
/// off by the runtime without running its drop): the next row starts a
/// new one rather than wait for it forever.
pub const FLUSH_STALE_MS: u64 = 30_000;
/// Rows per insert statement (one JSON parameter each).
pub const ROWS_PER_STATEMENT_MAX: usize = 100;
/// How long a tenant's plan, retention window and Sandbox shard are used
/// without reading them again.
pub const TENANT_CACHE_MS: u64 = 60_000;
/// Tenants remembered at most; the cache starts afresh past it.
const TENANT_CACHE_MAX: usize = 1_000;
/// Expired rows deleted per shard per sweep (every minute).
pub const PURGE_ROWS_MAX: u64 = 5_000;
/// A row's bytes beyond its texts (numbers, index entries), for the meter.
const ROW_OVERHEAD_BYTES: u64 = 64;
const DAY_MS: u64 = 86_400_000;

/// One request, as logged.
pub struct Row {
    pub request_id: String,
    pub tenant_id: TenantId,
    pub source: Source,
    pub created_at: u64,
    pub method: String,
    pub path: String,
    pub route: &'static str,
    pub status: u16,
    pub code: Option<&'static str>,
    pub key_id: Option<KeyId>,
    /// The plan as read with the request's key (fresh); a dashboard row
    /// takes the tenant's, read by the writer (at most
    /// [`TENANT_CACHE_MS`] old).
    pub plan: Option<Plan>,
    pub duration_ms: u64,
    pub request_body: Option<String>,
    pub response_body: Option<String>,
}

impl Row {
    fn bytes(&self) -> u64 {
        let texts = [
            Some(self.request_id.as_str()),
            Some(self.tenant_id.as_str()),
            Some(self.method.as_str()),
            Some(self.path.as_str()),
            self.key_id.as_ref().map(KeyId::as_str),
            self.request_body.as_deref(),
            self.response_body.as_deref(),
        ];
        let text: usize = texts.iter().flatten().map(|s| s.len()).sum();
        (text + self.route.len() + self.code.map_or(0, str::len)) as u64 + ROW_OVERHEAD_BYTES
    }

    fn json(&self, expires_at: u64) -> serde_json::Value {
        json!([
            self.request_id,
            self.tenant_id,
            self.source.as_str(),
            self.created_at,
            self.method,
            self.path,
            self.route,
            self.status,
            self.code,
            self.key_id,
            self.duration_ms,
            self.request_body,
            self.response_body,
            expires_at
        ])
    }
}

#[derive(Default)]
struct Pending {
    rows: Vec<Row>,
    /// When the flush that is waiting or writing started: new rows join it.
    flushing: Option<u64>,
    /// Rows not logged because `rows` was full, since the last flush.
    dropped: u64,
}

thread_local! {
    static PENDING: RefCell<Pending> = RefCell::new(Pending::default());
    static TENANTS: RefCell<HashMap<TenantId, (TenantRow, u64)>> = RefCell::new(HashMap::new());
}

/// Queues a row at `now_ms`; `true` when the caller must run [`flush`]
/// (none is running, or the one running is stale).
pub fn push(row: Row, now_ms: u64) -> bool {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.rows.len() >= PENDING_ROWS_MAX {
            p.dropped += 1;
        } else {
            p.rows.push(row);
        }
        match p.flushing {
            Some(started) if now_ms.saturating_sub(started) < FLUSH_STALE_MS => false,
            _ => {
                p.flushing = Some(now_ms);
                true
            }
        }
    })
}

/// However a flush ends (even dropped half way), the next row starts one.
struct Flushing;

impl Drop for Flushing {
    fn drop(&mut self) {
        PENDING.with(|p| p.borrow_mut().flushing = None);
    }
}

/// Writes the queued rows after [`FLUSH_AFTER_MS`], and again while rows
/// keep coming, [`FLUSH_ROUNDS_MAX`] times at most.
pub async fn flush(env: worker::Env) {
    let _flushing = Flushing;
    for _ in 0..FLUSH_ROUNDS_MAX {
        worker::Delay::from(Duration::from_millis(FLUSH_AFTER_MS)).await;
        let (rows, dropped) = PENDING.with(|p| {
            let mut p = p.borrow_mut();
            (std::mem::take(&mut p.rows), std::mem::take(&mut p.dropped))
        });
        if dropped > 0 {
            worker::console_warn!(
                "request log: {dropped} requests not logged (isolate queue full)"
            );
        }
        if rows.is_empty() {
            return;
        }
        let app = App::new(env.clone());
        if let Err(e) = write(&app, rows).await {
            worker::console_warn!("request log: rows not written: {e:?}");
        }
    }
}

/// The tenants of `ids`, from the cache or read once.
async fn tenants(app: &App, ids: Vec<TenantId>) -> ApiResult<HashMap<TenantId, TenantRow>> {
    let now = app.now_ms;
    let mut known = HashMap::new();
    let mut missing = Vec::new();
    TENANTS.with(|t| {
        let t = t.borrow();
        for id in ids {
            match t.get(&id) {
                Some((row, at)) if now.saturating_sub(*at) < TENANT_CACHE_MS => {
                    known.insert(id, row.clone());
                }
                _ => missing.push(id),
            }
        }
    });
    if !missing.is_empty() {
        let rows = store::tenants(&app.control_db()?, &missing).await?;
        TENANTS.with(|t| {
            let mut t = t.borrow_mut();
            if t.len() + rows.len() > TENANT_CACHE_MAX {
                t.clear();
            }
            for row in &rows {
                t.insert(row.tenant_id.clone(), (row.clone(), now));
            }
        });
        for row in rows {
            known.insert(row.tenant_id.clone(), row);
        }
    }
    Ok(known)
}

/// Drops a tenant from this isolate's cache.
pub fn forget_tenant(tenant_id: &TenantId) {
    TENANTS.with(|t| t.borrow_mut().remove(tenant_id));
}

/// How long a row of a tenant on `plan` is kept: the plan's log time, or
/// the tenant's retention window if shorter.
pub fn kept_ms(plan: Plan, t: &TenantRow) -> u64 {
    let days = match t.data_retention_days {
        Some(window) => plan.request_log_days().min(u64::from(window)),
        None => plan.request_log_days(),
    };
    days * DAY_MS
}

/// `YYYY-MM-DD` (UTC) of `ms`: the request log meter's period.
pub fn day(ms: u64) -> String {
    let iso = bvs_core::time::format_iso_ms(i64::try_from(ms).unwrap_or(i64::MAX));
    iso.get(..10).unwrap_or_default().to_string()
}

async fn write(app: &App, rows: Vec<Row>) -> ApiResult<()> {
    let mut ids: Vec<TenantId> = rows.iter().map(|r| r.tenant_id.clone()).collect();
    ids.sort();
    ids.dedup();
    let tenants = tenants(app, ids).await?;
    let mut shards: BTreeMap<LogId, BTreeMap<TenantId, Vec<Row>>> = BTreeMap::new();
    for row in rows {
        let Some(t) = tenants.get(&row.tenant_id) else {
            continue;
        };
        let log = match row.source {
            Source::Key(env, shard) => LogId::new(env, shard),
            Source::Dashboard => match t.sandbox_shard {
                Some(shard) => LogId::new(Env::Sandbox, shard),
                None => continue,
            },
        };
        shards
            .entry(log)
            .or_default()
            .entry(row.tenant_id.clone())
            .or_default()
            .push(row);
    }
    let today = day(app.now_ms);
    let writes = shards
        .into_iter()
        .map(|(log, groups)| write_shard(app, log, &tenants, groups, &today));
    futures_util::future::join_all(writes).await;
    Ok(())
}

/// One shard's rows, every tenant's in one batch: for each tenant the
/// day's meter raised by its rows' bytes if they fit under the plan's cap,
/// then its rows, written only if the raise took. A tenant whose day is
/// full writes nothing and leaves the others' rows alone.
async fn write_shard(
    app: &App,
    log: LogId,
    tenants: &HashMap<TenantId, TenantRow>,
    groups: BTreeMap<TenantId, Vec<Row>>,
    today: &str,
) {
    let result = async {
        let db = crate::ledger::db(app, log)?;
        let mut statements = Vec::new();
        // Per tenant: the index of its raise in the batch, and its rows.
        let mut raises = Vec::new();
        for (tenant_id, rows) in &groups {
            let Some(t) = tenants.get(tenant_id) else {
                continue;
            };
            raises.push((statements.len(), tenant_id.as_str(), rows.len()));
            statements.extend(tenant_statements(t, rows, today)?);
        }
        let changed = store::batch_after_response(&db, statements).await?;
        for (at, tenant_id, n) in raises {
            if changed.get(at) == Some(&0) {
                worker::console_warn!(
                    "request log of tenant {tenant_id} full for {today}: {n} requests not logged"
                );
            }
        }
        Ok::<_, crate::error::ApiError>(())
    }
    .await;
    if let Err(e) = result {
        let n: usize = groups.values().map(Vec::len).sum();
        worker::console_warn!(
            "request log on {}: {n} rows not written: {e:?}",
            log.path_name()
        );
    }
}

/// A tenant's statements of a flush: the day's raise, then its rows (one
/// JSON parameter per [`ROWS_PER_STATEMENT_MAX`] rows).
fn tenant_statements<'a>(
    t: &'a TenantRow,
    rows: &'a [Row],
    today: &'a str,
) -> ApiResult<Vec<crate::store::Query<'a>>> {
    // The freshest plan of the group: a keyed request's, else the tenant
    // read's.
    let plan = rows.iter().find_map(|r| r.plan).unwrap_or(t.plan);
    let add = rows.iter().map(Row::bytes).sum();
    let mut statements = vec![store::raise_day(
        &t.tenant_id,
        today,
        add,
        plan.request_log_bytes_per_day(),
    )?];
    for chunk in rows.chunks(ROWS_PER_STATEMENT_MAX) {
        let values: Vec<serde_json::Value> = chunk
            .iter()
            .map(|r| {
                let kept = kept_ms(r.plan.unwrap_or(t.plan), t);
                r.json(r.created_at.saturating_add(kept))
            })
            .collect();
        statements.push(store::insert(serde_json::to_string(&values)?)?);
    }
    Ok(statements)
}

/// Deletes expired rows of every shard.
pub async fn purge_expired(app: &App) -> ApiResult<u64> {
    let mut total = 0;
    let mut first_error = None;
    for log in crate::ledger::shard::all(app) {
        let result = async {
            let db = crate::ledger::db(app, log)?;
            store::purge_expired(&db, app.now_ms, PURGE_ROWS_MAX).await
        }
        .await;
        match result {
            Ok(n) => total += n,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(total),
    }
}

/// Deletes the daily meters of days before yesterday, on every shard.
pub async fn purge_old_meters(app: &App) -> ApiResult<()> {
    let before = day(app.now_ms.saturating_sub(DAY_MS));
    for log in crate::ledger::shard::all(app) {
        let db = crate::ledger::db(app, log)?;
        store::purge_meters_before(&db, &before).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row {
            request_id: "req_1".into(),
            tenant_id: "t".into(),
            source: Source::Dashboard,
            created_at: 0,
            method: "GET".into(),
            path: "/".into(),
            route: "/",
            status: 200,
            code: None,
            key_id: None,
            plan: None,
            duration_ms: 0,
            request_body: None,
            response_body: None,
        }
    }

    #[test]
    fn the_first_row_starts_a_flush_later_ones_join_it_until_it_is_stale() {
        assert!(push(row(), 1_000), "a quiet isolate: this row flushes");
        assert!(!push(row(), 1_100), "a flush is running: joined");
        assert!(
            push(row(), 1_000 + FLUSH_STALE_MS),
            "a flush cut off by the runtime is taken over"
        );
        drop(Flushing);
        assert!(
            push(row(), 50_000),
            "once a flush ended, the next row starts one"
        );
        drop(Flushing);
        PENDING.with(|p| p.borrow_mut().rows.clear());
    }

    fn tenant(window: Option<u32>) -> TenantRow {
        TenantRow {
            tenant_id: "t".into(),
            plan: Plan::Free,
            data_retention_days: window,
            sandbox_shard: Some(0),
        }
    }

    #[test]
    fn a_row_is_kept_for_the_plans_time_or_the_retention_window_if_shorter() {
        assert_eq!(kept_ms(Plan::Free, &tenant(None)), DAY_MS);
        assert_eq!(kept_ms(Plan::Enterprise, &tenant(None)), 30 * DAY_MS);
        assert_eq!(kept_ms(Plan::Enterprise, &tenant(Some(7))), 7 * DAY_MS);
        assert_eq!(kept_ms(Plan::Pilot, &tenant(Some(90))), 7 * DAY_MS);
    }

    #[test]
    fn the_meter_period_is_the_utc_day() {
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(86_400_000 * 365 + 5), "1971-01-01");
    }
}
