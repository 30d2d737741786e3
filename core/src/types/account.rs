//! What the dashboard and the API keys are made of: an environment, an
//! API key, an e-mail address, a password and a retention window.

use super::{
    char_count_in, API_KEY_ID_CHARS_MAX, API_KEY_ID_CHARS_MIN, API_KEY_SECRET_CHARS_MAX,
    API_KEY_SECRET_CHARS_MIN, EMAIL_CHARS_MAX, EMAIL_LOCAL_CHARS_MAX, PASSWORD_CHARS_MAX,
    PASSWORD_CHARS_MIN, RETENTION_DAYS_ALLOWED,
};
use crate::error::FieldError;
use crate::time::DAY_MS;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the two environments. Each has its own log, key and database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Env {
    Sandbox,
    Production,
}

impl Env {
    pub const ALL: [Env; 2] = [Env::Sandbox, Env::Production];

    /// `sandbox` / `production` (preferredEnvironment values).
    pub fn as_str(self) -> &'static str {
        match self {
            Env::Sandbox => "sandbox",
            Env::Production => "production",
        }
    }

    /// `testnet` / `mainnet` (environment values of contracts).
    pub fn contract_name(self) -> &'static str {
        match self {
            Env::Sandbox => "testnet",
            Env::Production => "mainnet",
        }
    }

    /// `test` / `live` (API key prefix and api-key creation body).
    pub fn key_prefix(self) -> &'static str {
        match self {
            Env::Sandbox => "test",
            Env::Production => "live",
        }
    }

    /// Any of the environment's three names: `sandbox`/`production` (log
    /// paths, profiles), `test`/`live` (API keys), `testnet`/`mainnet`
    /// (contracts). For places where the choice of vocabulary is ours, such
    /// as log paths: see docs/glossary.md.
    pub fn from_any_name(text: &str) -> Option<Env> {
        Env::ALL
            .into_iter()
            .find(|e| e.as_str() == text || e.key_prefix() == text || e.contract_name() == text)
    }

    /// # Errors
    /// `preferredEnvironment: must be sandbox or production`
    pub fn parse(field: &str, text: &str) -> Result<Env, FieldError> {
        Env::ALL
            .into_iter()
            .find(|e| e.as_str() == text)
            .ok_or_else(|| FieldError::new(field, "must be sandbox or production"))
    }

    /// # Errors
    /// `environment: must be testnet or mainnet`
    pub fn parse_contract_name(field: &str, text: &str) -> Result<Env, FieldError> {
        Env::ALL
            .into_iter()
            .find(|e| e.contract_name() == text)
            .ok_or_else(|| FieldError::new(field, "must be testnet or mainnet"))
    }

    /// # Errors
    /// `environment: must be test or live`
    pub fn parse_key_prefix(field: &str, text: &str) -> Result<Env, FieldError> {
        Env::ALL
            .into_iter()
            .find(|e| e.key_prefix() == text)
            .ok_or_else(|| FieldError::new(field, "must be test or live"))
    }
}

impl fmt::Display for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API key `pk_{test|live}_{id}.{secret}`. The secret never appears in
/// `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    env: Env,
    id: String,
    secret: String,
}

impl ApiKey {
    pub const FIELD: &'static str = "X-Api-Key";

    /// # Errors
    /// `X-Api-Key: must be pk_test_<id>.<secret> or pk_live_<id>.<secret> ...`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let err = || {
            FieldError::new(
                Self::FIELD,
                "must be pk_test_<id>.<secret> or pk_live_<id>.<secret> with letters and digits",
            )
        };
        let rest = text.strip_prefix("pk_").ok_or_else(err)?;
        let (prefix, rest) = rest.split_once('_').ok_or_else(err)?;
        let env = Env::parse_key_prefix(Self::FIELD, prefix).map_err(|_| err())?;
        let (id, secret) = rest.split_once('.').ok_or_else(err)?;
        let alnum = |s: &str, min: usize, max: usize| {
            s.len() >= min && s.len() <= max && s.bytes().all(|b| b.is_ascii_alphanumeric())
        };
        if !alnum(id, API_KEY_ID_CHARS_MIN, API_KEY_ID_CHARS_MAX)
            || !alnum(secret, API_KEY_SECRET_CHARS_MIN, API_KEY_SECRET_CHARS_MAX)
        {
            return Err(err());
        }
        Ok(Self {
            env,
            id: id.to_owned(),
            secret: secret.to_owned(),
        })
    }

    /// Assembles a key from freshly generated parts (randomness comes from
    /// the caller).
    ///
    /// # Errors
    /// If the parts break the same rules `parse` enforces.
    pub fn new(env: Env, id: &str, secret: &str) -> Result<Self, FieldError> {
        Self::parse(&format!("pk_{}_{id}.{secret}", env.key_prefix()))
    }

    pub fn env(&self) -> Env {
        self.env
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The full key text, to show once at creation.
    pub fn expose(&self) -> String {
        format!("pk_{}_{}.{}", self.env.key_prefix(), self.id, self.secret)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ApiKey(pk_{}_{}.<redacted>)",
            self.env.key_prefix(),
            self.id
        )
    }
}

