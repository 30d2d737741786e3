//! The worked examples of docs/hashes.md, so the document cannot drift
//! from the code. Each value was also checked with `sha256sum`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::amount::Amount;
use bvs_core::hash::{content_hash, Hash32};
use bvs_core::item::{item_hash, DeltaContent};
use bvs_core::merkle;
use bvs_core::types::Asset;

fn example_delta() -> DeltaContent {
    DeltaContent {
        anchor_id: "anc_01".into(),
        customer_id: "cust_42".into(),
        delta: Amount::parse("-4.250").unwrap(),
        reason: "refund".into(),
        reference_id: None,
        metadata: Some(bvs_core::json::Value::from_serde(
            &serde_json::json!({"order": 17, "channel": "web"}),
        )),
        declared_timestamp: "2026-11-22T04:56:40.123Z".into(),
        asset: Asset::Default,
        conditions: Default::default(),
    }
}

fn h(s: &str) -> Hash32 {
    Hash32::parse(s).unwrap()
}

/// docs/hashes.md, "Assets": `5 USD/2` and `5 CREDITS/0` hash apart.
#[test]
fn worked_asset_examples_of_docs_hashes_md() {
    let usd = DeltaContent {
        anchor_id: "anc_03".into(),
        delta: Amount::parse("5").unwrap(),
        reason: "top-up".into(),
        metadata: None,
        asset: Asset::parse("asset", "USD/2").unwrap(),
        ..example_delta()
    };
    assert_eq!(
        usd.canonical_json().unwrap(),
        r#"{"anchorId":"anc_03","asset":"USD/2","customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"5","metadata":null,"reason":"top-up","referenceId":null}"#
    );
    assert_eq!(
        item_hash(&usd).unwrap(),
        h("3bcd21ab1eecf3effc08451ff4b14130694ffffd70810e35ae5010833d46a472")
    );
    let credits = DeltaContent {
        asset: Asset::parse("asset", "CREDITS/0").unwrap(),
        ..usd
    };
    assert_eq!(
        item_hash(&credits).unwrap(),
        h("44fca13e3b8fa5e4d94254407bc93a8d4a6b2420fe860828decdbef98758493d")
    );
}

#[test]
fn worked_examples_of_docs_hashes_md() {
    assert_eq!(
        content_hash("hello world"),
        h("b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9")
    );
    let d = example_delta();
    assert_eq!(
        d.canonical_json().unwrap(),
        r#"{"anchorId":"anc_01","customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"-4.25","metadata":{"channel":"web","order":17},"reason":"refund","referenceId":null}"#
    );
    let i1 = item_hash(&d).unwrap();
    assert_eq!(
        i1,
        h("7185821f24fcb217a3c71bbe17cbf3fd2e3123e0bbde14c157da17a6638eda3e")
    );
    let d2 = DeltaContent {
        anchor_id: "anc_02".into(),
        delta: Amount::parse("10").unwrap(),
        reason: "top-up".into(),
        reference_id: Some("inv-7".into()),
        metadata: None,
        ..d
    };
    assert_eq!(
        d2.canonical_json().unwrap(),
        r#"{"anchorId":"anc_02","customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"10","metadata":null,"reason":"top-up","referenceId":"inv-7"}"#
    );
    let i2 = item_hash(&d2).unwrap();
    assert_eq!(
        i2,
        h("68b885254e657645c375d6a483329585ac1c2e506d410216bb13e99a694c9fea")
    );
    let i3 = content_hash("hello world");
    let (l1, l2, l3) = (
        merkle::leaf_hash(&i1),
        merkle::leaf_hash(&i2),
        merkle::leaf_hash(&i3),
    );
    assert_eq!(
        l1,
        h("ca37364564a995fa0a6044563d558ab1fd03cfcad2aaa608aace49cf2b333ac9")
    );
    assert_eq!(
        l2,
        h("c1f80c4b452ecacf289966af0e64cfaae400b2c1f8deec60a3acc63249b18be9")
    );
    assert_eq!(
        l3,
        h("e23bd2179289212dcfc468b3e8cb2b13ea65c1ee933af3c9a99894978b491271")
    );
    let n12 = merkle::node_hash(&l1, &l2);
    assert_eq!(
        n12,
        h("95a7a40512c4ac5f821906def92d839a8b1aa7c2c3f92a1ad771e7416ed4869e")
    );
    assert_eq!(merkle::root(&[i1, i2]), n12);
    assert_eq!(
        merkle::root(&[i1, i2, i3]),
        h("bded8cc990a4d080ec039f40b935e40be869d7b4b76c168ba2def4c507d7d0ff")
    );
    assert_eq!(merkle::node_hash(&n12, &l3), merkle::root(&[i1, i2, i3]));
    assert_eq!(
        merkle::root(&[]),
        h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );

    // The log over the same three items: tagged leaves (bvs-log-v1).
    let scheme = merkle::HashScheme::BvsLogV1;
    assert_eq!(scheme.name(), "bvs-log-v1");
    let (g1, g2, g3) = (
        scheme.leaf_hash(&i1),
        scheme.leaf_hash(&i2),
        scheme.leaf_hash(&i3),
    );
    assert_eq!(
        g1,
        h("c89815d11e5a279372d154c738541342d97a91c44354c5e0c000f90134616ad4")
    );
    assert_eq!(
        g2,
        h("1a8ba6aba3ff6adb49f6e32b2fd89437fbf50b73c65ea5892d256cc290e0ecb5")
    );
    assert_eq!(
        g3,
        h("9f440a49c71dc73e7bc3d2996425f4ef2cdcc2407d2e991ae0feef36aaa114f0")
    );
    let m12 = merkle::node_hash(&g1, &g2);
    assert_eq!(
        m12,
        h("f2d49b1b4fff913e0cd8255686305e3f514f0a15f76c5632d9fd592878afd18b")
    );
    assert_eq!(
        scheme.log_root(&[i1, i2, i3]),
        h("f8fc952ba700827bc0ce59f5167e4fd2dc5db9edfd0754855ab0c9d7d1ac29ff")
    );
    // The one-item submission [I1] has root L1, which the log never shows.
    assert_eq!(merkle::root(&[i1]), l1);
    for shown in [g1, g2, g3, m12, scheme.log_root(&[i1, i2, i3])] {
        for root in [l1, l2, l3, n12, merkle::root(&[i1, i2, i3])] {
            assert_ne!(shown, root);
        }
    }
}

