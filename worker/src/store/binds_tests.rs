//! Every hand-written statement builder binds exactly its placeholders
//! (issue 26). The statements `statements!` and `queries!` declare are
//! checked when the crate compiles; these are built at run time from rows,
//! so they are checked here, natively, without D1 (which would only refuse
//! a missing argument when the statement runs).

#![allow(clippy::unwrap_used)]

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::tiles::TileCoord;
use bvs_core::types::{CustomerId, Env};

use super::{assert_binds, Query};
use crate::ids::{
    AnchorId, CheckpointId, ClaimToken, ContractId, DeliveryId, EventId, StatementId, TenantId,
    UserId, WebhookId,
};
use crate::secret::SecretDigest;

fn h(s: &str) -> Hash32 {
    Hash32::digest(s.as_bytes())
}

fn all(batches: Vec<Vec<Query<'_>>>) {
    let flat: Vec<Query<'_>> = batches.into_iter().flatten().collect();
    assert!(!flat.is_empty());
    assert_binds(&flat);
}

#[test]
fn control_and_ledger_rows_bind_every_placeholder() {
    let tenant = TenantId::from_text("ten_1");
    let customer = CustomerId::parse("cus_1").unwrap();
    let usd = bvs_core::types::Asset::parse("asset", "USD/2").unwrap();
    let digest = SecretDigest::of("token");
    let user = UserId::from_text("usr_1");
    let contract = ContractId::from_text("ctr_1");
    let anchor = AnchorId::from_text("anc_1");
    let statement = StatementId::from_text("lst_1");
    let checkpoint: super::checkpoints::CheckpointRow = serde_json::from_value(serde_json::json!({
        "id": "chk_1", "tenant_id": "ten_1", "customer_id": "cus_1", "period": "2026-11",
        "merkle_root": h("root").to_hex(), "delta_count": 2, "net_delta": "10",
        "from_index": 0, "to_index": 1, "status": "QUEUED", "created_at": 1,
        "committed_at": null, "leaf_index": null, "tree_size": null, "failure": null,
        "records_verified": null, "check_frontier": null, "check_after_leaf": null,
        "asset": "USD/2"
    }))
    .unwrap();
    let invitation = super::agreement::InvitationRow {
        token_hash: h("t"),
        tenant_id: tenant.clone(),
        customer_id: customer.clone(),
        ledger_id: h("l"),
        created_at: 1,
        expires_at: 2,
        used_at: None,
    };
    let key = super::agreement::KeyRow {
        item_hash: h("k"),
        ledger_id: h("l"),
        tenant_id: tenant.clone(),
        customer_id: customer.clone(),
        verifier_key: "vk".into(),
        statement: "st".into(),
        registered_at: 1,
        signed_by_previous: None,
    };
    let agreement = super::agreement::AgreementRow {
        item_hash: h("a"),
        ledger_id: h("l"),
        tenant_id: tenant.clone(),
        customer_id: customer.clone(),
        checkpoint_id: CheckpointId::from_text("chk_1"),
        kind: super::agreement::AgreementKind::Balance,
        verifier_key: "vk".into(),
        statement: "st".into(),
        created_at: 1,
    };
    let cosignature = super::liabilities::CosignatureRow {
        item_hash: h("c"),
        statement_id: statement.clone(),
        ledger_id: h("l"),
        tenant_id: tenant.clone(),
        customer_id: customer.clone(),
        verifier_key: "vk".into(),
        statement: "st".into(),
        created_at: 1,
    };
    let receipt = super::receipts::ReceiptRow {
        items_root: h("r"),
        tenant_id: tenant.clone(),
        customer_id: customer.clone(),
        asset: bvs_core::types::Asset::Default,
        period: None,
        from_seq: 1,
        to_seq: 2,
        delta_count: 2,
        generated_at: 3,
    };
    let raise = super::meters::Raise {
        tenant_id: &tenant,
        meter: super::meters::Meter::Facts,
        period: "2026-11",
        add: 1,
        cap: 2,
    };
    let start = super::deltas::StartAt::AnchorId(anchor.as_str());
    let (request_hash, token) = (h("req"), ClaimToken::from_text("clm_1"));
    let claim = super::idempotency::KeyClaim {
        tenant_id: &tenant,
        claim: super::idempotency::ClaimKey {
            env: Env::Sandbox,
            key: "k",
            request_hash: &request_hash,
            token: &token,
            now_ms: 1,
            expires_at: 2,
        },
    };
    all(vec![
        vec![super::accounts::insert_tenant(&tenant, "Co", 1).unwrap()],
        super::accounts::issue_token(&digest, &user, "verify", 2, 1).unwrap(),
        vec![super::contracts::insert_active(&contract, &tenant, Env::Sandbox, 0, 1).unwrap()],
        vec![
            super::agreement::logged_keys(&tenant, &h("l")).unwrap(),
            super::checkpoints::RECEIPT_CANDIDATES
                .statement(&tenant, &customer, (None, &usd))
                .unwrap(),
            super::checkpoints::RECEIPT_CANDIDATES
                .statement(&tenant, &customer, (Some("2026-11"), &usd))
                .unwrap(),
            super::agreement::LOGGED_STATEMENTS
                .statement(&tenant, &customer, (None, &usd))
                .unwrap(),
            super::agreement::LOGGED_STATEMENTS
                .statement(&tenant, &customer, (Some("2026-11"), &usd))
                .unwrap(),
        ],
        vec![super::agreement::insert_invitation(&invitation).unwrap()],
        vec![super::agreement::insert_key(&key).unwrap()],
        vec![super::agreement::insert_agreement(&agreement, "text").unwrap()],
        vec![super::checkpoints::insert_stmt(&checkpoint).unwrap()],
        super::checkpoints::mark_committed_all(&[("chk_1", 3)], 4, 5).unwrap(),
        Vec::from(
            super::deltas::from_start_statements(&tenant, (&customer, &usd), start, (1, 9))
                .unwrap(),
        ),
        vec![super::deltas::mark_failed(&anchor, "{}".into()).unwrap()],
        super::refusals::mark_refused_all(
            &[super::refusals::RefusedDelta {
                anchor_id: "anc_1",
                leaf_index: 3,
                sequence: 2,
                refusal: "{}".into(),
                failure: "{}".into(),
            }],
            4,
            5,
        )
        .unwrap(),
        vec![super::refusals::refusals_statement(&tenant, &customer, &usd, 0, 9, 5).unwrap()],
        super::meters::refund_deltas_all(&[("ten_1", "2026-12".into(), 1)]).unwrap(),
        vec![super::facts::insert_stmt(&tenant, &h("f"), "x", Some("m"), 1).unwrap()],
        super::facts::mark_verified_all(&[("ten_1", &h("f"), 3)], 4, 5).unwrap(),
        vec![super::facts::mark_failed(&tenant, &h("f"), "why").unwrap()],
        vec![super::liabilities::insert_cosignature(&cosignature).unwrap()],
        super::liabilities::insert_ledgers(
            &statement,
            &[("k".into(), customer.clone(), "1".into())],
        )
        .unwrap(),
        super::liabilities::insert_nodes(&statement, &[("l", 0, 1, "a".into(), "b".into())])
            .unwrap(),
        super::liabilities::set_indexes(&statement, &[("c", "d", "e".into(), 1, None)]).unwrap(),
        super::liabilities::mark_published_all(&[("lst_1", 3)], &[(&h("a"), &h("b"))], 4, 5)
            .unwrap(),
        vec![super::liabilities::nodes_statement(&statement, &[("l", 0, 1)]).unwrap()],
        vec![super::receipts::record(&receipt).unwrap()],
        vec![
            super::meters::raise(&raise).unwrap(),
            super::meters::raise_if_changed(&raise).unwrap(),
            super::meters::release_backlog_if_changed(&tenant).unwrap(),
        ],
        super::meters::release_backlog_all(&[("ten_1", 2)]).unwrap(),
        super::charts::raise_days(&[super::charts::DayRaise {
            tenant_id: tenant.clone(),
            day: "2026-11-27".into(),
            bucket: 1,
            n: 2,
        }])
        .unwrap(),
        vec![super::request_log::insert("[]".into()).unwrap()],
        vec![super::request_log::raise_day(&tenant, "2026-11-27", 1, 2).unwrap()],
        super::idempotency::claim_and_answer(&claim, 200, "{}".into()).unwrap(),
    ]);
}

