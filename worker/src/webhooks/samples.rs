//! Sample payloads for the webhook test route: each subscribable event's
//! documented `data`, built with the same views real events use, filled
//! with clearly fake values (ids and texts say `sample`), so an integrator
//! can rehearse a receiver before real traffic. See docs/webhooks.md.

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::CustomerId;

use super::{
    EVENT_CHECKPOINT_COSIGNED, EVENT_CHECKPOINT_DISPUTED, EVENT_CHECKPOINT_VERIFIED,
    EVENT_CHECKPOINT_WITNESSED, EVENT_DELTA_VERIFIED, EVENT_TEST, EVENT_VERIFICATION_COMPLETED,
    EVENT_VERIFICATION_FAILED,
};
use crate::error::{ApiError, ApiResult};
use crate::ids::{AnchorId, CheckpointId, SubmissionId, TenantId, WebhookId};
use crate::store::checkpoints::{CheckpointOf, CheckpointRow};
use crate::store::deltas::DeltaRow;
use crate::store::{CheckpointStatus, ItemStatus};
use crate::views::{iso, CheckpointView, DeltaRecord};

/// Prefix of every sample id, so a receiver can tell samples apart.
pub const SAMPLE_PREFIX: &str = "sample_";
/// The `customerId` of every sample.
pub const SAMPLE_CUSTOMER_ID: &str = "sample_customer";
/// The `reason` of a sample delta.
pub const SAMPLE_REASON: &str = "Sample event from the webhook test route: not a real delta";
/// `failure.message` of the sample `verification.failed`.
pub const SAMPLE_FAILURE_REASON: &str = "sample: not a real failure";

/// A sample event's `data` as JSON text, or `None` for an unknown name.
///
/// # Errors
/// Internal error if a sample cannot be serialised.
pub fn data(event: &str, webhook_id: &WebhookId, now_ms: u64) -> ApiResult<Option<String>> {
    let text = match event {
        EVENT_TEST => serde_json::to_string(&serde_json::json!({
            "message": "Test event from the balance verification service: your endpoint is \
                        reachable and can check the X-Service-Signature header",
            "webhookId": webhook_id,
        }))?,
        EVENT_DELTA_VERIFIED => {
            let mut record = DeltaRecord::from_row(&delta(now_ms)?, Some(tx_hash()))?;
            // As the real event: sent before witnesses cosign (issue 28).
            record.witnessed = Some(false);
            serde_json::to_string(&record)?
        }
        EVENT_VERIFICATION_FAILED => {
            let mut row = delta(now_ms)?;
            row.status = ItemStatus::Failed;
            row.leaf_index = None;
            row.tree_size = None;
            row.ledger_seq = None;
            row.balance_after = None;
            row.verified_at = None;
            crate::views::delta_failed_event_payload(
                &row,
                crate::views::Failure::append(SAMPLE_FAILURE_REASON),
            )?
        }
        EVENT_CHECKPOINT_VERIFIED => serde_json::to_string(&CheckpointView::from_row(
            &checkpoint(now_ms)?,
            Some(&tx_hash()),
        ))?,
        EVENT_VERIFICATION_COMPLETED => {
            let root = hash("items root").to_hex();
            serde_json::to_string(&serde_json::json!({
                "submissionId": format!("{SAMPLE_PREFIX}submission"),
                "kind": "single",
                "itemsRoot": root,
                "receiptId": root,
                "deltaCount": 1,
                "anchorIds": [format!("{SAMPLE_PREFIX}anchor")],
                "receivedAt": iso(now_ms.saturating_sub(2_000)),
                "verifiedAt": iso(now_ms),
                "verifyUrl": format!("/api/v1/verify/{root}"),
            }))?
        }
        EVENT_CHECKPOINT_COSIGNED | EVENT_CHECKPOINT_DISPUTED => agreement(event, now_ms)?,
        EVENT_CHECKPOINT_WITNESSED => serde_json::to_string(&serde_json::json!({
            // `witness`'s payload (docs/webhooks.md).
            "treeSize": 42,
            "fromTreeSize": 40,
            "witnessed": true,
        }))?,
        _ => return Ok(None),
    };
    Ok(Some(text))
}

