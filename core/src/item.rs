//! What a delta's `itemHash` commits to, and the hash (docs/hashes.md):
//! its fields in RFC 8785 (JCS) canonical form, written by `json`, the
//! same code the verifier runs.

use crate::amount::Amount;
use crate::conditions::Conditions;
use crate::hash::{Hash32, HashError};
use crate::types::Asset;
use serde::{Deserialize, Serialize};

/// What a delta's `itemHash` commits to. Raw context (reason, referenceId,
/// metadata) may be purged later; the hash stays and anyone who kept these
/// fields can recompute it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaContent {
    pub anchor_id: String,
    pub customer_id: String,
    pub delta: Amount,
    pub reason: String,
    pub reference_id: Option<String>,
    pub metadata: Option<crate::json::Value>,
    /// ISO 8601 UTC with milliseconds, as `time::format_iso_ms` prints it.
    pub declared_timestamp: String,
    /// The delta's asset (issue 43): hashed as `"asset": "CODE/p"` when
    /// named; the default asset adds no member, so every item hashed
    /// before assets keeps its hash.
    #[serde(default, skip_serializing_if = "Asset::is_default")]
    pub asset: Asset,
    /// What the delta asks when it is sequenced (issue 43, docs/balance.md
    /// "Conditions"): hashed as `"conditions": {...}` when it asks
    /// anything; none adds no member.
    #[serde(default, skip_serializing_if = "Conditions::is_empty")]
    pub conditions: Conditions,
}

impl DeltaContent {
    /// The exact JSON text that is hashed: RFC 8785 (JCS) canonical form of
    /// `{anchorId, asset (only when named), conditions (only when any),
    /// customerId, declaredTimestamp,
    /// delta (decimal string), metadata (object or null), reason,
    /// referenceId (string or null)}`.
    ///
    /// # Errors
    /// [`HashError::Canonicalization`] if the metadata cannot be
    /// canonicalized (it always can once it passed `types::Metadata`).
    pub fn canonical_json(&self) -> Result<String, HashError> {
        // Members written in JCS order (sorted keys); the metadata object
        // is canonicalized by `json`, the same code the verifier runs.
        let mut out = String::with_capacity(256);
        let text = crate::json::write_string_member;
        out.push('{');
        text(&mut out, "anchorId", &self.anchor_id);
        if let Asset::Named { .. } = &self.asset {
            text(&mut out, "asset", &self.asset.key());
        }
        if !self.conditions.is_empty() {
            out.push_str("\"conditions\":");
            self.conditions.write_canonical(&mut out);
            out.push(',');
        }
        text(&mut out, "customerId", &self.customer_id);
        text(&mut out, "declaredTimestamp", &self.declared_timestamp);
        text(&mut out, "delta", &self.delta.to_string());
        out.push_str("\"metadata\":");
        match &self.metadata {
            Some(m) => m
                .write_canonical(&mut out)
                .map_err(|e| HashError::Canonicalization(e.to_string()))?,
            None => out.push_str("null"),
        }
        out.push(',');
        text(&mut out, "reason", &self.reason);
        out.push_str("\"referenceId\":");
        match &self.reference_id {
            Some(r) => crate::json::write_string(&mut out, r),
            None => out.push_str("null"),
        }
        out.push('}');
        Ok(out)
    }
}

