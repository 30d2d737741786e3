//! The assets a tenant has used (issue 43, docs/balance.md "Assets"):
//! each code with the precision it was first used with. The emit's batch
//! registers them (`store::emit`); this file reads them.

use serde::Deserialize;

use bvs_core::amount::Amount;

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

/// Sets the tenant's default floor of an asset (`?4`, NULL: none),
/// registering the code with precision `?3` if it is new; answers the row,
/// or nothing when the code keeps another precision (issue 43).
const SET_FLOOR: &str =
    "INSERT INTO assets (tenant_id, code, precision, balance_at_least, created_at) \
     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (tenant_id, code) DO UPDATE \
     SET balance_at_least = excluded.balance_at_least WHERE assets.precision = excluded.precision \
     RETURNING code, precision, balance_at_least, created_at";
const SELECT_ONE: &str = "SELECT code, precision, balance_at_least, created_at \
     FROM assets WHERE tenant_id = ?1 AND code = ?2";

queries! {
    /// The tenant's assets, by code.
    pub fn of_tenant(tenant_id: &TenantId) -> Vec<AssetRow> = all(SELECT_OF_TENANT);
    /// One of the tenant's assets by code (`''`: the default asset's floor).
    pub fn one(tenant_id: &TenantId, code: &str) -> Option<AssetRow> = first(SELECT_ONE);
    /// Sets an asset's default floor (see [`SET_FLOOR`]).
    pub fn set_floor(tenant_id: &TenantId, code: &str, precision: u32, floor: Option<&Amount>, now_ms: u64) -> Option<AssetRow> = first(SET_FLOOR);
}