/// The `data` of a sample `checkpoint.cosigned` or `checkpoint.disputed`.
fn agreement(event: &str, now_ms: u64) -> ApiResult<String> {
    // The fields of `agreement`'s event payload
    // (docs/webhooks.md); a sample statement is not a signed note.
    let c = checkpoint(now_ms)?;
    let kind = if event == EVENT_CHECKPOINT_COSIGNED {
        "balance"
    } else {
        "dispute"
    };
    Ok(serde_json::to_string(&serde_json::json!({
        "checkpointId": c.id,
        "customerId": c.customer_id.as_str(),
        "period": c.period,
        "merkleRoot": c.merkle_root.to_hex(),
        "deltaCount": c.delta_count,
        "balance": amount("1000.25")?,
        "kind": kind,
        "ledgerId": hash("ledger").to_hex(),
        "counterpartyKey": "sample-customer-key+00000000+AAAAsampleAAAA",
        "itemHash": hash("statement item").to_hex(),
        "statement": format!("sample {kind} statement: not a signed note"),
        "recordedAt": iso(now_ms),
    }))?)
}

/// A fixed, recognisably fake hash: SHA-256 of `sample <what>`.
fn hash(what: &str) -> Hash32 {
    Hash32::digest(format!("sample {what}").as_bytes())
}

fn tx_hash() -> Hash32 {
    hash("signed tree head")
}

fn amount(text: &str) -> ApiResult<Amount> {
    Amount::parse(text).map_err(|e| ApiError::internal(format!("sample amount {text}: {e}")))
}

fn delta(now_ms: u64) -> ApiResult<DeltaRow> {
    Ok(DeltaRow {
        anchor_id: AnchorId::from_text(format!("{SAMPLE_PREFIX}anchor")),
        tenant_id: TenantId::from_text(format!("{SAMPLE_PREFIX}tenant")),
        customer_id: sample_customer()?,
        submission_id: SubmissionId::from_text(format!("{SAMPLE_PREFIX}submission")),
        position: 0,
        item_hash: hash("item"),
        items_root: hash("items root"),
        delta: amount("125.50")?,
        asset: bvs_core::types::Asset::Default,
        reason: Some(SAMPLE_REASON.to_string()),
        reference_id: Some(format!("{SAMPLE_PREFIX}reference")),
        metadata: Some(r#"{"sample":true}"#.to_string()),
        declared_at: now_ms.saturating_sub(3_000),
        received_at: now_ms.saturating_sub(2_000),
        status: ItemStatus::Verified,
        leaf_index: Some(41),
        tree_size: Some(42),
        ledger_seq: Some(7),
        balance_after: Some(amount("1000.25")?),
        verified_at: Some(now_ms),
        data_purged: 0,
        purged_at: None,
        ledger_root: None,
        conditions: Default::default(),
        failure: None,
        refusal: None,
        refusal_leaf: None,
        refusal_seq: None,
        refused_at: None,
    })
}

/// [`SAMPLE_CUSTOMER_ID`] as the rows hold it.
fn sample_customer() -> ApiResult<CustomerId> {
    CustomerId::parse(SAMPLE_CUSTOMER_ID)
        .map_err(|e| ApiError::internal(format!("sample customer: {e}")))
}

fn checkpoint(now_ms: u64) -> ApiResult<CheckpointRow> {
    Ok(CheckpointRow {
        id: CheckpointId::from_text(format!("{SAMPLE_PREFIX}checkpoint")),
        tenant_id: TenantId::from_text(format!("{SAMPLE_PREFIX}tenant")),
        customer_id: CheckpointOf::Customer(sample_customer()?),
        period: iso(now_ms).chars().take(7).collect(),
        merkle_root: hash("checkpoint root"),
        delta_count: 7,
        net_delta: Amount::ZERO,
        from_index: 0,
        to_index: 6,
        status: CheckpointStatus::Committed,
        created_at: now_ms.saturating_sub(60_000),
        committed_at: Some(now_ms),
        leaf_index: Some(42),
        tree_size: Some(43),
        failure: None,
        records_verified: Some(1),
        check_frontier: None,
        check_after_leaf: None,
        asset: bvs_core::types::Asset::Default,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::data;
    use crate::webhooks::EVENT_NAMES;

    #[test]
    fn every_subscribable_event_has_a_sample() {
        for name in EVENT_NAMES {
            let text = data(name, &"wh_x".into(), 1_764_000_000_000).unwrap();
            let text = text.unwrap_or_else(|| panic!("no sample for {name}"));
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(v.is_object(), "{name}: {text}");
        }
        assert!(data("delta.exploded", &"wh_x".into(), 0).unwrap().is_none());
    }
}
