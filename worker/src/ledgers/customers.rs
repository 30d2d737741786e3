//! A tenant's customer ledgers as listed: one page of them, and a
//! customer's deltas still waiting for the sequencer.

use bvs_core::types::{CustomerId, Page};
use worker::D1Database;

use crate::error::ApiResult;
use crate::ids::TenantId;
pub use crate::store::ledgers::LedgerRow;
use crate::store::{deltas, ledgers};

/// One page of the tenant's ledgers (those whose customer id starts with
/// `prefix`, if given), and how many there are in all.
///
/// # Errors
/// D1 errors.
pub async fn page(
    db: &D1Database,
    tenant_id: &TenantId,
    page: &Page,
    prefix: Option<&CustomerId>,
) -> ApiResult<(u64, Vec<LedgerRow>)> {
    if let Some(prefix) = prefix {
        // Every character a customer id may hold sorts below `{`.
        let (from, to) = (prefix.as_str(), format!("{}{{", prefix.as_str()));
        let (total, rows) = futures_util::future::try_join(
            ledgers::count_in_range(db, tenant_id, from, &to),
            ledgers::page_in_range(db, tenant_id, from, &to, page.limit(), page.offset()),
        )
        .await?;
        return Ok((total, rows));
    }
    let total = ledgers::count_of_tenant(db, tenant_id).await?;
    let rows = ledgers::page(db, tenant_id, page.limit(), page.offset()).await?;
    Ok((total, rows))
}

/// The customer's deltas not yet in the log (QUEUED).
///
/// # Errors
/// D1 errors.
pub async fn queued_count(
    db: &D1Database,
    tenant_id: &TenantId,
    customer: &CustomerId,
) -> ApiResult<u64> {
    deltas::queued_count(db, tenant_id, customer).await
}
