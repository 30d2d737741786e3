//! Validated request inputs. Each type has private fields and a `parse`
//! that returns a [`FieldError`] naming the JSON field and the rule, so
//! handlers pass these types around, never raw strings.

use crate::error::FieldError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest customerId, in characters. // spec: Limits, "customerId length"
pub const CUSTOMER_ID_CHARS_MAX: usize = 128;
/// Longest reason, in characters. // spec: Limits, "reason length"
pub const REASON_CHARS_MAX: usize = 500;
/// Longest referenceId, in characters. // spec: silent; DESIGN: a correlation id, same bound as customerId
pub const REFERENCE_ID_CHARS_MAX: usize = 128;
/// Largest metadata object, serialized compactly, in bytes. // spec: silent ("Size limits ... not shown"); 16 KiB keeps a delta row small
pub const METADATA_BYTES_MAX: usize = 16 * 1024;
/// Deepest nesting of metadata objects and arrays (the top object is depth 1). // spec: silent; bounds work on hostile input
pub const METADATA_DEPTH_MAX: usize = 16;
/// Largest integer magnitude in metadata: 2^53, the largest an RFC 8785
/// (I-JSON) canonicalizer keeps exact. // DESIGN: itemHash over JCS
pub const METADATA_INTEGER_ABS_MAX: u64 = 1 << 53;
/// Longest Idempotency-Key header, in characters. // spec: issue 3 "IdempotencyKey (≤255 chars)"
pub const IDEMPOTENCY_KEY_CHARS_MAX: usize = 255;
/// Bounds of the `{id}` part of an API key, in characters. // spec: silent; keys are minted by us
pub const API_KEY_ID_CHARS_MIN: usize = 4;
pub const API_KEY_ID_CHARS_MAX: usize = 64;
/// Bounds of the `{secret}` part of an API key, in characters; at least 16
/// alphanumerics is ~95 bits. // spec: silent; keys are minted by us
pub const API_KEY_SECRET_CHARS_MIN: usize = 16;
pub const API_KEY_SECRET_CHARS_MAX: usize = 128;
/// Longest e-mail address, in characters. // RFC 5321 path limit
pub const EMAIL_CHARS_MAX: usize = 254;
/// Longest local part of an e-mail address, in characters. // RFC 5321
pub const EMAIL_LOCAL_CHARS_MAX: usize = 64;
/// Password length bounds, in characters. // spec: Limits, "Password length"
pub const PASSWORD_CHARS_MIN: usize = 8;
pub const PASSWORD_CHARS_MAX: usize = 32;
/// Derive page size. // spec: Limits, "derive limit" 1 to 1000, default 100
pub const DERIVE_LIMIT_MIN: u64 = 1;
pub const DERIVE_LIMIT_MAX: u64 = 1000;
pub const DERIVE_LIMIT_DEFAULT: u64 = 100;
/// List page size. // spec: Limits, "Checkpoint list limit" default 20, max 100
pub const LIST_LIMIT_MIN: u64 = 1;
pub const LIST_LIMIT_MAX: u64 = 100;
pub const LIST_LIMIT_DEFAULT: u64 = 20;
/// Largest offset of any page; beyond it a caller should resume from a
/// checkpoint. // spec: silent; keeps offsets exact as JS numbers and in SQL
pub const PAGE_OFFSET_MAX: u64 = 1_000_000_000;
/// Retention windows that may be chosen, in days. // spec: Limits, "Retention windows"
pub const RETENTION_DAYS_ALLOWED: [u32; 3] = [7, 30, 90];
/// Deltas per batch emit. // spec: Limits, "Batch size"
pub const BATCH_DELTAS_MAX: usize = 100;
/// Deltas from which derive answers with a `_hint`. // spec: Limits, "Derive hint threshold"
pub const DERIVE_HINT_DELTAS_MIN: u64 = 1_000;
/// Deltas from which derive requires a startingCheckpoint. // spec: Limits, "Derive checkpoint requirement"
pub const DERIVE_CHECKPOINT_REQUIRED_DELTAS_MIN: u64 = 50_000;

