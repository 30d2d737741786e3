//! All SQL of the service lives under this module, one file per table or
//! concern, as constants with numbered placeholders, bound and read into row
//! structs. The only SQL text built at run time is a [`ListSql`] template's
//! placeholder list, by [`chunked`]. Multi-statement writes go through
//! `D1Database::batch`, which is atomic.
//!
//! Control database: `accounts`, `contracts`, `keys`, `idempotency`,
//! `webhooks`, `dev`. Ledger databases (one per environment): `log`
//! (stored hashes, leaves, tree heads), `submissions`, `deltas`, `ledgers`
//! (ledgers and their windows), `facts`, `checkpoints`, `receipts`,
//! `events` (the outbox). `retention` purges both.

pub mod accounts;
pub mod agreements;
pub mod checkpoints;
pub mod contracts;
pub mod deltas;
pub mod dev;
pub mod events;
pub mod facts;
pub mod idempotency;
pub mod keys;
pub mod ledgers;
pub mod log;
pub mod mail;
pub mod meters;
pub mod receipts;
pub mod retention;
pub mod roots;
pub mod submissions;
pub mod webhooks;

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use crate::error::{ApiError, ApiResult};

/// D1 allows at most 100 bound parameters per statement.
pub const D1_BOUND_PARAMS_MAX: usize = 100;

/// A bindable value. D1 integers pass through JS numbers: callers store
/// amounts as canonical decimal TEXT and keep integers below 2^53.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

impl From<&Arg<'_>> for JsValue {
    fn from(a: &Arg<'_>) -> Self {
        match a {
            Arg::Text(s) => JsValue::from_str(s),
            // Exact below 2^53, which every integer we store is.
            #[allow(clippy::cast_precision_loss)]
            Arg::Int(i) => JsValue::from_f64(*i as f64),
            Arg::Null => JsValue::NULL,
        }
    }
}

/// A value bound as a statement argument: text, an integer (every one we
/// bind is far below 2^53) or, for `Option`, NULL.
pub trait Bind<'a> {
    /// # Errors
    /// An integer above `i64::MAX` (never a real row) is an internal error.
    fn arg(self) -> ApiResult<Arg<'a>>;
}

impl<'a> Bind<'a> for Arg<'a> {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(self)
    }
}

impl<'a> Bind<'a> for &'a str {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self))
    }
}

impl<'a> Bind<'a> for &'a String {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self))
    }
}

impl Bind<'_> for u64 {
    fn arg(self) -> ApiResult<Arg<'static>> {
        int(self)
    }
}

impl Bind<'_> for u32 {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Int(i64::from(self)))
    }
}

impl Bind<'_> for u16 {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Int(i64::from(self)))
    }
}

impl<'a, T: Bind<'a>> Bind<'a> for Option<T> {
    fn arg(self) -> ApiResult<Arg<'a>> {
        self.map_or(Ok(Arg::Null), Bind::arg)
    }
}

/// The arguments of one statement, `?1` first, in a function returning
/// `ApiResult`: `args![id, now_ms]`.
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        [$($crate::store::Bind::arg($value)?),*]
    };
}
pub(crate) use args;