/// An e-mail address, lowercased: `local@domain.tld`, no spaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);
string_newtype!(Email);

impl Email {
    pub const FIELD: &'static str = "email";

    /// # Errors
    /// `email: must be an address like name@example.com`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let err = || FieldError::new(Self::FIELD, "must be an address like name@example.com");
        let lower = text.trim().to_ascii_lowercase();
        if lower.is_empty() || lower.chars().count() > EMAIL_CHARS_MAX {
            return Err(err());
        }
        let (local, domain) = lower.rsplit_once('@').ok_or_else(err)?;
        let local_ok = !local.is_empty()
            && local.chars().count() <= EMAIL_LOCAL_CHARS_MAX
            && !local.contains('@')
            && !local
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '"');
        let labels: Vec<&str> = domain.split('.').collect();
        let domain_ok = labels.len() >= 2
            && labels.iter().all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if local_ok && domain_ok {
            Ok(Self(lower))
        } else {
            Err(err())
        }
    }
}

/// A new password: 8 to 32 characters with an uppercase letter, a lowercase
/// letter and a digit. Never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub const FIELD: &'static str = "newPassword";

    /// # Errors
    /// `<field>: must be 8 to 32 characters with at least one uppercase letter, one lowercase letter and one digit`
    pub fn parse(field: &str, text: &str) -> Result<Self, FieldError> {
        let ok = char_count_in(text, PASSWORD_CHARS_MIN, PASSWORD_CHARS_MAX)
            && text.chars().any(char::is_uppercase)
            && text.chars().any(char::is_lowercase)
            && text.chars().any(|c| c.is_ascii_digit());
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(FieldError::new(
                field,
                "must be 8 to 32 characters with at least one uppercase letter, one lowercase letter and one digit",
            ))
        }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// `dataRetentionDays`: `None` keeps raw data forever (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetentionDays(Option<u32>);

impl RetentionDays {
    pub const FIELD: &'static str = "dataRetentionDays";
    pub const FOREVER: RetentionDays = RetentionDays(None);

    /// Reads the JSON value of `dataRetentionDays`: null, 7, 30 or 90.
    ///
    /// # Errors
    /// `dataRetentionDays: must be null, 7, 30 or 90`
    pub fn parse(value: &serde_json::Value) -> Result<Self, FieldError> {
        let err = || FieldError::new(Self::FIELD, "must be null, 7, 30 or 90");
        match value {
            serde_json::Value::Null => Ok(Self(None)),
            serde_json::Value::Number(n) => {
                let days = n.as_u64().ok_or_else(err)?;
                Self::from_days(Some(days)).ok_or_else(err)
            }
            _ => Err(err()),
        }
    }

    /// From a stored column (NULL or days).
    pub fn from_days(days: Option<u64>) -> Option<Self> {
        match days {
            None => Some(Self(None)),
            Some(d) => RETENTION_DAYS_ALLOWED
                .into_iter()
                .find(|allowed| u64::from(*allowed) == d)
                .map(|d| Self(Some(d))),
        }
    }

    pub fn days(&self) -> Option<u32> {
        self.0
    }

    /// The instant before which raw data of verified items is purged, or
    /// `None` when it is kept forever.
    pub fn purge_before_ms(&self, now_ms: i64) -> Option<i64> {
        self.0.map(|d| now_ms - i64::from(d) * DAY_MS)
    }
}

impl Serialize for RetentionDays {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}
