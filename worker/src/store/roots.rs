//! The control database's index of proof roots: which shard issued a root,
//! so the public verify route reads one shard (issue 15).

use bvs_core::types::Env;
use serde::Deserialize;

use worker::D1Database;

use super::{batch, queries, row, statements};
use crate::error::ApiResult;

/// A root issued twice (the same receipt asked again) keeps its first row.
const INSERT_ROOT: &str = "INSERT OR IGNORE INTO proof_roots (root, env, shard, created_at) \
     VALUES (?1, ?2, ?3, ?4)";
const SELECT_ROOT: &str = "SELECT env, shard FROM proof_roots WHERE root = ?1";

row! {
    #[derive(Debug, Deserialize)]
    pub struct RootRow { env: Env, shard: u32 }
}

queries! {
    /// Records that shard `shard` of `env` issued `root` (lowercase hex).
    pub fn insert(root: &str, env: &str, shard: u32, now_ms: u64) -> u64 = run(INSERT_ROOT);
    /// Where `root` was issued, if the index has it.
    pub fn find(root: &str) -> Option<RootRow> = first(SELECT_ROOT);
}

statements! {
    fn insert_statement(root: &str, env: &str, shard: u32, now_ms: u64) = INSERT_ROOT;
}

/// Records `roots` (one batch; rows already there are kept).
///
/// # Errors
/// D1 errors.
pub async fn insert_all(
    db: &D1Database,
    roots: &[String],
    env: &str,
    shard: u32,
    now_ms: u64,
) -> ApiResult<()> {
    let statements = roots
        .iter()
        .map(|r| insert_statement(db, r, env, shard, now_ms))
        .collect::<ApiResult<Vec<_>>>()?;
    batch(db, statements).await?;
    Ok(())
}
