//! Counterparty statements (issue 19).
