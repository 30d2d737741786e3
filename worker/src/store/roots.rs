//! The control database's index of proof roots: which shard issued a root,
//! so the public verify route reads one shard (issue 15).

use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{args, first, run};
use crate::error::ApiResult;

/// A root issued twice (the same receipt asked again) keeps its first row.
const INSERT_ROOT: &str = "INSERT OR IGNORE INTO proof_roots (root, env, shard, created_at) \
     VALUES (?1, ?2, ?3, ?4)";
const SELECT_ROOT: &str = "SELECT env, shard FROM proof_roots WHERE root = ?1";

#[derive(Debug, Deserialize)]
pub struct RootRow {
    pub env: Env,
    pub shard: u32,
}

/// Records that shard `shard` of `env` issued `root` (lowercase hex).
pub async fn insert(
    db: &D1Database,
    root: &str,
    env: Env,
    shard: u32,
    now_ms: u64,
) -> ApiResult<()> {
    run(db, INSERT_ROOT, &args![root, env.as_str(), shard, now_ms]).await?;
    Ok(())
}

/// Where `root` was issued, if the index has it.
pub async fn find(db: &D1Database, root: &str) -> ApiResult<Option<RootRow>> {
    first(db, SELECT_ROOT, &args![root]).await
}