#[test]
fn the_cosignature_example_of_docs_hashes_md() {
    use bvs_core::cosignature::{message, witness_vkey};
    // The witness of the example is the one whose Ed25519 seed is [1; 32].
    assert_eq!(
        witness_vkey("witness.example/w1", &[1; 32]).unwrap(),
        "witness.example/w1+0ad7d35e+BIqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c"
    );
    let body = "bvs.example/log/sandbox\n42\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
    assert_eq!(
        content_hash(&message(body, 1_795_323_500)),
        h("bf83a8bc57242323fa24d1d7d05fd6f8b1430ec7e4c1f9988a14dca8ffecdf3a")
    );
}

/// docs/hashes.md, "Conditions" and "Refusals".
#[test]
fn worked_condition_and_refusal_examples_of_docs_hashes_md() {
    use bvs_core::conditions::{Conditions, Failed, Position, Refusal};
    let debit = DeltaContent {
        anchor_id: "anc_04".into(),
        delta: Amount::parse("-12").unwrap(),
        reason: "spend".into(),
        metadata: None,
        asset: Asset::parse("asset", "USD/2").unwrap(),
        conditions: Conditions {
            balance_at_least: Some(Amount::ZERO),
            expected_sequence: None,
        },
        ..example_delta()
    };
    assert_eq!(
        debit.canonical_json().unwrap(),
        r#"{"anchorId":"anc_04","asset":"USD/2","conditions":{"balanceAtLeast":"0"},"customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"-12","metadata":null,"reason":"spend","referenceId":null}"#
    );
    let item = item_hash(&debit).unwrap();
    assert_eq!(
        item,
        h("b68b6f48e48d5a9ede4a3a4b7c8e432813d9e614128f457b9ce1ca1676e16b89")
    );
    let refusal = Refusal {
        item_hash: item,
        customer_id: "cust_42".into(),
        asset: debit.asset.clone(),
        delta: debit.delta,
        failed: Failed::Floor {
            balance_at_least: Amount::ZERO,
            tenant_default: false,
        },
        at: Position {
            sequence: 1,
            balance: Amount::parse("10").unwrap(),
        },
    };
    assert_eq!(
        refusal.hash(),
        h("ed0fd58507cad94a055458a88d66e959825a881f4f491a87a7a401b280b154c1")
    );
    assert!(refusal.is_justified());
}
