//! The published limits of a deployed Worker on Workers Paid (issue 42),
//! held in every DEV_MODE run: `wrangler dev` runs D1 as a local SQLite
//! file that accepts far more than D1 does, so a statement or an
//! invocation that would fail deployed passes every local test unless
//! something counts. The store's gateway checks each statement
//! ([`statement`]); `roundtrips` counts an invocation's queries and
//! subrequests and checks them here ([`invocation`]). Above a limit the
//! request (or queue batch, or cron run) fails loudly: a 500 whose message
//! names the limit, and the same line on the Worker's log.
//!
//! Figures from developers.cloudflare.com, as stored in April 2026
//! (docs/scaling.md, "Platform limits"). Never enforced outside DEV_MODE:
//! deployed, the platform enforces them itself.

use std::cell::Cell;

use crate::error::{ApiError, ErrorCode};

/// D1: queries per Worker invocation (Workers Paid). A batch's statements
/// count one each.
pub const D1_QUERIES_PER_INVOCATION: u64 = 1_000;
/// D1: bound parameters per query.
pub const D1_BOUND_PARAMS: usize = 100;
/// D1: bytes of one SQL statement's text.
pub const D1_STATEMENT_BYTES: usize = 100_000;
/// D1: bytes of one string or BLOB value (and of one row).
pub const D1_VALUE_BYTES: usize = 2_000_000;
/// Workers Paid: subrequests per invocation (D1 calls, Durable Object
/// calls, queue sends and fetches each count one).
pub const SUBREQUESTS_PER_INVOCATION: u64 = 10_000;

/// What this isolate's invocations are held to: `None` outside DEV_MODE.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Held {
    /// Queries per invocation (DEV_MODE `LIMIT_D1_QUERIES` may lower it,
    /// so a test can see the check fire on a real request).
    pub queries: u64,
    pub subrequests: u64,
}

thread_local! {
    static HELD: Cell<Option<Held>> = const { Cell::new(None) };
}

/// Sets the limits for this isolate's calls from now on (`App::new`, each
/// invocation): `None` unless DEV_MODE.
pub fn hold(held: Option<Held>) {
    HELD.with(|h| h.set(held));
}

/// The published limits, with a lower query limit if one is given.
pub fn published(queries: Option<u64>) -> Held {
    Held {
        queries: queries.map_or(D1_QUERIES_PER_INVOCATION, |q| {
            q.min(D1_QUERIES_PER_INVOCATION)
        }),
        subrequests: SUBREQUESTS_PER_INVOCATION,
    }
}

fn held() -> Option<Held> {
    HELD.with(Cell::get)
}

/// One statement's shape, as the gateway binds it.
pub struct Shape {
    pub sql_bytes: usize,
    pub params: usize,
    /// The longest bound text or BLOB value, in bytes.
    pub largest_value: usize,
}

/// # Errors
/// A statement a deployed D1 would refuse (only while limits are held).
pub fn statement(shape: &Shape) -> Result<(), ApiError> {
    if held().is_none() {
        return Ok(());
    }
    statement_within(shape).map_err(breach)
}

/// # Errors
/// An invocation past its queries or subrequests (only while held).
pub fn invocation(queries: u64, subrequests: u64) -> Result<(), ApiError> {
    match held() {
        Some(h) => invocation_within(h, queries, subrequests).map_err(breach),
        None => Ok(()),
    }
}

fn statement_within(s: &Shape) -> Result<(), String> {
    if s.params > D1_BOUND_PARAMS {
        return Err(format!(
            "a statement binds {} parameters; D1 allows {D1_BOUND_PARAMS}",
            s.params
        ));
    }
    if s.sql_bytes > D1_STATEMENT_BYTES {
        return Err(format!(
            "a statement's SQL is {} bytes; D1 allows {D1_STATEMENT_BYTES}",
            s.sql_bytes
        ));
    }
    if s.largest_value > D1_VALUE_BYTES {
        return Err(format!(
            "a bound value is {} bytes; D1 allows {D1_VALUE_BYTES} per value and row",
            s.largest_value
        ));
    }
    Ok(())
}

fn invocation_within(h: Held, queries: u64, subrequests: u64) -> Result<(), String> {
    if queries > h.queries {
        return Err(format!(
            "this invocation's D1 query {queries} is past {} queries per invocation",
            h.queries
        ));
    }
    if subrequests > h.subrequests {
        return Err(format!(
            "this invocation's subrequest {subrequests} is past {} subrequests per invocation",
            h.subrequests
        ));
    }
    Ok(())
}

fn breach(what: String) -> ApiError {
    let message = format!("DEV_MODE: a deployed Worker would fail here: {what} (Workers Paid)");
    worker::console_error!("{message}");
    ApiError::coded(ErrorCode::InternalError, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(sql_bytes: usize, params: usize, largest_value: usize) -> Shape {
        Shape {
            sql_bytes,
            params,
            largest_value,
        }
    }

    #[test]
    fn a_statement_at_each_limit_passes_and_one_past_it_fails() {
        assert!(
            statement_within(&shape(D1_STATEMENT_BYTES, D1_BOUND_PARAMS, D1_VALUE_BYTES)).is_ok()
        );
        let params = statement_within(&shape(10, D1_BOUND_PARAMS + 1, 0));
        assert!(params.is_err_and(|e| e.contains("101 parameters")));
        let sql = statement_within(&shape(D1_STATEMENT_BYTES + 1, 1, 0));
        assert!(sql.is_err_and(|e| e.contains("SQL is 100001 bytes")));
        let value = statement_within(&shape(10, 1, D1_VALUE_BYTES + 1));
        assert!(value.is_err_and(|e| e.contains("2000001 bytes")));
    }

    #[test]
    fn an_invocation_fails_at_the_first_query_or_subrequest_past_its_limit() {
        let h = published(None);
        assert!(invocation_within(h, 1_000, 10_000).is_ok());
        assert!(invocation_within(h, 1_001, 1_001).is_err_and(|e| e.contains("query 1001")));
        assert!(invocation_within(h, 10, 10_001).is_err_and(|e| e.contains("subrequest 10001")));
        let lowered = published(Some(3));
        assert!(invocation_within(lowered, 4, 4).is_err());
        assert_eq!(published(Some(5_000)).queries, D1_QUERIES_PER_INVOCATION);
    }

    #[test]
    fn nothing_is_held_outside_dev_mode() {
        hold(None);
        assert!(statement(&shape(usize::MAX, usize::MAX, usize::MAX)).is_ok());
        assert!(invocation(u64::MAX, u64::MAX).is_ok());
    }
}
