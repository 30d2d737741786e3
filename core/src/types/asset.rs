//! A balance's unit (issue 43, docs/balance.md "Assets"): a code and its
//! precision, written `CODE/p` (`USD/2`, `CREDITS/0`), or the tenant's
//! default asset, today's unnamed balance (18 decimal places, written
//! nowhere: its items hash as they always did).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::amount::{Amount, AMOUNT_FRACTION_DIGITS};
use crate::error::FieldError;

/// Longest asset code, in characters. // issue 43: `CODE` 1–32 of A–Z, 0–9, `_`
pub const ASSET_CODE_CHARS_MAX: usize = 32;
/// Largest precision an asset may declare. // issue 43: `p` 0–18
pub const ASSET_PRECISION_MAX: u32 = AMOUNT_FRACTION_DIGITS;

/// The unit of a balance: the tenant's default asset, or a named one.
/// Ordered so that the default comes first, then names by code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Asset {
    #[default]
    Default,
    Named {
        code: String,
        precision: u32,
    },
}

impl Asset {
    /// Parses `CODE/p` for the field `field`.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field` and the form.
    pub fn parse(field: &str, text: &str) -> Result<Asset, FieldError> {
        let rule = || {
            FieldError::new(
                field,
                "must be CODE/p: a code of 1 to 32 of A-Z, 0-9 and _, a slash, and its precision from 0 to 18 (USD/2, CREDITS/0)",
            )
        };
        let (code, p) = text.split_once('/').ok_or_else(rule)?;
        let code_ok = !code.is_empty()
            && code.len() <= ASSET_CODE_CHARS_MAX
            && code
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        let p_ok = !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit());
        if !code_ok || !p_ok || (p.len() == 2 && p.starts_with('0')) {
            return Err(rule());
        }
        let precision: u32 = p.parse().map_err(|_| rule())?;
        if precision > ASSET_PRECISION_MAX {
            return Err(rule());
        }
        Ok(Asset::Named {
            code: code.to_string(),
            precision,
        })
    }

    /// Reads the stored key: `""` is the default asset, anything else
    /// `CODE/p`.
    ///
    /// # Errors
    /// A stored key that does not parse (a corrupt row).
    pub fn from_key(key: &str) -> Result<Asset, FieldError> {
        if key.is_empty() {
            Ok(Asset::Default)
        } else {
            Asset::parse("asset", key)
        }
    }

    /// The stored key: `""` for the default asset, else `CODE/p`.
    pub fn key(&self) -> String {
        self.to_string()
    }

    pub fn is_default(&self) -> bool {
        matches!(self, Asset::Default)
    }

    /// The code of a named asset.
    pub fn code(&self) -> Option<&str> {
        match self {
            Asset::Default => None,
            Asset::Named { code, .. } => Some(code),
        }
    }

    /// Decimal places an amount of this asset may have (18 for the
    /// default asset, as every amount).
    pub fn precision(&self) -> u32 {
        match self {
            Asset::Default => AMOUNT_FRACTION_DIGITS,
            Asset::Named { precision, .. } => *precision,
        }
    }

    /// Whether `amount` has no more fractional digits than the precision.
    pub fn fits(&self, amount: Amount) -> bool {
        let step = 10i128.pow(AMOUNT_FRACTION_DIGITS - self.precision());
        amount.to_units() % step == 0
    }

    /// `amount` checked against the precision for `field`.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field` and the precision.
    pub fn check(&self, field: &str, amount: Amount) -> Result<(), FieldError> {
        if self.fits(amount) {
            Ok(())
        } else {
            Err(FieldError::new(
                field,
                format!(
                    "must have at most {} decimal places for asset {self}",
                    self.precision()
                ),
            ))
        }
    }
}

impl fmt::Display for Asset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Asset::Default => Ok(()),
            Asset::Named { code, precision } => write!(f, "{code}/{precision}"),
        }
    }
}

impl Serialize for Asset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.key())
    }
}

impl<'de> Deserialize<'de> for Asset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Asset, D::Error> {
        let key = String::deserialize(d)?;
        Asset::from_key(&key).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_code_and_precision() {
        let usd = Asset::parse("asset", "USD/2").unwrap();
        assert_eq!(usd.to_string(), "USD/2");
        assert_eq!(usd.precision(), 2);
        assert_eq!(usd.code(), Some("USD"));
        assert_eq!(Asset::parse("asset", "CREDITS_1/0").unwrap().precision(), 0);
        assert_eq!(Asset::parse("asset", "A/18").unwrap().precision(), 18);
        for bad in [
            "",
            "USD",
            "usd/2",
            "USD/",
            "/2",
            "USD/19",
            "USD/02",
            "USD/-1",
            "USD/2/3",
            "U SD/2",
            "ÜSD/2",
            "USD/+2",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456/2",
        ] {
            let e = Asset::parse("asset", bad).unwrap_err();
            assert_eq!(e.field, "asset", "{bad}");
        }
        assert!(Asset::parse("asset", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345/2").is_ok());
    }

    #[test]
    fn keys_round_trip_and_default_is_empty() {
        assert_eq!(Asset::from_key("").unwrap(), Asset::Default);
        assert_eq!(Asset::Default.key(), "");
        let a = Asset::parse("asset", "CREDITS/0").unwrap();
        assert_eq!(Asset::from_key(&a.key()).unwrap(), a);
        assert!(Asset::Default < a);
    }

    #[test]
    fn precision_bounds_amounts() {
        let usd = Asset::parse("asset", "USD/2").unwrap();
        assert!(usd.fits(Amount::parse("1.25").unwrap()));
        assert!(usd.fits(Amount::parse("-3").unwrap()));
        assert!(!usd.fits(Amount::parse("1.255").unwrap()));
        let e = usd
            .check("delta", Amount::parse("0.001").unwrap())
            .unwrap_err();
        assert_eq!(e.field, "delta");
        let credits = Asset::parse("asset", "CREDITS/0").unwrap();
        assert!(!credits.fits(Amount::parse("0.5").unwrap()));
        assert!(Asset::Default.fits(Amount::parse("0.000000000000000001").unwrap()));
    }
}