fn char_count_in(text: &str, min: usize, max: usize) -> bool {
    // Counting stops early so a megabyte string costs no more than max+1 steps.
    let n = text.chars().take(max + 1).count();
    n >= min && n <= max
}

macro_rules! string_newtype {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn into_string(self) -> String {
                self.0
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
    };
}

// Below the macro, which they use too.
mod account;
mod asset;
mod page;
mod period;
pub use account::{ApiKey, Email, Env, Password, RetentionDays};
pub use asset::{Asset, ASSET_CODE_CHARS_MAX, ASSET_PRECISION_MAX};
pub use page::Page;
pub use period::Period;

/// The caller's customer identifier: 1 to 128 of `A-Z a-z 0-9 _ - . :`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CustomerId(String);
string_newtype!(CustomerId);

impl CustomerId {
    pub const FIELD: &'static str = "customerId";

    /// # Errors
    /// `customerId: must be 1 to 128 characters of letters, digits, _ - . :`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let ok = !text.is_empty()
            && text.len() <= CUSTOMER_ID_CHARS_MAX
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(FieldError::new(
                Self::FIELD,
                "must be 1 to 128 characters of letters, digits, _ - . :",
            ))
        }
    }

    /// A customer id for a new delta (emit, batch): as [`CustomerId::parse`],
    /// and not [`WHOLE_TENANT`], which names the whole-tenant checkpoint
    /// in checkpoint requests and answers (spec: Checkpoint,
    /// `customerId`), so no ledger can be mistaken for it.
    ///
    /// # Errors
    /// As [`CustomerId::parse`]; `customerId: must not be "all"` for it.
    pub fn parse_new(text: &str) -> Result<Self, FieldError> {
        let id = Self::parse(text)?;
        if id.0 == WHOLE_TENANT {
            return Err(FieldError::new(
                Self::FIELD,
                "must not be \"all\": it names the whole-tenant checkpoint",
            ));
        }
        Ok(id)
    }

    /// Whether this is [`WHOLE_TENANT`] (a ledger of that name can only
    /// be one created before it was refused).
    pub fn is_whole_tenant(&self) -> bool {
        self.0 == WHOLE_TENANT
    }
}

/// The `customerId` of a checkpoint over every customer of a tenant.
/// // spec: Checkpoint, `customerId` ("`all` when all customers are
/// checkpointed"); refused as a customer id at emit (issue 25).
pub const WHOLE_TENANT: &str = "all";

/// Why a delta was recorded: required, 1 to 500 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason(String);
string_newtype!(Reason);

impl Reason {
    pub const FIELD: &'static str = "reason";

    /// # Errors
    /// `reason: must be 1 to 500 characters`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        if char_count_in(text, 1, REASON_CHARS_MAX) && !text.trim().is_empty() {
            Ok(Self(text.to_owned()))
        } else {
            Err(FieldError::new(
                Self::FIELD,
                "must be 1 to 500 characters, not only spaces",
            ))
        }
    }
}

/// The caller's correlation id: 1 to 128 characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceId(String);
string_newtype!(ReferenceId);

impl ReferenceId {
    pub const FIELD: &'static str = "referenceId";

    /// # Errors
    /// `referenceId: must be 1 to 128 characters without control characters`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        if char_count_in(text, 1, REFERENCE_ID_CHARS_MAX) && !text.chars().any(char::is_control) {
            Ok(Self(text.to_owned()))
        } else {
            Err(FieldError::new(
                Self::FIELD,
                "must be 1 to 128 characters without control characters",
            ))
        }
    }
}

/// Arbitrary key-value context: a JSON object of bounded size and depth
/// whose numbers survive RFC 8785 canonicalization exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata(serde_json::Map<String, serde_json::Value>);

impl Metadata {
    pub const FIELD: &'static str = "metadata";

