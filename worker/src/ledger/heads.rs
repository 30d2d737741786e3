//! The log as clients read it: signed tree heads by size, and leaves by
//! item hash.

use bvs_core::hash::Hash32;
use worker::D1Database;

use crate::error::{ApiError, ApiResult};
use crate::store::log::{self, HeadRow, LeafRow};

/// The signed tree head of `size`.
///
/// # Errors
/// 404 naming `field` when no head of that size was recorded.
pub async fn head_sized(db: &D1Database, size: u64, field: &str) -> ApiResult<HeadRow> {
    log::head_at(db, size).await?.ok_or_else(|| {
        ApiError::NotFound(format!(
            "{field}: no signed tree head of size {size}; see /api/v1/log/.../heads"
        ))
    })
}

/// Up to `limit` signed tree heads from size `from` on, oldest first.
///
/// # Errors
/// D1 errors.
pub async fn heads_from(db: &D1Database, from: u64, limit: u64) -> ApiResult<Vec<HeadRow>> {
    log::heads_from(db, from, limit).await
}

/// The first leaf holding `item` (lowercase hex).
///
/// # Errors
/// 404 when the item is not in the log `at`.
pub async fn leaf_of_item(db: &D1Database, at: super::LogId, item: &Hash32) -> ApiResult<LeafRow> {
    log::leaf_by_item(db, item).await?.ok_or_else(|| {
        ApiError::NotFound(format!(
            "itemHash {item} is not in the {} log",
            at.path_name()
        ))
    })
}

/// The leaf at `index` of a log.
///
/// # Errors
/// 404 when the log has no such leaf.
pub async fn leaf_at(db: &D1Database, index: u64) -> ApiResult<LeafRow> {
    log::leaf_at(db, index)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("No leaf {index}")))
}
