//! All SQL of the service lives under this module, one file per table or
//! concern, as constants with numbered placeholders, bound and read into row
//! structs. The only SQL text built at run time is a [`ListSql`] template's
//! placeholder list, by [`chunked`]. Table modules build statements as
//! values ([`Query`]: SQL and arguments, no database); this file is the one
//! gateway that prepares, binds and runs them, once per round trip.
//! Multi-statement writes go through [`batch`] (`D1Database::batch`), which
//! is atomic.
//!
//! Control database: `accounts`, `contracts`, `keys`, `roots`,
//! `webhooks`, `mail` (mail requests), `dev`. Ledger databases (one per
//! environment): `log` (stored hashes, leaves, tree heads), `submissions`,
//! `deltas`, `ledgers` (ledgers and their windows), `facts`,
//! `checkpoints`, `receipts`, `events` (the outbox), `meters` (per-plan
//! counters, the monthly delta quota among them), `emit` (the emit's one
//! write batch with its Idempotency-Key claim), `idempotency` (expiry). `retention` purges both and keeps its cursor.

pub mod accounts;
pub mod agreement;
pub mod as_of;
pub mod assets;
#[cfg(test)]
mod binds_tests;
pub mod charts;
pub mod checkpoints;
pub mod contracts;
pub mod deltas;
pub mod dev;
pub mod emit;
pub mod events;
pub mod facts;
pub mod idempotency;
pub mod keys;
pub mod ledgers;
pub mod liabilities;
pub mod log;
pub mod mail;
pub mod meters;
pub mod proofs;
mod query;
pub mod receipts;
pub mod refusals;
pub mod request_log;
pub mod retention;
pub mod roots;
pub mod search;
pub mod sets;
pub mod submissions;
mod typed;
pub mod webhooks;
pub mod witness;

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{CustomerId, Env};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result};

use crate::error::{ApiError, ApiResult};

#[cfg(test)]
pub use query::assert_binds;
pub use query::{bind_text, chunked, highest_placeholder, ListSql, Query};
pub use sets::{over_json, JSON_PARAM_BYTES_MAX};
pub(crate) use typed::text_enum;
pub use typed::{amount, conditions, opt_amount, CheckpointStatus, ItemStatus};

/// D1 allows at most 100 bound parameters per statement.
pub const D1_BOUND_PARAMS_MAX: usize = crate::limits::D1_BOUND_PARAMS;

/// A bindable value. D1 integers pass through JS numbers: callers store
/// amounts as canonical decimal TEXT and keep integers below 2^53.
#[derive(Clone)]
pub enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
    /// Bytes, bound as a BLOB (a log tile).
    Blob(&'a [u8]),
    /// A hash, bound as its lowercase hex text (how every hash is stored).
    Hash(&'a Hash32),
    /// An amount, bound as its canonical decimal text (how every amount
    /// is stored).
    Amount(Amount),
    /// Text the builder computed (a JSON set, a hex), moved into the
    /// statement.
    Owned(String),
}

impl Arg<'_> {
    /// The bytes of a bound text or BLOB value (0 for an integer or NULL).
    fn bound_len(&self) -> usize {
        match self {
            Arg::Text(s) => s.len(),
            Arg::Owned(s) => s.len(),
            Arg::Blob(b) => b.len(),
            Arg::Hash(_) => 64,
            Arg::Amount(_) | Arg::Int(_) | Arg::Null => 0,
        }
    }
}

impl From<&Arg<'_>> for JsValue {
    fn from(a: &Arg<'_>) -> Self {
        match a {
            Arg::Text(s) => JsValue::from_str(s),
            // Exact below 2^53, which every integer we store is.
            #[allow(clippy::cast_precision_loss)]
            Arg::Int(i) => JsValue::from_f64(*i as f64),
            Arg::Null => JsValue::NULL,
            Arg::Blob(b) => worker::js_sys::Uint8Array::from(*b).into(),
            Arg::Hash(h) => JsValue::from_str(&h.to_hex()),
            Arg::Amount(a) => JsValue::from_str(&a.to_string()),
            Arg::Owned(s) => JsValue::from_str(s),
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

impl Bind<'_> for String {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Owned(self))
    }
}

