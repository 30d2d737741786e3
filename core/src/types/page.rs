//! A page of a list: `limit` items after skipping `offset`, read from its
//! query parameters within the limits of `types`.

use super::{
    DERIVE_LIMIT_DEFAULT, DERIVE_LIMIT_MAX, DERIVE_LIMIT_MIN, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX,
    LIST_LIMIT_MIN, PAGE_OFFSET_MAX,
};
use crate::error::FieldError;
use serde::Serialize;

/// A page of a list: `limit` items after skipping `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Page {
    limit: u64,
    offset: u64,
}

fn parse_page_number(
    field: &str,
    text: Option<&str>,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, FieldError> {
    let Some(text) = text else {
        return Ok(default);
    };
    let err = || FieldError::new(field, format!("must be a whole number from {min} to {max}"));
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err());
    }
    let n: u64 = text.parse().map_err(|_| err())?;
    if n < min || n > max {
        return Err(err());
    }
    Ok(n)
}

impl Page {
    /// Derive: limit 1..=1000 (default 100), offset from 0.
    ///
    /// # Errors
    /// `limit: must be a whole number from 1 to 1000` or the same for offset.
    pub fn for_derive(limit: Option<&str>, offset: Option<&str>) -> Result<Self, FieldError> {
        Ok(Self {
            limit: parse_page_number(
                "limit",
                limit,
                DERIVE_LIMIT_DEFAULT,
                DERIVE_LIMIT_MIN,
                DERIVE_LIMIT_MAX,
            )?,
            offset: parse_page_number("offset", offset, 0, 0, PAGE_OFFSET_MAX)?,
        })
    }

    /// Lists (checkpoints, customers): limit 1..=100 (default 20), offset from 0.
    ///
    /// # Errors
    /// `limit: must be a whole number from 1 to 100` or the same for offset.
    pub fn for_list(limit: Option<&str>, offset: Option<&str>) -> Result<Self, FieldError> {
        Ok(Self {
            limit: parse_page_number(
                "limit",
                limit,
                LIST_LIMIT_DEFAULT,
                LIST_LIMIT_MIN,
                LIST_LIMIT_MAX,
            )?,
            offset: parse_page_number("offset", offset, 0, 0, PAGE_OFFSET_MAX)?,
        })
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }
}
