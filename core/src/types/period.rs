//! A calendar month `YYYY-MM` (UTC): the period of checkpoints, receipts
//! and liabilities statements.

use crate::error::FieldError;
use crate::time::{civil_from_days, days_from_civil, days_in_month, DAY_MS};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A calendar month `YYYY-MM` (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Period {
    year: u16,
    month: u8,
}

impl Period {
    pub const FIELD: &'static str = "period";

    /// Any real month `YYYY-MM` (for filters).
    ///
    /// # Errors
    /// `period: must be YYYY-MM with a month from 01 to 12`
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let err = || FieldError::new(Self::FIELD, "must be YYYY-MM with a month from 01 to 12");
        let b = text.as_bytes();
        if b.len() != 7 || b[4] != b'-' {
            return Err(err());
        }
        let all_digits = b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit);
        if !all_digits {
            return Err(err());
        }
        let year = text
            .get(..4)
            .ok_or_else(err)?
            .parse::<u16>()
            .map_err(|_| err())?;
        let month = text
            .get(5..)
            .ok_or_else(err)?
            .parse::<u8>()
            .map_err(|_| err())?;
        if !(1..=12).contains(&month) {
            return Err(err());
        }
        Ok(Self { year, month })
    }

    /// A real month that has started by `now_ms` (checkpoint bodies).
    ///
    /// # Errors
    /// As [`Period::parse`], or `period: cannot be in the future`.
    pub fn parse_not_in_future(text: &str, now_ms: i64) -> Result<Self, FieldError> {
        let period = Self::parse(text)?;
        if period > Self::containing(now_ms) {
            return Err(FieldError::new(Self::FIELD, "cannot be in the future"));
        }
        Ok(period)
    }

    /// The month containing an instant (the default period is the current one).
    pub fn containing(unix_ms: i64) -> Self {
        let (year, month, _) = civil_from_days(unix_ms.div_euclid(DAY_MS));
        Self {
            year: u16::try_from(year.clamp(0, 9999)).unwrap_or(0),
            month: u8::try_from(month).unwrap_or(1),
        }
    }

    pub fn year(&self) -> u16 {
        self.year
    }

    pub fn month(&self) -> u8 {
        self.month
    }

    /// First millisecond of the month.
    pub fn start_ms(&self) -> i64 {
        days_from_civil(i64::from(self.year), u32::from(self.month), 1) * DAY_MS
    }

    /// First millisecond after the month (exclusive end).
    pub fn end_ms(&self) -> i64 {
        self.start_ms()
            + i64::from(days_in_month(i64::from(self.year), u32::from(self.month))) * DAY_MS
    }

    pub fn as_string(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl Serialize for Period {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Period {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Period::parse(&s).map_err(serde::de::Error::custom)
    }
}