impl<'a> Bind<'a> for &'a String {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self))
    }
}

impl<'a> Bind<'a> for &'a Hash32 {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Hash(self))
    }
}

/// An asset, bound as its stored key (`''` for the default asset).
impl Bind<'_> for &bvs_core::types::Asset {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Owned(self.key()))
    }
}

impl<'a> Bind<'a> for &'a CustomerId {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self.as_str()))
    }
}

impl<'a, T: crate::ids::IdText> Bind<'a> for &'a T {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self.as_ref()))
    }
}

impl Bind<'_> for Env {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Text(self.as_str()))
    }
}

impl Bind<'_> for Amount {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Amount(self))
    }
}

impl Bind<'_> for &Amount {
    fn arg(self) -> ApiResult<Arg<'static>> {
        Ok(Arg::Amount(*self))
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

impl<'a> Bind<'a> for &'a crate::secret::SecretDigest {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Hash(self.stored()))
    }
}

impl<'a> Bind<'a> for &'a crate::secret::PasswordHash {
    fn arg(self) -> ApiResult<Arg<'a>> {
        Ok(Arg::Text(self.stored()))
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

/// Declares store functions that run one constant statement and read its
/// answer, so a table file says only its own part: the name, the
/// parameters, the answer, the statement and (when they differ from the
/// parameters, in order) the bound arguments.
///
/// ```ignore
/// queries! {
///     /// The ledger of one customer.
///     pub fn ledger(tenant_id: &TenantId, customer_id: &CustomerId) -> Option<LedgerRow> = first(SELECT_ONE);
///     pub fn by_id(tenant_id: &TenantId, id: &str) -> Option<Row> = first(SELECT_BY_ID; id, tenant_id);
/// }
/// ```
///
/// Each becomes `pub async fn name(db: &D1Database, params...) ->
/// ApiResult<answer>` calling [`first`], [`all`], [`count`], [`run`],
/// [`changed`] or [`exec`].
macro_rules! queries {
    (@args [] [$($param:ident),*]) => { $crate::store::args![$($param),*] };
    (@args [$($arg:expr),+] [$($param:ident),*]) => { $crate::store::args![$($arg),+] };
    // When the crate compiles: the statement's highest `?N` is the number
    // of its arguments (the parameters, or the listed arguments).
    (@check $sql:expr; $($param:ident),*; ) => {
        assert!(
            $crate::store::highest_placeholder($sql) == <[&str]>::len(&[$(stringify!($param)),*]),
            "a statement's placeholders and arguments differ"
        )
    };
    (@check $sql:expr; $($param:ident),*; $($arg:expr),+) => {
        assert!(
            $crate::store::highest_placeholder($sql) == <[&str]>::len(&[$(stringify!($arg)),+]),
            "a statement's placeholders and arguments differ"
        )
    };
    ($(
        $(#[$meta:meta])*
        $vis:vis fn $name:ident($($param:ident: $ty:ty),* $(,)?) -> $answer:ty
            = $how:ident($sql:expr $(; $($arg:expr),+)?);
    )*) => {$(
        $(#[$meta])*
        $vis async fn $name(
            db: &worker::D1Database,
            $($param: $ty),*
        ) -> $crate::error::ApiResult<$answer> {
            const _: () = $crate::store::queries!(@check $sql; $($param),*; $($($arg),+)?);
            let args = $crate::store::queries!(@args [$($($arg),+)?] [$($param),*]);
            $crate::store::$how(db, $crate::store::Query::new($sql, args)).await
        }
    )*};
}
pub(crate) use queries;

/// Like [`queries!`], for statements a caller puts in its own batch: each
/// becomes `pub fn name<'a>(params...) -> ApiResult<Query<'a>>`, a
/// statement as a value, with no database. Arguments that differ from the
/// parameters follow the statement in brackets: `= SQL, [a.x, a.y, now_ms];`.
/// The lifetime is named in the declaration (`fn name<'a>(id: &'a
/// TenantId)`): a `$ty:ty` cannot be taken apart to add it, and an elided
/// `Query<'_>` is refused beside several borrowed parameters.
macro_rules! statements {
    ($(
        $(#[$meta:meta])*
        $vis:vis fn $name:ident<$lt:lifetime>($($param:ident: $ty:ty),* $(,)?) = $sql:expr $(, [$($arg:expr),+ $(,)?])?;
    )*) => {$(
        $(#[$meta])*
        $vis fn $name<$lt>(
            $($param: $ty),*
        ) -> $crate::error::ApiResult<$crate::store::Query<$lt>> {
            const _: () = $crate::store::queries!(@check $sql; $($param),*; $($($arg),+)?);
            let args = $crate::store::queries!(@args [$($($arg),+)?] [$($param),*]);
            Ok($crate::store::Query::new($sql, args))
        }
    )*};
}
pub(crate) use statements;

/// Declares a row struct (public fields, listed compactly) and, with
/// `$ select_x from "table";` in front, the macro `select_x!("WHERE ...")`:
/// a SELECT of exactly the struct's columns, in its order, so a table's
/// columns are written once.
///
/// ```ignore
/// row! {
///     $ select_contracts from "contracts";
///     #[derive(Debug, Clone, Deserialize)]
///     pub struct ContractRow { id: String, tenant_id: TenantId, env: Env }
/// }
/// const SELECT_ONE: &str = select_contracts!("WHERE id = ?1");
/// ```
macro_rules! row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(<$lt:lifetime>)? {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name $(<$lt>)? {
            $($(#[$field_meta])* pub $field: $ty),+
        }
    };
    (
        $d:tt $select:ident from $table:literal;
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty),+ $(,)?
        }
    ) => {
        $crate::store::row! {
            $(#[$meta])*
            pub struct $name { $($(#[$field_meta])* $field: $ty),+ }
        }
        macro_rules! $select {
            ($d tail:expr) => {
                concat!(
                    "SELECT ",
                    $crate::store::columns!($($field),+),
                    " FROM ",
                    $table,
                    " ",
                    $d tail
                )
            };
        }
    };
}
pub(crate) use row;

/// `a, b, c`: a column list from field names.
macro_rules! columns {
    ($first:ident $(, $rest:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($rest))*)
    };
}
pub(crate) use columns;

/// The one place a [`Query`] becomes a D1 statement: counted as one of
/// the invocation's queries, and in DEV_MODE held to D1's limits on a
/// statement (`crate::limits`).
fn prepare(db: &D1Database, q: &Query<'_>) -> ApiResult<D1PreparedStatement> {
    crate::roundtrips::query()?;
    crate::limits::statement(&crate::limits::Shape {
        sql_bytes: q.sql.len(),
        params: q.args.len(),
        largest_value: q.args.iter().map(Arg::bound_len).max().unwrap_or(0),
    })?;
    let values: Vec<JsValue> = q.args.iter().map(JsValue::from).collect();
    db.prepare(q.sql.as_ref())
        .bind(&values)
        .map_err(|e| ApiError::internal(format!("bind: {e}")))
}

fn d1(what: &'static str) -> impl Fn(worker::Error) -> ApiError {
    move |e| ApiError::internal(format!("d1 {what}: {e}"))
}

pub async fn first<T: DeserializeOwned>(db: &D1Database, q: Query<'_>) -> ApiResult<Option<T>> {
    let _trip = crate::roundtrips::d1();
    crate::roundtrips::crossing().await;
    prepare(db, &q)?.first::<T>(None).await.map_err(d1("first"))
}

pub async fn all<T: DeserializeOwned>(db: &D1Database, q: Query<'_>) -> ApiResult<Vec<T>> {
    let _trip = crate::roundtrips::d1();
    crate::roundtrips::crossing().await;
    let result = prepare(db, &q)?.all().await.map_err(d1("all"))?;
    result.results::<T>().map_err(d1("rows"))
}

/// Runs one statement; returns the number of rows it changed.
pub async fn run(db: &D1Database, q: Query<'_>) -> ApiResult<u64> {
    let _trip = crate::roundtrips::d1();
    crate::roundtrips::crossing().await;
    let result = prepare(db, &q)?
        .run()
        .await
        .map_err(|e| ApiError::internal(format!("d1 run: {e}")))?;
    changes(&result)
}

/// Runs one statement; whether it changed a row.
pub async fn changed(db: &D1Database, q: Query<'_>) -> ApiResult<bool> {
    Ok(run(db, q).await? > 0)
}

/// Runs one statement for its effect alone.
pub async fn exec(db: &D1Database, q: Query<'_>) -> ApiResult<()> {
    run(db, q).await.map(drop)
}

/// Statements for the caller's atomic batch.
pub type Statements<'a> = ApiResult<Vec<Query<'a>>>;

/// Runs statements atomically: prepares and binds them, one batch.
pub async fn batch(db: &D1Database, queries: Vec<Query<'_>>) -> ApiResult<Vec<D1Result>> {
    let _trip = crate::roundtrips::d1();
    send_batch(db, queries)
        .await?
        .map_err(|e| ApiError::internal(format!("d1 batch: {e}")))
}

/// Prepares `queries` and sends them as one atomic batch, uncounted and
/// answering D1's own error: for a caller that counts the round trip
/// itself and reads the error (`meters::batch_within_caps`: a CHECK failure is a meter
/// over its cap), or that is no request's round trip (the request log's
/// flush after the response).
///
/// # Errors
/// A value that cannot be bound (the batch's own error is the inner one).
pub(crate) async fn send_batch(
    db: &D1Database,
    queries: Vec<Query<'_>>,
) -> ApiResult<worker::Result<Vec<D1Result>>> {
    let statements = queries
        .iter()
        .map(|q| prepare(db, q))
        .collect::<ApiResult<Vec<_>>>()?;
    crate::roundtrips::crossing().await;
    Ok(db.batch(statements).await)
}

/// Runs statements atomically; whether the one at `index` changed exactly
/// one row (a guarded write that won).
pub async fn batch_changed_one(
    db: &D1Database,
    queries: Vec<Query<'_>>,
    index: usize,
) -> ApiResult<bool> {
    let results = batch(db, queries).await?;
    let result = results
        .get(index)
        .ok_or_else(|| ApiError::internal("d1 batch returned too few results"))?;
    Ok(changes(result)? == 1)
}

pub fn changes(result: &D1Result) -> ApiResult<u64> {
    let meta = result
        .meta()
        .map_err(|e| ApiError::internal(format!("d1 meta: {e}")))?;
    Ok(meta.and_then(|m| m.changes).map_or(0, |c| c as u64))
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

/// Runs a `SELECT COUNT(*) AS n ...` statement.
pub async fn count(db: &D1Database, q: Query<'_>) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct N {
        n: u64,
    }
    let row: Option<N> = first(db, q).await?;
    Ok(row.map_or(0, |r| r.n))
}

/// The rows of the `i`th statement of a batch's results (the reads of
/// one round trip, taken apart by position).
///
/// # Errors
/// Fewer results than `i + 1`, or rows that do not deserialize into `T`.
pub(crate) fn rows<T: DeserializeOwned>(results: &[D1Result], i: usize) -> ApiResult<Vec<T>> {
    results
        .get(i)
        .ok_or_else(|| ApiError::internal("d1 batch returned too few results"))?
        .results::<T>()
        .map_err(|e| ApiError::internal(format!("d1 rows: {e}")))
}

/// The rows of every read statement, in one batch round trip.
///
/// # Errors
/// D1's errors, or rows that do not deserialize into `T`.
pub async fn batch_rows<T: DeserializeOwned>(
    db: &D1Database,
    queries: Vec<Query<'_>>,
) -> ApiResult<Vec<T>> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for result in batch(db, queries).await? {
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

    super::row! {
        $ select_things from "things";
        pub struct ThingRow { id: String, size: u64, note: Option<String> }
    }

    #[test]
    fn a_row_selects_exactly_its_columns_in_order() {
        let expected = ["SELECT", "id, size, note", "FROM things", "WHERE id = ?1"].join(" ");
        assert_eq!(select_things!("WHERE id = ?1"), expected);
        let row = ThingRow {
            id: String::new(),
            size: 0,
            note: None,
        };
        assert_eq!((row.id.len(), row.size, row.note), (0, 0, None));
    }
}
