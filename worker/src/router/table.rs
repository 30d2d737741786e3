//! The route table: every route declared once — its method, its path
//! pattern (also the request log's `route` and the OpenAPI path), its
//! auth (`Auth`: who may reach it, checked by `dispatch` before its
//! handler runs; the handler is given the caller, `c.key()?` or
//! `c.session()?`) and its handler, with the path parameters read at this edge: typed ones
//! (`Params::parse`: a `CustomerId`, a hash, a tile path) parsed here, the
//! handler raising a parse error where it raised it before (after its key
//! or session is checked). `resolve` tries the routes in this order.

use bvs_core::types::CustomerId;
use worker::{Method, Request};

use super::{Auth, Caller, Params, Route, RouteFuture};
use crate::app::App;
use crate::ids::{AnchorId, DeliveryId, EventId, KeyId, StatementId, TenantId, WebhookId};
use crate::routes::{
    admin, agreement, api_keys, assets, auth, contracts, dev, emit, facts, health, insights,
    ledgers, liabilities, log, mail, openapi, page, proofs, request_log, tenant, tiles, usage,
    webhooks, witness,
};

/// `route!(Method "pattern", Auth, |app, req, p, c| handler call)`: one
/// entry; the call is the body of the route's handler (an `async fn` of
/// the app, the request, the path parameters and the caller).
macro_rules! route {
    ($method:ident $pattern:literal, $auth:ident, |$app:ident, $req:ident, $p:ident, $c:ident| $call:expr) => {
        Route {
            method: Method::$method,
            pattern: $pattern,
            auth: Auth::$auth,
            handler: {
                #[allow(unused_variables)]
                fn handle<'a>(
                    $app: &'a App,
                    $req: Request,
                    $p: Params,
                    $c: Caller,
                ) -> RouteFuture<'a> {
                    Box::pin(async move { $call })
                }
                handle
            },
        }
    };
}