pub fn stmt(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> ApiResult<D1PreparedStatement> {
    let values: Vec<JsValue> = args.iter().map(JsValue::from).collect();
    db.prepare(sql)
        .bind(&values)
        .map_err(|e| ApiError::internal(format!("bind: {e}")))
}

pub async fn first<T: DeserializeOwned>(
    db: &D1Database,
    sql: &str,
    args: &[Arg<'_>],
) -> ApiResult<Option<T>> {
    stmt(db, sql, args)?
        .first::<T>(None)
        .await
        .map_err(|e| ApiError::internal(format!("d1 first: {e}")))
}

pub async fn all<T: DeserializeOwned>(
    db: &D1Database,
    sql: &str,
    args: &[Arg<'_>],
) -> ApiResult<Vec<T>> {
    stmt(db, sql, args)?
        .all()
        .await
        .map_err(|e| ApiError::internal(format!("d1 all: {e}")))?
        .results::<T>()
        .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))
}

/// Runs one statement; returns the number of rows it changed.
pub async fn run(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> ApiResult<u64> {
    let result = stmt(db, sql, args)?
        .run()
        .await
        .map_err(|e| ApiError::internal(format!("d1 run: {e}")))?;
    changes(&result)
}

/// Runs statements atomically.
pub async fn batch(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
) -> ApiResult<Vec<worker::D1Result>> {
    db.batch(statements)
        .await
        .map_err(|e| ApiError::internal(format!("d1 batch: {e}")))
}

pub fn changes(result: &worker::D1Result) -> ApiResult<u64> {
    let meta = result
        .meta()
        .map_err(|e| ApiError::internal(format!("d1 meta: {e}")))?;
    Ok(meta.and_then(|m| m.changes).map_or(0, |c| c as u64))
}

// ---------------------------------------------------------------- typed columns

/// The `status` of a delta or fact; the one place its SQL spelling is
/// mapped (SQL constants compare with the same words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ItemStatus {
    Queued,
    Verified,
    Failed,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Queued => "QUEUED",
            ItemStatus::Verified => "VERIFIED",
            ItemStatus::Failed => "FAILED",
        }
    }
}

/// The `status` of a checkpoint: its root is fixed (QUEUED), then in the
/// log (COMMITTED).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CheckpointStatus {
    Queued,
    Committed,
}

impl CheckpointStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointStatus::Queued => "QUEUED",
            CheckpointStatus::Committed => "COMMITTED",
        }
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

// ---------------------------------------------------------------- shared helpers

/// An integer argument; every integer we bind is far below 2^53.
///
/// # Errors
/// An integer above `i64::MAX` (never a real row) is an internal error.
pub fn int(v: u64) -> ApiResult<Arg<'static>> {
    i64::try_from(v)
        .map(Arg::Int)
        .map_err(|_| ApiError::internal(format!("integer {v} out of range")))
}

/// A nullable text argument.
pub fn opt_text(v: Option<&str>) -> Arg<'_> {
    v.map_or(Arg::Null, Arg::Text)
}

/// A stored hash (lowercase hex), read back into its type.
///
/// # Errors
/// A malformed stored hash is an internal error.
pub fn parse_hash(text: &str) -> ApiResult<Hash32> {
    Hash32::parse(text).map_err(|e| ApiError::internal(format!("stored hash {text:?}: {e}")))
}

/// Runs a `SELECT COUNT(*) AS n ...` statement.
pub async fn count(db: &D1Database, sql: &str, args: &[Arg<'_>]) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let row: Option<N> = first(db, sql, args).await?;
    Ok(row.map_or(0, |r| r.n))
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
fn placeholders(start: usize, rows: usize, cols: usize) -> String {
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
/// A row that cannot be bound, or a statement D1 refuses to prepare.
pub fn chunked<'a, T>(
    db: &D1Database,
    list: &ListSql,
    fixed: &[Arg<'a>],
    rows: &'a [T],
    bind: impl Fn(&'a T, &mut Vec<Arg<'a>>) -> ApiResult<()>,
) -> ApiResult<Vec<D1PreparedStatement>> {
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
        out.push(stmt(db, &sql, &args)?);
    }
    Ok(out)
}

/// The rows of every read statement, in one batch round trip.
///
/// # Errors
/// D1's errors, or rows that do not deserialize into `T`.
pub async fn batch_rows<T: DeserializeOwned>(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
) -> ApiResult<Vec<T>> {
    if statements.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for result in batch(db, statements).await? {
        out.extend(
            result
                .results::<T>()
                .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn a_one_column_list_is_plain_and_rows_are_parenthesized_after_the_fixed_parameters() {
        assert_eq!(placeholders(2, 3, 1), "?2, ?3, ?4");
        assert_eq!(placeholders(1, 2, 3), "(?1, ?2, ?3), (?4, ?5, ?6)");
        assert_eq!(placeholders(2, 1, 2), "(?2, ?3)");
    }
}
