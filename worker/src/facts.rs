//! Facts: content identified by its SHA-256, recorded QUEUED and appended
//! to the environment's log by the sequencer like deltas.

use bvs_core::hash::{content_hash, Hash32};

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::TenantId;
use crate::ledger::{db, doorbell, LogId};
use crate::meter;
use crate::plan::Plan;
use crate::store::facts;
pub use crate::store::facts::FactRow;
use crate::store::meters::{self, Meter};

/// Records `content` for the tenant unless it already has it, and rings
/// the sequencer for a new fact. Returns the fact and whether it is new.
/// A new fact counts against the plan's facts per month and storage
/// ceiling in the same D1 batch that writes it.
///
/// # Errors
/// 402 when the fact does not fit the plan (nothing written); D1 errors.
pub async fn record(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    plan: Plan,
    content: &str,
    metadata: Option<&str>,
) -> ApiResult<(FactRow, bool)> {
    let hash = content_hash(content);
    let db = db(app, log)?;
    let period = meter::month(app.now_ms).to_string();
    // The hash is stored as 64 hex digits.
    let stored = (64 + content.len() + metadata.map_or(0, str::len)) as u64;
    let raises = [
        meter::monthly(tenant_id, Meter::Facts, &period, plan),
        meter::bytes(tenant_id, stored, plan),
    ];
    let statements = vec![
        facts::insert_stmt(tenant_id, &hash, content, metadata, app.now_ms)?,
        meters::raise_if_changed(&raises[0])?,
        meters::raise_if_changed(&raises[1])?,
    ];
    let results = meters::batch_within_caps(&db, statements, &raises)
        .await?
        .map_err(|m| meter::over(m, plan, log.env, app.now_ms))?;
    let created = match results.first() {
        Some(r) => crate::store::changes(r)? > 0,
        None => false,
    };
    let row = facts::fact(&db, tenant_id, &hash)
        .await?
        .ok_or_else(|| ApiError::internal("fact vanished after insert"))?;
    if created {
        doorbell::ring(app, log).await;
    }
    Ok((row, created))
}

/// A fact written inside another write's batch (an agreement's key
/// binding or statement, issue 25): its statements and the raises they
/// make, so that the fact, its meters and the write commit together or
/// not at all.
pub struct FactWrite<'a> {
    tenant_id: &'a TenantId,
    content: &'a str,
    metadata: String,
    /// The tenant's plan: the fact counts against it like any fact, so no
    /// party can fill the shared database.
    pub plan: Plan,
    hash: Hash32,
    period: String,
    stored: u64,
    now_ms: u64,
}

impl<'a> FactWrite<'a> {
    /// The fact `content` of `tenant_id` with `metadata`, at the app's time.
    ///
    /// # Errors
    /// D1 errors reading the tenant's plan.
    pub async fn new(
        app: &App,
        tenant_id: &'a TenantId,
        content: &'a str,
        metadata: String,
    ) -> ApiResult<FactWrite<'a>> {
        let plan = crate::store::accounts::tenant_plan(&app.control_db()?, tenant_id).await?;
        Ok(FactWrite::of_plan(
            tenant_id, content, metadata, plan, app.now_ms,
        ))
    }

    /// The same, with the tenant's `plan` already read (a second fact in
    /// the same batch).
    pub fn of_plan(
        tenant_id: &'a TenantId,
        content: &'a str,
        metadata: String,
        plan: Plan,
        now_ms: u64,
    ) -> FactWrite<'a> {
        // The hash is stored as 64 hex digits.
        let stored = (64 + content.len() + metadata.len()) as u64;
        FactWrite {
            tenant_id,
            content,
            metadata,
            plan,
            hash: content_hash(content),
            period: meter::month(now_ms).to_string(),
            stored,
            now_ms,
        }
    }

    /// The fact's raises (facts per month, stored bytes), for `meters::batch_within_caps`.
    pub fn raises(&self) -> [meters::Raise<'_>; 2] {
        [
            meter::monthly(self.tenant_id, Meter::Facts, &self.period, self.plan),
            meter::bytes(self.tenant_id, self.stored, self.plan),
        ]
    }

    /// The fact's insert and its raises, in that order (the raises count
    /// only a new fact), to put first in the write's batch.
    ///
    /// # Errors
    /// A value that cannot be bound.
    pub fn statements(&self) -> ApiResult<Vec<crate::store::Query<'_>>> {
        let (t, metadata) = (self.tenant_id, Some(self.metadata.as_str()));
        let [monthly, bytes] = self.raises();
        Ok(vec![
            facts::insert_stmt(t, &self.hash, self.content, metadata, self.now_ms)?,
            meters::raise_if_changed(&monthly)?,
            meters::raise_if_changed(&bytes)?,
        ])
    }
}

/// The tenant's fact with this content hash.
///
/// # Errors
/// 404 when the tenant has no such fact.
pub async fn fact(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    hash: &Hash32,
) -> ApiResult<FactRow> {
    facts::fact(&db(app, log)?, tenant_id, hash)
        .await?
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::FactNotFound,
                format!("Fact not found: no fact with contentHash {hash}"),
            )
        })
}
