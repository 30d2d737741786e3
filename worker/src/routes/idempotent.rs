//! Idempotency-Key on the routes: where a request's keys live (the API
//! key's ledger shard and tenant, or a public route's shard and scope),
//! resolved here so that `idempotency` needs neither `auth` nor `ledger`.

use worker::{D1Database, Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::ApiResult;
use crate::idempotency::{self, Guard, Owner, Scope};
use crate::ledger::{self, LogId};

/// What a route goes on with: the database to write in and the guard to
/// write under, or the answer of a key already held.
pub type Checked = Result<(D1Database, Option<Guard>), Response>;

/// The emit routes' owner: the API key's environment and ledger shard.
///
/// # Errors
/// The shard's database is not bound.
pub fn owner(app: &App, ctx: &KeyContext) -> ApiResult<Owner> {
    Ok(Owner {
        env: ctx.env,
        ledger: ledger::db(app, ctx.log())?,
    })
}

/// [`idempotency::checked`] for a route of the caller's API key: the key's
/// ledger shard and its tenant and environment.
///
/// # Errors
/// 400 for a malformed key; D1 errors.
pub async fn for_key(
    app: &App,
    ctx: &KeyContext,
    req: &Request,
    route: &str,
    body: &[u8],
) -> ApiResult<Checked> {
    let scope = Scope {
        tenant_id: &ctx.tenant_id,
        env: ctx.env,
    };
    idempotency::checked(app, ledger::db(app, ctx.log())?, &scope, req, route, body).await
}

/// [`idempotency::checked`] for a public route: the keys live on the shard
/// the request names (`log`), scoped by `scope` (e.g. `ledger:<id>`).
///
/// # Errors
/// 400 for a malformed key; D1 errors.
pub async fn for_public(
    app: &App,
    log: LogId,
    scope: &str,
    req: &Request,
    route: &str,
    body: &[u8],
) -> ApiResult<Checked> {
    let tenant = idempotency::public_owner(scope);
    let scope = Scope {
        tenant_id: &tenant,
        env: log.env,
    };
    idempotency::checked(app, ledger::db(app, log)?, &scope, req, route, body).await
}
