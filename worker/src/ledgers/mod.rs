//! A tenant's customer ledgers as read (docs/balance.md): a ledger's id
//! and row, its balance replayed (`derive`), compared against the caller's
//! list (`pinpoint`), listed (`customers`) and charted (`charts`).

pub mod as_of;
pub mod charts;
pub mod customers;
pub mod derive;
pub mod pinpoint;

use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store;

/// The deterministic ledger identifier of a customer: the service keeps no
/// notion of who the customer is (docs/balance.md).
pub fn ledger_id(tenant_id: &TenantId, customer_id: &CustomerId) -> Hash32 {
    Hash32::digest(format!("bvs-ledger-v1\n{tenant_id}\n{customer_id}").as_bytes())
}

/// A customer's ledger row of `asset`, or 404 naming the customer (and
/// the asset, when named and never used by the customer; another
/// tenant's customer is simply not found).
pub async fn require_ledger(
    db: &D1Database,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    asset: &Asset,
) -> ApiResult<store::ledgers::LedgerRow> {
    store::ledgers::ledger(db, tenant_id, customer_id, asset)
        .await?
        .ok_or_else(|| no_ledger(customer_id, asset))
}

/// The 404 for a customer without a ledger of `asset`.
pub fn no_ledger(customer_id: &CustomerId, asset: &Asset) -> ApiError {
    match asset {
        Asset::Default => {
            ApiError::NotFound(format!("No ledger for customerId {}", customer_id.as_str()))
        }
        named => ApiError::NotFound(format!(
            "No ledger of asset {named} for customerId {}",
            customer_id.as_str()
        )),
    }
}
