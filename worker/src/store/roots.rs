//! The control database's index of proof roots: which shard issued a root,
//! so the public verify route reads one shard (issue 15).

use bvs_core::hash::Hash32;
use bvs_core::types::Env;
use serde::Deserialize;

use worker::D1Database;

use super::{batch, queries, row};
use crate::error::ApiResult;
use crate::ids::KeyId;
use crate::secret::SecretDigest;

/// A root issued twice (the same receipt asked again) keeps its first row.
const INSERT_ROOT: &str = "INSERT OR IGNORE INTO proof_roots (root, env, shard, created_at) \
     VALUES (?1, ?2, ?3, ?4)";
/// Roots `?1` (a JSON array) of shard `?3` of `?2`, at `?4`.
const INSERT_ROOT_SET: &str = "INSERT OR IGNORE INTO proof_roots (root, env, shard, created_at) \
     SELECT value, ?2, ?3, ?4 FROM json_each(?1)";
const SELECT_ROOT: &str = "SELECT env, shard FROM proof_roots WHERE root = ?1";
/// Records roots `?1` (a JSON array) for the shard of API key `?3`'s
/// environment, only if the key is active, not deleted, has the secret
/// hash `?4` and its environment is active (the emit's key read,
/// `keys::for_auth_indexing`; the key is still authenticated by the
/// caller with a constant-time comparison: this condition only keeps
/// unauthenticated requests from writing rows).
const INSERT_ROOTS_FOR_KEY: &str =
    "INSERT OR IGNORE INTO proof_roots (root, env, shard, created_at) \
     SELECT r.value, c.env, c.shard, ?2 FROM json_each(?1) r, api_keys k \
     JOIN contracts c ON c.tenant_id = k.tenant_id AND c.env = k.env \
     WHERE k.id = ?3 AND k.secret_hash = ?4 AND k.active = 1 AND k.deleted_at IS NULL \
     AND c.status = 'active'";

row! {
    #[derive(Debug, Deserialize)]
    pub struct RootRow { env: Env, shard: u32 }
}

queries! {
    /// Records that shard `shard` of `env` issued `root` (lowercase hex).
    pub fn insert(root: &Hash32, env: Env, shard: u32, now_ms: u64) -> u64 = run(INSERT_ROOT);
    /// Where `root` was issued, if the index has it.
    pub fn find(root: &Hash32) -> Option<RootRow> = first(SELECT_ROOT);
}

/// Records `roots` for the shard of key `key_id` ([`INSERT_ROOTS_FOR_KEY`];
/// one statement per JSON set).
///
/// # Errors
/// A value that cannot be bound.
pub fn insert_for_key_statements<'a>(
    roots: &[Hash32],
    now_ms: u64,
    key_id: &'a KeyId,
    secret_hash: &'a SecretDigest,
) -> super::Statements<'a> {
    super::over_json(
        INSERT_ROOTS_FOR_KEY,
        roots,
        &super::args![now_ms, key_id, secret_hash],
    )
}

/// Records `roots` (one statement per JSON set, one batch; rows already
/// there are kept).
///
/// # Errors
/// D1 errors.
pub async fn insert_all(
    db: &D1Database,
    roots: &[Hash32],
    env: Env,
    shard: u32,
    now_ms: u64,
) -> ApiResult<()> {
    let statements = super::over_json(INSERT_ROOT_SET, roots, &super::args![env, shard, now_ms])?;
    batch(db, statements).await?;
    Ok(())
}
