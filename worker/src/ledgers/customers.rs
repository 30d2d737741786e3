//! A tenant's customer ledgers as listed: one page of them, and a
//! customer's deltas still waiting for the sequencer.

use bvs_core::types::{Asset, CustomerId, Page};
use worker::D1Database;

use crate::error::ApiResult;
use crate::ids::TenantId;
pub use crate::store::ledgers::LedgerRow;
use crate::store::{deltas, ledgers};

pub use crate::store::assets::AssetRow;

/// The tenant's named assets, by code, each with the precision it keeps.
///
/// # Errors
/// D1 errors.
pub async fn tenant_assets(db: &D1Database, tenant_id: &TenantId) -> ApiResult<Vec<AssetRow>> {
    crate::store::assets::of_tenant(db, tenant_id).await
}

/// One of the tenant's assets by code (`''`: the default asset's floor).
///
/// # Errors
/// D1 errors.
pub async fn tenant_asset(
    db: &D1Database,
    tenant_id: &TenantId,
    code: &str,
) -> ApiResult<Option<AssetRow>> {
    crate::store::assets::one(db, tenant_id, code).await
}

/// Sets the tenant's default floor of an asset (`None`: none),
/// registering the code with `precision` if it is new; `None` when the
/// code keeps another precision.
///
/// # Errors
/// D1 errors.
pub async fn set_floor(
    db: &D1Database,
    tenant_id: &TenantId,
    code: &str,
    precision: u32,
    floor: Option<&bvs_core::amount::Amount>,
    now_ms: u64,
) -> ApiResult<Option<AssetRow>> {
    crate::store::assets::set_floor(db, tenant_id, code, precision, floor, now_ms).await
}

/// Every asset's row of one customer, the default asset first.
///
/// # Errors
/// D1 errors.
pub async fn assets_of(
    db: &D1Database,
    tenant_id: &TenantId,
    customer: &CustomerId,
) -> ApiResult<Vec<LedgerRow>> {
    ledgers::assets_of(db, tenant_id, customer).await
}

/// The named-asset rows of `customers` (none for a ledger that uses only
/// the default asset).
///
/// # Errors
/// D1 errors.
pub async fn named_of(
    db: &D1Database,
    tenant_id: &TenantId,
    customers: &[&CustomerId],
) -> ApiResult<Vec<LedgerRow>> {
    if customers.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = customers.iter().map(|c| c.as_str()).collect();
    ledgers::named_of(db, tenant_id, serde_json::to_string(&ids)?).await
}

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
    asset: &Asset,
) -> ApiResult<u64> {
    deltas::queued_count(db, tenant_id, customer, asset).await
}
