//! Facts: content identified by its SHA-256, recorded QUEUED and appended
//! to the environment's log by the sequencer like deltas.

use bvs_core::hash::{content_hash, Hash32};

use super::{db, submit, LogId};
use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::store::facts::{self, FactRow};

/// Records `content` for the tenant unless it already has it, and rings
/// the sequencer for a new fact. Returns the fact and whether it is new.
///
/// # Errors
/// D1 errors.
pub async fn record(
    app: &App,
    tenant_id: &str,
    log: LogId,
    content: &str,
    metadata: Option<&str>,
) -> ApiResult<(FactRow, bool)> {
    let hash = content_hash(content).to_hex();
    let db = db(app, log)?;
    let created = facts::insert(&db, tenant_id, &hash, content, metadata, app.now_ms).await?;
    let row = facts::fact(&db, tenant_id, &hash)
        .await?
        .ok_or_else(|| ApiError::internal("fact vanished after insert"))?;
    if created {
        submit::ring(app, log).await;
    }
    Ok((row, created))
}

/// The tenant's fact with this content hash.
///
/// # Errors
/// 404 when the tenant has no such fact.
pub async fn fact(app: &App, tenant_id: &str, log: LogId, hash: &Hash32) -> ApiResult<FactRow> {
    let hash = hash.to_hex();
    facts::fact(&db(app, log)?, tenant_id, &hash)
        .await?
        .ok_or_else(|| {
            ApiError::coded(
                ErrorCode::FactNotFound,
                format!("Fact not found: no fact with contentHash {hash}"),
            )
        })
}
