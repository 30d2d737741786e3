//! Two-party agreement (docs/agreement.md): a vendor invites a customer,
//! the customer registers a counterparty key and signs statements about
//! committed checkpoints. Only the invitation route needs an API key; the
//! others are public and authorised by the single-use token or by the
//! registered key's signature.

use bvs_core::agreement::STATEMENT_BYTES_MAX;
use bvs_core::types::CustomerId;
use worker::{Request, Response};

use crate::agreement;
use crate::app::App;
use crate::auth::KeyContext;
use crate::error::ApiResult;
use crate::fields::Fields;
use crate::http;
use crate::idempotency::Guard;

/// Largest body of the public agreement routes: two statements at their
/// limit (a balance statement and its inclusion co-signature) plus a
/// token. // spec: silent
const AGREEMENT_BODY_BYTES_MAX: usize = 2 * STATEMENT_BYTES_MAX + 1024;

fn origin(req: &Request) -> ApiResult<String> {
    Ok(req.url()?.origin().ascii_serialization())
}

/// `POST /api/v1/balance/customers/:customerId/invitations` (API key):
/// 201 with a single-use invitation URL.
/// Under an Idempotency-Key the answer is stored in the invitation's own
/// batch: a retried POST never makes a second invitation.
pub async fn invite(
    app: &App,
    mut req: Request,
    ctx: KeyContext,
    customer_id: CustomerId,
) -> ApiResult<Response> {
    let base = origin(&req)?;
    let bytes = http::body_bytes(&mut req, AGREEMENT_BODY_BYTES_MAX).await?;
    let route = format!(
        "POST /api/v1/balance/customers/{}/invitations",
        customer_id.as_str()
    );
    let (db, guard) = match super::idempotent::for_key(app, &ctx, &req, &route, &bytes).await? {
        Ok(go) => go,
        Err(answer) => return Ok(answer),
    };
    let extra = |view: &agreement::InvitationView| match &guard {
        Some(g) => g.statements(201, http::balance_text(201, view)?),
        None => Ok(Vec::new()),
    };
    let by = agreement::Inviter {
        tenant_id: &ctx.tenant_id,
        log: ctx.log(),
        plan: ctx.plan,
    };
    let invited = agreement::invite(app, &by, &customer_id, &base, &extra).await;
    match Guard::or_held(guard.as_ref(), app, &db, invited).await? {
        Ok(view) => http::raw_json(201, http::balance_text(201, &view)?),
        Err(answer) => Ok(answer),
    }
}

async fn body(req: &mut Request) -> ApiResult<Fields> {
    let bytes = http::body_bytes(req, AGREEMENT_BODY_BYTES_MAX).await?;
    Fields::from_bytes(&bytes)
}

/// `POST /api/v1/agreement/invitation` `{token}` (public): what the
/// customer signs to register a key. Does not use the invitation up.
pub async fn open(app: &App, mut req: Request) -> ApiResult<Response> {
    let mut f = body(&mut req).await?;
    let token = f.required("token");
    f.finish()?;
    http::balance(200, &agreement::open(app, &token).await?)
}

/// `POST /api/v1/agreement/keys` `{token?, statement}` (public):
/// registers the counterparty key a signed key statement binds (201):
/// through an invitation's token, or without one when the ledger's
/// current key signed the statement too (a rotation). The current key
/// again: 200 with its binding.
pub async fn register_key(app: &App, mut req: Request) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, AGREEMENT_BODY_BYTES_MAX).await?;
    let mut f = Fields::from_bytes(&bytes)?;
    let token = f.string("token", false);
    let statement = f.required("statement");
    f.finish()?;
    let route = "POST /api/v1/agreement/keys";
    // Through an invitation, an Idempotency-Key lives under its token; a
    // rotation signed by the current key needs none (sent again, it
    // answers the binding, 200, and writes nothing).
    let scope = token
        .as_deref()
        .and_then(|t| agreement::token_scope(app, t));
    let (db, guard) = match scope {
        Some((log, scope)) => {
            match super::idempotent::for_public(app, log, &scope, &req, route, &bytes).await? {
                Ok((db, guard)) => (Some(db), guard),
                Err(answer) => return Ok(answer),
            }
        }
        None => (None, None),
    };
    let (view, created) = agreement::register_key(app, token.as_deref(), &statement).await?;
    let status = if created { 201 } else { 200 };
    let text = http::balance_text(status, &view)?;
    // The invitation is single-use: a retry after this would be refused;
    // with a key, it gets this answer again.
    if let (Some(db), Some(g)) = (&db, &guard) {
        g.record(db, status, &text).await;
    }
    http::raw_json(status, text)
}

/// `POST /api/v1/agreement/statements` `{statement, liabilities?}`
/// (public): a signed `balance` or `dispute` statement about a committed
/// checkpoint, with a balance statement optionally the same key's
/// co-signature of its inclusion in the period's liabilities statement
/// (201 when something was recorded, 200 when all already was).
pub async fn statement(app: &App, mut req: Request) -> ApiResult<Response> {
    let bytes = http::body_bytes(&mut req, AGREEMENT_BODY_BYTES_MAX).await?;
    let mut f = Fields::from_bytes(&bytes)?;
    let statement = f.required("statement");
    let liabilities = f.string("liabilities", false);
    f.finish()?;
    let route = "POST /api/v1/agreement/statements";
    let (db, guard) = match agreement::statement_scope(app, &statement) {
        Some((log, scope)) => {
            match super::idempotent::for_public(app, log, &scope, &req, route, &bytes).await? {
                Ok((db, guard)) => (Some(db), guard),
                Err(answer) => return Ok(answer),
            }
        }
        None => (None, None),
    };
    let (view, created) =
        agreement::submit_statement(app, &statement, liabilities.as_deref()).await?;
    let status = if created { 201 } else { 200 };
    let text = http::balance_text(status, &view)?;
    // A statement is recorded once by its item hash; with a key, a retry
    // gets this very answer (201) rather than "already recorded" (200).
    if let (Some(db), Some(g)) = (&db, &guard) {
        g.record(db, status, &text).await;
    }
    http::raw_json(status, text)
}
