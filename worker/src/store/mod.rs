//! All SQL of the service lives under this module, as constants with numbered
//! placeholders, bound and read into row structs. Multi-statement writes go
//! through `D1Database::batch`, which is atomic.

pub mod accounts;
pub mod contracts;
pub mod dev;
pub mod idempotency;
pub mod keys;
pub mod ledger;
pub mod retention;
pub mod webhooks;

use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use crate::error::{ApiError, ApiResult};

/// D1 allows at most 100 bound parameters per statement.
pub const D1_BOUND_PARAMS_MAX: usize = 100;

/// A bindable value. D1 integers pass through JS numbers: callers store
/// amounts as canonical decimal TEXT and keep integers below 2^53.
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