    /// # Errors
    /// A `metadata:` error naming the broken rule (object, size, depth,
    /// integer range).
    pub fn parse(value: &serde_json::Value) -> Result<Self, FieldError> {
        let serde_json::Value::Object(map) = value else {
            return Err(FieldError::new(Self::FIELD, "must be a JSON object"));
        };
        // Iterative walk: depth and numbers, without recursion.
        let mut stack: Vec<(&serde_json::Value, usize)> = vec![(value, 1)];
        while let Some((v, depth)) = stack.pop() {
            match v {
                serde_json::Value::Object(m) => {
                    if depth > METADATA_DEPTH_MAX {
                        return Err(FieldError::new(
                            Self::FIELD,
                            "must be nested at most 16 levels deep",
                        ));
                    }
                    stack.extend(m.values().map(|c| (c, depth + 1)));
                }
                serde_json::Value::Array(a) => {
                    if depth > METADATA_DEPTH_MAX {
                        return Err(FieldError::new(
                            Self::FIELD,
                            "must be nested at most 16 levels deep",
                        ));
                    }
                    stack.extend(a.iter().map(|c| (c, depth + 1)));
                }
                serde_json::Value::Number(n) => {
                    let exact = n
                        .as_u64()
                        .map(|u| u <= METADATA_INTEGER_ABS_MAX)
                        .or_else(|| {
                            n.as_i64()
                                .map(|i| i.unsigned_abs() <= METADATA_INTEGER_ABS_MAX)
                        })
                        .unwrap_or(true);
                    if !exact {
                        return Err(FieldError::new(
                            Self::FIELD,
                            "integers must be within ±9007199254740992; send larger ones as strings",
                        ));
                    }
                }
                _ => {}
            }
        }
        let size = serde_json::to_vec(value)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > METADATA_BYTES_MAX {
            return Err(FieldError::new(
                Self::FIELD,
                "must be at most 16384 bytes as JSON",
            ));
        }
        Ok(Self(map.clone()))
    }

    pub fn as_map(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.0
    }

    pub fn to_value(&self) -> serde_json::Value {
        serde_json::Value::Object(self.0.clone())
    }
}

/// A stored customer id is parsed once, when its row is read: text that
/// is not a valid id fails there, as a malformed stored hash does. (Here,
/// below the code the browser verifier holds, so its panic locations keep
/// their line numbers and the served module stays byte for byte the same.)
impl<'de> Deserialize<'de> for CustomerId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CustomerId::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The `Idempotency-Key` header: 1 to 255 printable ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);
string_newtype!(IdempotencyKey);

impl IdempotencyKey {
    pub const FIELD: &'static str = "Idempotency-Key";

    /// # Errors
    /// `Idempotency-Key: must be 1 to 255 printable ASCII characters`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let ok = !text.is_empty()
            && text.len() <= IDEMPOTENCY_KEY_CHARS_MAX
            && text.bytes().all(|b| (0x20..=0x7e).contains(&b))
            && text.trim() == text;
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(FieldError::new(
                Self::FIELD,
                "must be 1 to 255 printable ASCII characters without leading or trailing spaces",
            ))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::time::DAY_MS;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn customer_id_rule() {
        assert!(CustomerId::parse("cust_1-a.b:c").is_ok());
        assert!(CustomerId::parse(&"a".repeat(128)).is_ok());
        for bad in ["", "a b", "ü", "a/b", &"a".repeat(129)] {
            assert_eq!(
                CustomerId::parse(bad).unwrap_err().to_string(),
                "customerId: must be 1 to 128 characters of letters, digits, _ - . :"
            );
        }
    }

    #[test]
    fn a_stored_customer_id_is_parsed_when_read() {
        let id: CustomerId = serde_json::from_str("\"cust_1\"").unwrap();
        assert_eq!(id.as_str(), "cust_1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"cust_1\"");
        let e = serde_json::from_str::<CustomerId>("\"a b\"").unwrap_err();
        assert!(e.to_string().contains("customerId"), "{e}");
    }

