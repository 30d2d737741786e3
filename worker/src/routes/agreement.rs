//! Two-party agreement (docs/agreement.md): a vendor invites a customer,
//! the customer registers a counterparty key and signs statements about
//! committed checkpoints. Only the invitation route needs an API key; the
//! others are public and authorised by the single-use token or by the
//! registered key's signature.

use bvs_core::agreement::STATEMENT_BYTES_MAX;
use bvs_core::types::CustomerId;
use worker::{Request, Response};

use crate::app::App;
use crate::auth;
use crate::error::ApiResult;
use crate::fields::Fields;
use crate::http;
use crate::ledger::agreement;

/// Largest body of the public agreement routes: a statement at its limit
/// plus a token. // spec: silent
const AGREEMENT_BODY_BYTES_MAX: usize = STATEMENT_BYTES_MAX + 1024;

fn origin(req: &Request) -> ApiResult<String> {
    Ok(req.url()?.origin().ascii_serialization())
}

/// `POST /api/v1/balance/customers/:customerId/invitations` (API key):
/// 201 with a single-use invitation URL.
pub async fn invite(app: &App, req: Request, customer: &str) -> ApiResult<Response> {
    let ctx = auth::authenticate_api_key(app, &req).await?;
    let customer_id = CustomerId::parse(customer)?;
    let base = origin(&req)?;
    let by = agreement::Inviter {
        tenant_id: &ctx.tenant_id,
        log: ctx.log(),
        plan: ctx.plan,
    };
    let view = agreement::invite(app, &by, &customer_id, &base).await?;
    http::balance(201, &view)
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
    let mut f = body(&mut req).await?;
    let token = f.string("token", false);
    let statement = f.required("statement");
    f.finish()?;
    let (view, created) = agreement::register_key(app, token.as_deref(), &statement).await?;
    http::balance(if created { 201 } else { 200 }, &view)
}

/// `POST /api/v1/agreement/statements` `{statement}` (public): a signed
/// `balance` or `dispute` statement about a committed checkpoint (201 when
/// recorded, 200 when it already was).
pub async fn statement(app: &App, mut req: Request) -> ApiResult<Response> {
    let mut f = body(&mut req).await?;
    let statement = f.required("statement");
    f.finish()?;
    let (view, created) = agreement::submit_statement(app, &statement).await?;
    http::balance(if created { 201 } else { 200 }, &view)
}