#[rustfmt::skip]
pub const ROUTES: &[Route] = &[
    route!(Post "/api/v1/balance/customers/:customerId/invitations", Key, |app, req, p, c|
        agreement::invite(app, req, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Post "/api/v1/agreement/invitation", Public, |app, req, p, c|
        agreement::open(app, req).await
    ),
    route!(Post "/api/v1/agreement/keys", Public, |app, req, p, c|
        agreement::register_key(app, req).await
    ),
    route!(Post "/api/v1/agreement/statements", Public, |app, req, p, c|
        agreement::statement(app, req).await
    ),
    route!(Get "/health", None, |app, req, p, c| health::get()),
    route!(Get "/openapi.json", None, |app, req, p, c| openapi::get()),
    route!(Post "/dev/ping", Dev, |app, req, p, c| dev::ping_create(app, req).await),
    route!(Get "/dev/ping/:id", Dev, |app, req, p, c| dev::ping_get(app, p.get("id")?).await),
    route!(Post "/dashboard/auth/register", None, |app, req, p, c| auth::register(app, req).await),
    route!(Post "/dashboard/auth/login", None, |app, req, p, c| auth::login(app, req).await),
    route!(Get "/dashboard/auth/verify", None, |app, req, p, c| auth::verify(app, req).await),
    route!(Post "/dashboard/auth/resend-verification-email", None, |app, req, p, c|
        auth::resend_verification(app, req).await
    ),
    route!(Post "/dashboard/auth/request-password-reset", None, |app, req, p, c|
        auth::request_password_reset(app, req).await
    ),
    route!(Post "/dashboard/auth/reset-password", None, |app, req, p, c|
        auth::reset_password(app, req).await
    ),
    route!(Post "/dashboard/auth/change-password", Session, |app, req, p, c|
        auth::change_password(app, req, c.session()?).await
    ),
    route!(Get "/dashboard/auth/profile", Session, |app, req, p, c| auth::profile(c.session()?).await),
    route!(Get "/dashboard/usage", Session, |app, req, p, c| usage::get(app, c.session()?).await),
    route!(Patch "/dashboard/auth/preferences", Session, |app, req, p, c|
        auth::preferences(app, req, c.session()?).await
    ),
    route!(Post "/dashboard/contracts/provision", Session, |app, req, p, c|
        contracts::provision(app, req, c.session()?).await
    ),
    route!(Get "/dashboard/contracts/:tenantId/status", Session, |app, req, p, c|
        contracts::status(app, c.session()?, &TenantId::from_text(p.get("tenantId")?)).await
    ),
    route!(Get "/dashboard/contracts", Session, |app, req, p, c| contracts::list(app, c.session()?).await),
    route!(Post "/dashboard/api-keys", Session, |app, req, p, c| api_keys::create(app, req, c.session()?).await),
    route!(Get "/dashboard/api-keys", Session, |app, req, p, c| api_keys::list(app, c.session()?).await),
    route!(Post "/dashboard/api-keys/:id/toggle", Session, |app, req, p, c|
        api_keys::toggle(app, c.session()?, &p.id("id", KeyId::from_text)?).await
    ),
    route!(Delete "/dashboard/api-keys/:id", Session, |app, req, p, c|
        api_keys::delete(app, c.session()?, &p.id("id", KeyId::from_text)?).await
    ),
    route!(Patch "/dashboard/tenant/retention", Session, |app, req, p, c|
        tenant::retention(app, req, c.session()?).await
    ),
    route!(Post "/admin/tenants/:tenantId/plan", Operator, |app, req, p, c|
        admin::set_plan(app, req, &TenantId::from_text(p.get("tenantId")?)).await
    ),
    route!(Get "/dev/mail", Dev, |app, req, p, c| mail::outbox(app, req).await),
    route!(Post "/api/v1/balance/delta", KeyEmit, |app, req, p, c| emit::emit(app, req).await),
    route!(Post "/api/v1/balance/delta/batch", KeyEmit, |app, req, p, c|
        emit::emit_batch(app, req).await
    ),
    route!(Get "/api/v1/balance/delta/:anchorId", Key, |app, req, p, c|
        emit::status(app, c.key()?, &p.id("anchorId", AnchorId::from_text)?).await
    ),
    route!(Get "/api/v1/balance/derive/:customerId", Key, |app, req, p, c|
        ledgers::derive(app, req, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Post "/api/v1/balance/compare", Key, |app, req, p, c| ledgers::compare(app, req, c.key()?).await),
    route!(Get "/api/v1/balance/customers", Key, |app, req, p, c| ledgers::customers(app, req, c.key()?).await),
    route!(Get "/api/v1/balance/assets", Key, |app, req, p, c| assets::assets(app, c.key()?).await),
    route!(Put "/api/v1/balance/assets/:asset", Key, |app, req, p, c|
        assets::put_asset(app, req, c.key()?, p.get("asset")?).await
    ),
    route!(Get "/api/v1/balance/customers/:customerId", Key, |app, req, p, c|
        ledgers::customer(app, req, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Post "/api/v1/facts", Key, |app, req, p, c| facts::create(app, req, c.key()?).await),
    route!(Get "/api/v1/facts/:contentHash", Key, |app, req, p, c|
        facts::get(app, c.key()?, p.parse("contentHash", facts::content_hash_param)?).await
    ),
    route!(Get "/api/v1/facts/:contentHash/verify", Key, |app, req, p, c|
        facts::verify(app, c.key()?, p.parse("contentHash", facts::content_hash_param)?).await
    ),
    route!(Post "/api/v1/balance/checkpoint", Key, |app, req, p, c|
        proofs::checkpoint_create(app, req, c.key()?).await
    ),
    route!(Get "/api/v1/balance/checkpoints", Key, |app, req, p, c|
        proofs::checkpoint_list(app, req, c.key()?).await
    ),
    route!(Get "/api/v1/balance/receipt/:customerId", Key, |app, req, p, c|
        proofs::receipt(app, req, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Get "/api/v1/verify/:proofRoot", Public, |app, req, p, c|
        proofs::public_verify(app, req, p.parse("proofRoot", proofs::proof_root)?).await
    ),
    route!(Get "/api/v1/logs", Public, |app, req, p, c| log::list(app, &req).await),
    route!(Get "/api/v1/log/:env/checkpoint", Public, |app, req, p, c|
        log::checkpoint(app, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/key", Public, |app, req, p, c|
        log::key(app, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/heads", Public, |app, req, p, c|
        log::heads(app, req, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/proof/inclusion", Public, |app, req, p, c|
        log::inclusion(app, req, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/proof/consistency", Public, |app, req, p, c|
        log::consistency(app, req, p.get("env")?).await
    ),
    route!(Get "/verify/:proofRoot", Public, |app, req, p, c| page::verify(app, req).await),
    route!(Post "/dashboard/webhooks", Session, |app, req, p, c| webhooks::create(app, req, c.session()?).await),
    route!(Get "/dashboard/webhooks", Session, |app, req, p, c| webhooks::list(app, c.session()?).await),
    route!(Get "/dashboard/webhooks/:id", Session, |app, req, p, c|
        webhooks::get(app, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Post "/dashboard/webhooks/:id/toggle", Session, |app, req, p, c|
        webhooks::toggle(app, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Post "/dashboard/webhooks/:id/test", Session, |app, req, p, c|
        webhooks::test(app, req, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Delete "/dashboard/webhooks/:id", Session, |app, req, p, c|
        webhooks::delete(app, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Get "/dashboard/webhooks/:id/deliveries", Session, |app, req, p, c|
        webhooks::deliveries(app, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Post "/dashboard/webhooks/:id/rotate-secret", Session, |app, req, p, c|
        webhooks::rotate_secret(app, req, c.session()?, &p.id("id", WebhookId::from_text)?).await
    ),
    route!(Get "/api/v1/webhooks/keys", Public, |app, req, p, c| webhooks::keys()),
    route!(Post "/dev/bench/hash", Dev, |app, req, p, c| dev::bench_hash(app, req).await),
    route!(Post "/dev/log/grow", Dev, |app, req, p, c| dev::log_grow(app, req).await),
    route!(Get "/dev/log/leaf", Dev, |app, req, p, c| dev::log_leaf(app, req).await),
    route!(Post "/dev/retention", Dev, |app, req, p, c| dev::retention(app, req).await),
    route!(Get "/dashboard/logs/requests", Session, |app, req, p, c| request_log::requests(app, req, c.session()?).await),
    route!(Get "/dashboard/logs/requests/:requestId", Session, |app, req, p, c|
        request_log::request(app, c.session()?, p.get("requestId")?).await
    ),
    route!(Get "/dashboard/events", Session, |app, req, p, c| webhooks::events(app, req, c.session()?).await),
    route!(Get "/dashboard/events/:eventId", Session, |app, req, p, c|
        webhooks::event(app, c.session()?, &p.id("eventId", EventId::from_text)?).await
    ),
    route!(Post "/dashboard/deliveries/:deliveryId/resend", Session, |app, req, p, c|
        webhooks::resend(app, c.session()?, &p.id("deliveryId", DeliveryId::from_text)?).await
    ),
    route!(Get "/dashboard/search", Session, |app, req, p, c| insights::search(app, req, c.session()?).await),
    route!(Get "/dashboard/usage/daily", Session, |app, req, p, c| insights::daily(app, req, c.session()?).await),
    route!(Get "/api/v1/balance/customers/:customerId/history", Key, |app, req, p, c|
        ledgers::history(app, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Post "/dashboard/auth/logout", Session, |app, req, p, c| auth::logout(app, c.session()?).await),
    route!(Get "/admin/shards", Operator, |app, req, p, c| admin::shards(app).await),
    route!(Get "/log/:name/checkpoint", Public, |app, req, p, c|
        tiles::checkpoint(app, p.get("name")?).await
    ),
    route!(Get "/log/:name/tile/*tile", Public, |app, req, p, c|
        tiles::tile(app, p.get("name")?, p.parse("tile", tiles::parse_tile_path)).await
    ),
    route!(Get "/api/v1/logs/witnesses", Public, |app, req, p, c| witness::list(app).await),
    route!(Post "/dev/witness/fork", Dev, |app, req, p, c| dev::witness_fork(app, req).await),
    route!(Post "/api/v1/liabilities", Key, |app, req, p, c| liabilities::create(app, req, c.key()?).await),
    route!(Get "/api/v1/liabilities", Key, |app, req, p, c| liabilities::list(app, req, c.key()?).await),
    route!(Get "/api/v1/liabilities/:id", Key, |app, req, p, c|
        liabilities::get(app, c.key()?, &p.id("id", StatementId::from_text)?).await
    ),
    route!(Get "/api/v1/balance/customers/:customerId/liabilities-proof", Key, |app, req, p, c|
        liabilities::proof(app, req, c.key()?, p.parse("customerId", CustomerId::parse)?).await
    ),
    route!(Post "/dev/liabilities/seed", DevKey, |app, req, p, c| dev::liabilities_seed(app, req, c.key()?).await),
    route!(Get "/api/v1/agreement/liabilities-proof/:merkleRoot", Public, |app, req, p, c|
        liabilities::customer_proof(app, p.parse("merkleRoot", liabilities::merkle_root_param)?).await
    ),
    route!(Post "/dev/liabilities/start", DevKey, |app, req, p, c| dev::liabilities_start(app, req, c.key()?).await),
];