    #[test]
    fn all_is_no_new_customer_id() {
        assert!(
            CustomerId::parse("all").is_ok(),
            "an old ledger is still read"
        );
        let e = CustomerId::parse_new("all").unwrap_err();
        assert_eq!(e.field, "customerId");
        assert!(e.reason.contains("whole-tenant"), "{e}");
        assert!(CustomerId::parse_new("All").is_ok());
        assert!(CustomerId::parse_new("all2").is_ok());
        assert!(CustomerId::parse_new("").is_err());
    }

    #[test]
    fn reason_and_reference_rules() {
        assert!(Reason::parse(&"é".repeat(500)).is_ok());
        assert!(Reason::parse(&"é".repeat(501)).is_err());
        assert!(Reason::parse("").is_err());
        assert!(Reason::parse("   ").is_err());
        assert!(ReferenceId::parse("inv-42").is_ok());
        assert!(ReferenceId::parse("a\nb").is_err());
        assert_eq!(
            ReferenceId::parse(&"x".repeat(129)).unwrap_err().field,
            "referenceId"
        );
    }

    #[test]
    fn metadata_rules() {
        assert!(Metadata::parse(&json!({"a": 1, "b": [1, {"c": null}], "d": 0.5})).is_ok());
        assert_eq!(
            Metadata::parse(&json!([1])).unwrap_err().reason,
            "must be a JSON object"
        );
        assert_eq!(Metadata::parse(&json!("x")).unwrap_err().field, "metadata");
        assert!(Metadata::parse(&json!({"big": 9_007_199_254_740_993u64})).is_err());
        assert!(Metadata::parse(&json!({"big": -9_007_199_254_740_992i64})).is_ok());
        assert!(Metadata::parse(&json!({"s": "x".repeat(METADATA_BYTES_MAX)})).is_err());
        let mut deep = json!(1);
        for _ in 0..METADATA_DEPTH_MAX {
            deep = json!({ "k": deep });
        }
        assert!(Metadata::parse(&deep).is_ok());
        assert!(Metadata::parse(&json!({ "k": deep })).is_err());
    }

    #[test]
    fn period_rules() {
        let now = crate::time::parse_iso_ms("2026-11-22T04:56:40Z").unwrap();
        let p = Period::parse_not_in_future("2026-11", now).unwrap();
        assert_eq!(p.to_string(), "2026-11");
        assert_eq!(Period::containing(now), p);
        assert_eq!(
            crate::time::format_iso_ms(p.start_ms()),
            "2026-11-01T00:00:00.000Z"
        );
        assert_eq!(
            crate::time::format_iso_ms(p.end_ms()),
            "2026-12-01T00:00:00.000Z"
        );
        assert_eq!(
            Period::parse_not_in_future("2026-12", now)
                .unwrap_err()
                .to_string(),
            "period: cannot be in the future"
        );
        for bad in [
            "2026-13",
            "2026-00",
            "2026-1",
            "26-11",
            "2026/11",
            "2026-11-01",
            "abcd-ef",
            "+026-11",
        ] {
            assert!(Period::parse(bad).is_err(), "{bad}");
        }
        let feb = Period::parse("2024-02").unwrap();
        assert_eq!(feb.end_ms() - feb.start_ms(), 29 * DAY_MS);
    }

    #[test]
    fn api_key_parses_env_id_secret() {
        let key = ApiKey::parse("pk_live_ab12CD.0123456789abcdefXYZ").unwrap();
        assert_eq!(key.env(), Env::Production);
        assert_eq!(key.id(), "ab12CD");
        assert_eq!(key.secret(), "0123456789abcdefXYZ");
        assert!(!format!("{key:?}").contains("0123456789"));
        assert_eq!(
            ApiKey::parse("pk_test_abcd.0123456789abcdef")
                .unwrap()
                .env(),
            Env::Sandbox
        );
        for bad in [
            "",
            "pk_prod_abcd.0123456789abcdef",
            "sk_test_abcd.0123456789abcdef",
            "pk_test_abcd0123456789abcdef",
            "pk_test_ab.0123456789abcdef",
            "pk_test_abcd.short",
            "pk_test_ab-cd.0123456789abcdef",
            "pk_test_abcd.0123456789abcdef ",
        ] {
            assert_eq!(ApiKey::parse(bad).unwrap_err().field, "X-Api-Key", "{bad}");
        }
    }

