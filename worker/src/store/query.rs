//! Statements as values (issue 26): a [`Query`] is one statement's SQL and
//! its bound arguments. Table modules build them without a database; only
//! the gateway (`store::batch`, `first`, `all`, `run`, ...) prepares and
//! binds them, once per round trip. Pure: no worker or D1 type here.

use std::borrow::Cow;

use super::{Arg, D1_BOUND_PARAMS_MAX};
use crate::error::{ApiError, ApiResult};

/// A statement as a value: its SQL (a constant, or a [`ListSql`]
/// template's expansion) and its bound arguments, `?1` first.
#[derive(Clone)]
pub struct Query<'a> {
    pub(super) sql: Cow<'static, str>,
    pub(super) args: Vec<Arg<'a>>,
}

impl<'a> Query<'a> {
    pub fn new(sql: &'static str, args: impl IntoIterator<Item = Arg<'a>>) -> Self {
        Query {
            sql: Cow::Borrowed(sql),
            args: args.into_iter().collect(),
        }
    }
}

/// The highest `?N` of a statement (what its argument count must be). A
/// `const fn`, so `statements!`/`queries!` check every constant statement
/// against its arguments when the crate compiles.
pub const fn highest_placeholder(sql: &str) -> usize {
    let bytes = sql.as_bytes();
    let mut max = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'?' {
            let mut n = 0;
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                n = n * 10 + (bytes[i] - b'0') as usize;
                i += 1;
            }
            if n > max {
                max = n;
            }
        } else {
            i += 1;
        }
    }
    max
}

/// Where a [`ListSql`] template takes its run-time placeholder list.
const LIST_MARK: &str = "{list}";

/// A statement over a run-time list of rows: a constant template holding
/// `{list}` once, and the number of columns bound per row. `{list}` becomes
/// `?k, ?k+1, ...` (one column, for `IN (...)`) or `(?k, ?k+1), (...)`
/// (several, for `VALUES` and `IN (VALUES ...)`), numbered after the
/// statement's fixed leading parameters.
pub struct ListSql {
    pub sql: &'static str,
    pub cols: usize,
}

/// Numbered placeholders for `rows` rows of `cols` columns from `?start`.
pub(super) fn placeholders(start: usize, rows: usize, cols: usize) -> String {
    let numbers = |from: usize, n: usize| -> String {
        (from..from + n)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if cols == 1 {
        return numbers(start, rows);
    }
    (0..rows)
        .map(|r| format!("({})", numbers(start + r * cols, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one chunked-list helper, and the one place SQL text is built at run
/// time: statements of `list` over `rows`, as many rows per statement as
/// D1's parameter limit allows after the `fixed` leading arguments (bound
/// as `?1..?k` in every statement). `bind` pushes one row's `list.cols`
/// arguments.
///
/// # Errors
/// A row that cannot be bound.
pub fn chunked<'a, 'r, T>(
    list: &ListSql,
    fixed: &[Arg<'a>],
    rows: &'r [T],
    bind: impl Fn(&'r T, &mut Vec<Arg<'a>>) -> ApiResult<()>,
) -> ApiResult<Vec<Query<'a>>> {
    let per_statement = ((D1_BOUND_PARAMS_MAX - fixed.len()) / list.cols).max(1);
    let mut out = Vec::new();
    for chunk in rows.chunks(per_statement) {
        let list_text = placeholders(fixed.len() + 1, chunk.len(), list.cols);
        let sql = list.sql.replacen(LIST_MARK, &list_text, 1);
        let mut args: Vec<Arg<'a>> = fixed.to_vec();
        for row in chunk {
            bind(row, &mut args)?;
        }
        // A row bound with another number of arguments than `cols` would
        // shift every later row: refuse it here rather than in D1.
        if args.len() != fixed.len() + chunk.len() * list.cols {
            return Err(ApiError::internal(format!(
                "{} arguments bound for {} rows of {} columns",
                args.len() - fixed.len(),
                chunk.len(),
                list.cols
            )));
        }
        out.push(Query {
            sql: Cow::Owned(sql),
            args,
        });
    }
    Ok(out)
}

/// Binds one text value per row of a one-column [`ListSql`] (for [`chunked`]).
///
/// # Errors
/// None; the signature is [`chunked`]'s.
pub fn bind_text<'a, S: AsRef<str>>(text: &'a S, args: &mut Vec<Arg<'a>>) -> ApiResult<()> {
    args.push(Arg::Text(text.as_ref()));
    Ok(())
}

/// Asserts every query binds exactly its placeholders: its highest `?N`
/// is its number of arguments (a missing or extra argument is a bug D1
/// would only report at run time). For the table modules' unit tests of
/// their hand-written builders.
#[cfg(test)]
pub fn assert_binds(queries: &[Query<'_>]) {
    for q in queries {
        let highest = highest_placeholder(&q.sql);
        assert!(
            highest == q.args.len(),
            "{} arguments for placeholders up to ?{highest}: {}",
            q.args.len(),
            q.sql
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{highest_placeholder, placeholders};

    #[test]
    fn a_one_column_list_is_plain_and_rows_are_parenthesized_after_the_fixed_parameters() {
        assert_eq!(placeholders(2, 3, 1), "?2, ?3, ?4");
        assert_eq!(placeholders(1, 2, 3), "(?1, ?2, ?3), (?4, ?5, ?6)");
        assert_eq!(placeholders(2, 1, 2), "(?2, ?3)");
    }

    #[test]
    fn the_highest_placeholder_is_read_whatever_the_order() {
        assert_eq!(highest_placeholder("VALUES (1)"), 0);
        assert_eq!(
            highest_placeholder("WHERE a = ?2 AND b = ?12 OR c = ?1"),
            12
        );
    }
}
