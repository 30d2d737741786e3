//! The validation error every parser of request input returns.

use std::fmt;

/// A rejected input field: which field (spelled as in the JSON body, query
/// or header of the spec) and which rule it broke. Its `Display` is the
/// message of a 400 answer: `customerId: must be 1 to 128 characters ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The same error for an element of an array field, e.g.
    /// `deltas[3].customerId` for item 3 of a batch.
    #[must_use]
    pub fn in_item(self, array_field: &str, index: usize) -> Self {
        Self {
            field: format!("{array_field}[{index}].{}", self.field),
            reason: self.reason,
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FieldError {}
