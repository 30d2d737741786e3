//! A delta as it enters its ledger, before anything is read or written:
//! validated (`DeltaInput`), then prepared (`prepare`: its anchor id and
//! item hash). Nothing here depends on the tenant, so a single emit
//! prepares its delta before its key is read and the key's read indexes
//! its proof root (issue 16); `super::submit` writes it.

use bvs_core::amount::Amount;
use bvs_core::conditions::Conditions;
use bvs_core::hash::Hash32;
use bvs_core::item::{item_hash, DeltaContent};
use bvs_core::merkle;
use bvs_core::time::format_iso_ms;
use bvs_core::types::{Asset, CustomerId, Metadata, Reason, ReferenceId};

use crate::error::{ApiError, ApiResult};
use crate::ids::AnchorId;
use crate::store::submissions::NewDelta;

/// One validated delta of an emit or batch request.
pub struct DeltaInput {
    pub customer_id: CustomerId,
    pub delta: Amount,
    /// The default asset when the request names none.
    pub asset: Asset,
    pub reason: Reason,
    pub reference_id: Option<ReferenceId>,
    pub metadata: Option<Metadata>,
    pub declared_at: Option<u64>,
    /// Checked when sequenced (issue 43); none by default.
    pub conditions: Conditions,
}

/// A delta ready to store: ids and hashes computed (its ledger id once
/// [`super::for_tenant`] has named the tenant).
pub struct Prepared {
    pub row: NewDelta,
    /// The request's name for its `asset` field (`asset`, or
    /// `deltas[3].asset` for a batch's item 3), named by a refusal.
    pub asset_field: String,
    pub item: Hash32,
    pub delta: Amount,
}

/// Gives the delta its anchor id and computes its item hash (RFC 8785 form
/// of its content, docs/hashes.md). Nothing of it depends on the tenant,
/// so a single emit prepares it before its key is read (its root is
/// indexed with that read); [`super::for_tenant`] then gives it its ledger id.
///
/// # Errors
/// No randomness for the id, or content that cannot be canonicalized.
pub fn prepare(input: DeltaInput, position: u64, now_ms: u64) -> ApiResult<Prepared> {
    let anchor_id = AnchorId::new()?;
    let declared_at = input.declared_at.unwrap_or(now_ms);
    let metadata = input.metadata.as_ref().map(Metadata::to_value);
    let content = DeltaContent {
        anchor_id: anchor_id.to_string(),
        customer_id: input.customer_id.as_str().to_string(),
        delta: input.delta,
        reason: input.reason.as_str().to_string(),
        reference_id: input.reference_id.as_ref().map(|r| r.as_str().to_string()),
        metadata: metadata.as_ref().map(bvs_core::json::Value::from_serde),
        declared_timestamp: format_iso_ms(i64::try_from(declared_at).unwrap_or(i64::MAX)),
        asset: input.asset,
        conditions: input.conditions,
    };
    let item = item_hash(&content).map_err(ApiError::internal)?;
    Ok(Prepared {
        row: NewDelta {
            anchor_id,
            customer_id: input.customer_id,
            // The tenant is not known yet (the body is read before the
            // key): set by `emit::for_tenant`, before the row is written.
            ledger_id: Hash32([0; 32]),
            position,
            item_hash: item,
            delta: input.delta,
            delta_text: input.delta.to_string(),
            asset: content.asset,
            reason: content.reason,
            reference_id: content.reference_id,
            metadata: metadata.map(|m| m.to_string()),
            declared_at,
            // Set by `for_tenant`, before the row is written.
            ledger_root: Hash32([0; 32]),
            conditions: (!content.conditions.is_empty()).then(|| {
                let mut text = String::new();
                content.conditions.write_canonical(&mut text);
                text
            }),
        },
        item,
        delta: input.delta,
        asset_field: "asset".into(),
    })
}

/// The items root (proof root) of a submission of `prepared`.
pub fn items_root(prepared: &[Prepared]) -> Hash32 {
    let items: Vec<Hash32> = prepared.iter().map(|p| p.item).collect();
    merkle::root(&items)
}