#[test]
fn log_events_and_ledger_rounds_bind_every_placeholder() {
    let tenant = TenantId::from_text("ten_1");
    let customer = CustomerId::parse("cus_1").unwrap();
    let usd = bvs_core::types::Asset::parse("asset", "USD/2").unwrap();
    let anchor = AnchorId::from_text("anc_1");
    let head = super::log::HeadRow {
        tree_size: 3,
        root: h("root"),
        note: "note".into(),
        note_hash: h("note"),
        created_at: 1,
    };
    let leaf = super::log::NewLeaf {
        leaf_index: 0,
        item_hash: h("i"),
        kind: super::log::LeafKind::Delta,
        ref_id: "anc_1".into(),
        tenant_id: tenant.clone(),
    };
    let tiles = vec![(
        TileCoord {
            level: 0,
            index: 0,
            width: 1,
        },
        vec![0u8; 32],
    )];
    let event = super::events::NewEvent {
        id: EventId::from_text("evt_1"),
        tenant_id: tenant.clone(),
        kind: super::events::EventKind::VerificationFailed,
        payload: "{}".into(),
    };
    let delivery = super::webhooks::NewDelivery {
        of: super::webhooks::DeliveryOf {
            id: DeliveryId::from_text("dlv_1"),
            webhook_id: WebhookId::from_text("wh_1"),
            tenant_id: tenant.clone(),
            env: Some(Env::Sandbox),
            event_id: EventId::from_text("evt_1"),
            event_type: "delta.verified".into(),
            event_created_at: 1,
        },
        url: "https://example.com".into(),
        payload: "{}".into(),
    };
    let verified = super::deltas::VerifiedDelta {
        anchor_id: &anchor,
        leaf_index: 0,
        tree_size: 1,
        ledger_seq: 1,
        balance_after: Amount::ZERO,
        verified_at: 1,
    };
    let update = super::ledgers::LedgerUpdate {
        tenant_id: &tenant,
        customer_id: &customer,
        asset: &usd,
        old_count: 0,
        new_count: 1,
        old_balance: Amount::ZERO,
        new_balance: Amount::ZERO,
        latest_items_root: None,
        frontier: String::new(),
        first_leaf: 0,
        last_leaf: 0,
    };
    let tenant_window = super::ledgers::TenantWindowRow {
        tenant_id: tenant.clone(),
        window: "2026-11".into(),
        deltas_count: 1,
        net_delta: Amount::ZERO,
        first_leaf: 0,
        last_leaf: 0,
        frontier: String::new(),
    };
    let keys = [(tenant.clone(), customer.clone(), usd.key())];
    let failed = super::events::FailedItem::Delta(&anchor);
    all(vec![
        super::log::insert_tiles(&tiles).unwrap(),
        vec![super::log::tiles_statement(&[tiles[0].0]).unwrap()],
        super::log::insert_leaf_set(&[leaf], 1).unwrap(),
        vec![super::log::set_tiles_size(3).unwrap()],
        vec![super::log::insert_head(&head).unwrap()],
        super::log::insert_stored_hashes(&[(0, h("x")), (1, h("y"))]).unwrap(),
        super::log::stored_hashes_statements(Some((0, 3)), &[1, 2]).unwrap(),
        super::events::insert(std::slice::from_ref(&event), 1).unwrap(),
        super::events::insert_once_all(std::slice::from_ref(&event), 1).unwrap(),
        super::events::mark_dispatched(&[EventId::from_text("evt_1")], 1).unwrap(),
        vec![super::events::insert_if_failed(event, failed, 1).unwrap()],
        super::webhooks::insert_deliveries(&[delivery], 1).unwrap(),
        super::deltas::mark_verified_all(&[verified], 1, 2).unwrap(),
        Vec::from(
            super::ledgers::round_reads(&keys, std::slice::from_ref(&tenant), "2026-11").unwrap(),
        ),
        super::ledgers::update_all(&[update], "2026-11", 1).unwrap(),
        super::ledgers::upsert_tenant_windows(&[tenant_window], "2026-11").unwrap(),
        vec![
            super::witness::publish(3, "note".into(), 1, true, 1).unwrap(),
            super::witness::record(
                "vk".into(),
                "w",
                &super::witness::Outcome::Cosigned {
                    size: 3,
                    root: &head.root,
                    line: "l",
                },
                1,
            )
            .unwrap(),
        ],
    ]);
}
