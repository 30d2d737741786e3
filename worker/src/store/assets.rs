//! The assets a tenant has used (issue 43, docs/balance.md "Assets"):
//! each code with the precision it was first used with. The emit's batch
//! registers them (`store::emit`); this file reads them.

use serde::Deserialize;

use super::queries;
use crate::ids::TenantId;

/// One asset of a tenant.
#[derive(Debug, Clone, Deserialize)]
pub struct AssetRow {
    pub code: String,
    pub precision: u32,
    /// The tenant's default floor for debits of the asset (the ledger
    /// rules' conditions; NULL: none).
    #[serde(deserialize_with = "super::opt_amount")]
    pub balance_at_least: Option<bvs_core::amount::Amount>,
    pub created_at: u64,
}

const SELECT_OF_TENANT: &str = "SELECT code, precision, balance_at_least, created_at \
     FROM assets WHERE tenant_id = ?1 ORDER BY code ASC";

queries! {
    /// The tenant's assets, by code.
    pub fn of_tenant(tenant_id: &TenantId) -> Vec<AssetRow> = all(SELECT_OF_TENANT);
}
