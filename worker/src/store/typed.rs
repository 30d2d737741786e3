//! Typed columns: the enums a TEXT column holds ([`text_enum!`], each
//! with its one `as_str` to bind and its one parse when a row is read) and
//! the amount columns' readers.

use bvs_core::amount::Amount;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

/// Declares an enum stored as one of a fixed set of TEXT values, with its
/// one `as_str` (how it is bound: `impl Bind`) and its one parse (serde,
/// when the row reader reads the row), so a stored status or kind is text
/// only in SQL.
///
/// ```ignore
/// text_enum! {
///     /// A delivery's state.
///     pub enum DeliveryStatus { Pending = "pending", Failed = "failed" }
/// }
/// ```
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
        $vis enum $name {
            $($(#[$variant_meta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// The stored text.
            #[allow(dead_code)]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl<'a> $crate::store::Bind<'a> for $name {
            fn arg(self) -> $crate::error::ApiResult<$crate::store::Arg<'a>> {
                Ok($crate::store::Arg::Text(self.as_str()))
            }
        }
    };
}
pub(crate) use text_enum;

text_enum! {
    /// The `status` of a delta or fact; the one place its SQL spelling is
    /// mapped (SQL constants compare with the same words).
    pub enum ItemStatus {
        Queued = "QUEUED",
        Verified = "VERIFIED",
        Failed = "FAILED",
    }
}

text_enum! {
    /// The `status` of a checkpoint: its root is fixed (QUEUED), then in the
    /// log (COMMITTED), or it can never be appended (FAILED).
    pub enum CheckpointStatus {
        Queued = "QUEUED",
        Committed = "COMMITTED",
        Failed = "FAILED",
    }
}

/// An amount column (canonical decimal TEXT), read into its type.
///
/// # Errors
/// A stored amount that does not parse.
pub fn amount<'de, D: Deserializer<'de>>(d: D) -> Result<Amount, D::Error> {
    let text = String::deserialize(d)?;
    Amount::from_db_text(&text)
        .map_err(|e| D::Error::custom(format!("stored amount {text:?}: {e}")))
}

/// A nullable amount column.
///
/// # Errors
/// A stored amount that does not parse.
pub fn opt_amount<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Amount>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| {
            Amount::from_db_text(&text)
                .map_err(|e| D::Error::custom(format!("stored amount {text:?}: {e}")))
        })
        .transpose()
}

/// A nullable `conditions` column (the RFC 8785 text of a delta's
/// conditions, `{"balanceAtLeast":"0"}`): none when NULL.
///
/// # Errors
/// Stored conditions that do not parse.
pub fn conditions<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<bvs_core::conditions::Conditions, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(bvs_core::conditions::Conditions::default()),
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| D::Error::custom(format!("stored conditions {text:?}: {e}"))),
    }
}