/// A delta's `itemHash`: SHA-256 of [`DeltaContent::canonical_json`].
///
/// # Errors
/// As [`DeltaContent::canonical_json`].
pub fn item_hash(content: &DeltaContent) -> Result<Hash32, HashError> {
    Ok(Hash32::digest(content.canonical_json()?.as_bytes()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn item_hash_is_over_jcs_with_delta_as_string() {
        let content = DeltaContent {
            anchor_id: "anc_1".into(),
            customer_id: "cust_42".into(),
            delta: Amount::parse("-4.250").unwrap(),
            reason: "refund €".into(),
            reference_id: None,
            metadata: Some(crate::json::Value::from_serde(
                &serde_json::json!({"z": 1, "a": [1.5, "x", 1e21], "é": true}),
            )),
            declared_timestamp: "2026-11-22T04:56:40.123Z".into(),
            asset: Asset::Default,
            conditions: Conditions::default(),
        };
        assert_eq!(
            content.canonical_json().unwrap(),
            r#"{"anchorId":"anc_1","customerId":"cust_42","declaredTimestamp":"2026-11-22T04:56:40.123Z","delta":"-4.25","metadata":{"a":[1.5,"x",1e+21],"z":1,"é":true},"reason":"refund €","referenceId":null}"#
        );
        assert_eq!(
            item_hash(&content).unwrap(),
            Hash32::digest(content.canonical_json().unwrap().as_bytes())
        );
    }

    /// The canonical text as serde_json_canonicalizer writes it: the
    /// reference implementation the hand-written form must equal.
    fn reference_canonical_json(c: &DeltaContent, metadata: &Option<serde_json::Value>) -> String {
        let mut v = serde_json::json!({
            "anchorId": c.anchor_id,
            "customerId": c.customer_id,
            "delta": c.delta.to_string(),
            "reason": c.reason,
            "referenceId": c.reference_id,
            "metadata": metadata,
            "declaredTimestamp": c.declared_timestamp,
        });
        if !c.asset.is_default() {
            v["asset"] = serde_json::Value::String(c.asset.key());
        }
        if !c.conditions.is_empty() {
            let mut cond = serde_json::Map::new();
            if let Some(f) = c.conditions.balance_at_least {
                cond.insert("balanceAtLeast".into(), f.to_string().into());
            }
            if let Some(n) = c.conditions.expected_sequence {
                cond.insert("expectedSequence".into(), n.into());
            }
            v["conditions"] = serde_json::Value::Object(cond);
        }
        serde_json_canonicalizer::to_string(&v).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn canonical_json_equals_the_reference_jcs_implementation(
            texts in prop::collection::vec("\\PC{0,12}|[\\u{0}-\\u{40}]{0,6}", 4),
            with_ref in any::<bool>(),
            keys in prop::collection::vec("\\PC{0,6}", 0..5),
            numbers in prop::collection::vec(any::<f64>().prop_filter("finite", |f| f.is_finite()), 5),
            ints in prop::collection::vec(-(1i64 << 53)..(1i64 << 53), 5),
            delta in -1_000_000_000i64..1_000_000_000,
            floor in prop::option::of(-1_000_000i64..1_000_000),
            lock in prop::option::of(0u64..1_000_000_000),
        ) {
            let metadata = (!keys.is_empty()).then(|| {
                let mut m = serde_json::Map::new();
                for (i, k) in keys.iter().enumerate() {
                    m.insert(k.clone(), serde_json::json!([numbers[i], ints[i], texts[i % 4], {"n": null, "b": true}]));
                }
                serde_json::Value::Object(m)
            });
            let c = DeltaContent {
                anchor_id: texts[0].clone(),
                customer_id: texts[1].clone(),
                delta: Amount::parse(&format!("{delta}.5")).unwrap(),
                reason: texts[2].clone(),
                reference_id: with_ref.then(|| texts[3].clone()),
                metadata: metadata.as_ref().map(crate::json::Value::from_serde),
                declared_timestamp: "2026-11-22T04:56:40.123Z".into(),
                asset: if with_ref { Asset::Default } else { Asset::parse("asset", "USD/2").unwrap() },
                conditions: Conditions {
                    balance_at_least: floor.map(|f| Amount::parse(&format!("{f}.25")).unwrap()),
                    expected_sequence: lock,
                },
            };
            prop_assert_eq!(c.canonical_json().unwrap(), reference_canonical_json(&c, &metadata));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn any_field_change_changes_the_item_hash(reason in "\\PC{1,20}", other in "\\PC{1,20}") {
            prop_assume!(reason != other);
            let base = DeltaContent {
                anchor_id: "a".into(), customer_id: "c".into(), delta: Amount::parse("1").unwrap(),
                reason: reason.clone(), reference_id: Some("r".into()), metadata: None,
                declared_timestamp: "2026-01-01T00:00:00.000Z".into(),
                asset: Asset::Default,
                conditions: Conditions::default(),
            };
            let changed = DeltaContent { reason: other, ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&changed).unwrap());
            let no_ref = DeltaContent { reference_id: None, ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&no_ref).unwrap());
            // `5 USD/2` is not `5 CREDITS/0`, and neither is the default asset's 5.
            let usd = DeltaContent { asset: Asset::parse("asset", "USD/2").unwrap(), ..base.clone() };
            let credits = DeltaContent { asset: Asset::parse("asset", "CREDITS/0").unwrap(), ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&usd).unwrap());
            prop_assert_ne!(item_hash(&usd).unwrap(), item_hash(&credits).unwrap());
            // A floor or a lock is part of what was signed.
            let floor = Conditions { balance_at_least: Some(Amount::ZERO), expected_sequence: None };
            let lock = Conditions { balance_at_least: None, expected_sequence: Some(0) };
            let floored = DeltaContent { conditions: floor, ..base.clone() };
            let locked = DeltaContent { conditions: lock, ..base.clone() };
            prop_assert_ne!(item_hash(&base).unwrap(), item_hash(&floored).unwrap());
            prop_assert_ne!(item_hash(&floored).unwrap(), item_hash(&locked).unwrap());
        }
    }
}
