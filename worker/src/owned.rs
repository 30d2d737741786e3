//! A tenant's own row (an API key, a webhook) changed by its id: the one
//! toggle and the one delete both kinds share. A row of another tenant,
//! or none, is the same 404 (`missing`), so ids are never confirmed.

use std::future::Future;

use crate::error::{ApiError, ApiResult};

/// Runs `toggle` (rows changed) and, when it changed one, `reload` (the
/// row as it is now); `missing()` when either finds none.
///
/// # Errors
/// `missing()`; the statements' errors.
pub async fn toggled<T>(
    toggle: impl Future<Output = ApiResult<u64>>,
    reload: impl Future<Output = ApiResult<Option<T>>>,
    missing: impl Fn() -> ApiError,
) -> ApiResult<T> {
    if toggle.await? == 0 {
        return Err(missing());
    }
    reload.await?.ok_or_else(missing)
}

/// Runs `delete` (rows changed); `missing()` when it changed none.
///
/// # Errors
/// `missing()`; the statement's error.
pub async fn deleted(
    delete: impl Future<Output = ApiResult<u64>>,
    missing: impl Fn() -> ApiError,
) -> ApiResult<()> {
    if delete.await? == 0 {
        return Err(missing());
    }
    Ok(())
}