    #[test]
    fn env_names() {
        assert_eq!(Env::Sandbox.contract_name(), "testnet");
        assert_eq!(Env::Production.key_prefix(), "live");
        assert_eq!(
            Env::parse("preferredEnvironment", "production").unwrap(),
            Env::Production
        );
        assert_eq!(
            Env::parse_contract_name("environment", "mainnet").unwrap(),
            Env::Production
        );
        assert!(Env::parse("preferredEnvironment", "prod").is_err());
        assert_eq!(serde_json::to_string(&Env::Sandbox).unwrap(), "\"sandbox\"");
    }

    #[test]
    fn env_any_name_accepts_the_three_vocabularies() {
        for (name, env) in [
            ("sandbox", Env::Sandbox),
            ("test", Env::Sandbox),
            ("testnet", Env::Sandbox),
            ("production", Env::Production),
            ("live", Env::Production),
            ("mainnet", Env::Production),
        ] {
            assert_eq!(Env::from_any_name(name), Some(env), "{name}");
        }
        for bad in ["", "prod", "Sandbox", "LIVE", "main"] {
            assert_eq!(Env::from_any_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn email_password_idempotency() {
        assert_eq!(
            Email::parse(" Ann@Example.COM ").unwrap().as_str(),
            "ann@example.com"
        );
        for bad in [
            "",
            "ann",
            "ann@",
            "@x.com",
            "ann@x",
            "a b@x.com",
            "ann@-x.com",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
        assert!(Password::parse("newPassword", "Abcdefg1").is_ok());
        for bad in [
            "Abcdef1",
            "abcdefg1",
            "ABCDEFG1",
            "Abcdefgh",
            &format!("Ab1{}", "x".repeat(30)),
        ] {
            assert_eq!(
                Password::parse("newPassword", bad).unwrap_err().field,
                "newPassword"
            );
        }
        assert!(IdempotencyKey::parse("k-1").is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse("é").is_err());
        assert!(IdempotencyKey::parse("").is_err());
    }

    #[test]
    fn retention_and_pages() {
        assert_eq!(
            RetentionDays::parse(&json!(null)).unwrap(),
            RetentionDays::FOREVER
        );
        assert_eq!(RetentionDays::parse(&json!(30)).unwrap().days(), Some(30));
        for bad in [json!(1), json!("30"), json!(30.5), json!(-7)] {
            assert_eq!(
                RetentionDays::parse(&bad).unwrap_err().field,
                "dataRetentionDays"
            );
        }
        let p = Page::for_derive(None, None).unwrap();
        assert_eq!((p.limit(), p.offset()), (100, 0));
        assert_eq!(
            Page::for_derive(Some("1000"), Some("5")).unwrap().limit(),
            1000
        );
        assert_eq!(
            Page::for_derive(Some("1001"), None)
                .unwrap_err()
                .to_string(),
            "limit: must be a whole number from 1 to 1000"
        );
        assert!(Page::for_derive(Some("0"), None).is_err());
        assert!(Page::for_derive(Some("-1"), None).is_err());
        assert!(Page::for_derive(None, Some("x")).is_err());
        let l = Page::for_list(None, None).unwrap();
        assert_eq!((l.limit(), l.offset()), (20, 0));
        assert!(Page::for_list(Some("101"), None).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn valid_customer_ids_round_trip(s in "[A-Za-z0-9_.:-]{1,128}") {
            let id = CustomerId::parse(&s).unwrap();
            prop_assert_eq!(id.as_str(), s.as_str());
        }

        #[test]
        fn parsers_never_panic(s in "\\PC{0,80}") {
            let _ = CustomerId::parse(&s);
            let _ = Reason::parse(&s);
            let _ = Period::parse(&s);
            let _ = ApiKey::parse(&s);
            let _ = Email::parse(&s);
            let _ = Password::parse("newPassword", &s);
            let _ = IdempotencyKey::parse(&s);
            let _ = Page::for_derive(Some(&s), Some(&s));
        }
    }
}
