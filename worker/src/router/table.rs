//! The route table: every route declared once — its method, its path
//! pattern (also the request log's `route` and the OpenAPI path), its
//! family (`Family`: who may reach it before its handler runs) and its
//! handler, with the path parameters read at this edge: typed ones
//! (`Params::parse`: a `CustomerId`, a hash, a tile path) parsed here, the
//! handler raising a parse error where it raised it before (after its key
//! or session is checked). `resolve` tries the routes in this order.

use bvs_core::types::CustomerId;
use worker::{Method, Request};

use super::{Family, Params, Route, RouteFuture};
use crate::app::App;
use crate::routes::{
    admin, agreement, api_keys, auth, balance, contracts, dev, facts, health, insights, ledgers,
    liabilities, logs, mail, openapi, page, proofs, tenant, tiles, usage, webhooks,
};

/// `route!(Method "pattern", Family, |app, req, p| handler call)`: one
/// entry; the call is the body of the route's handler (an `async fn` of
/// the app, the request and the path parameters).
macro_rules! route {
    ($method:ident $pattern:literal, $family:ident, |$app:ident, $req:ident, $p:ident| $call:expr) => {
        Route {
            method: Method::$method,
            pattern: $pattern,
            family: Family::$family,
            handler: {
                #[allow(unused_variables)]
                fn handle<'a>($app: &'a App, $req: Request, $p: Params) -> RouteFuture<'a> {
                    Box::pin(async move { $call })
                }
                handle
            },
        }
    };
}

#[rustfmt::skip]
pub const ROUTES: &[Route] = &[
    route!(Post "/api/v1/balance/customers/:customerId/invitations", Open, |app, req, p|
        agreement::invite(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Post "/api/v1/agreement/invitation", Public, |app, req, p|
        agreement::open(app, req).await
    ),
    route!(Post "/api/v1/agreement/keys", Public, |app, req, p|
        agreement::register_key(app, req).await
    ),
    route!(Post "/api/v1/agreement/statements", Public, |app, req, p|
        agreement::statement(app, req).await
    ),
    route!(Get "/health", Open, |app, req, p| health::get()),
    route!(Get "/openapi.json", Open, |app, req, p| openapi::get()),
    route!(Post "/dev/ping", Dev, |app, req, p| dev::ping_create(app, req).await),
    route!(Get "/dev/ping/:id", Dev, |app, req, p| dev::ping_get(app, p.get("id")?).await),
    route!(Post "/dashboard/auth/register", Open, |app, req, p| auth::register(app, req).await),
    route!(Post "/dashboard/auth/login", Open, |app, req, p| auth::login(app, req).await),
    route!(Get "/dashboard/auth/verify", Open, |app, req, p| auth::verify(app, req).await),
    route!(Post "/dashboard/auth/resend-verification-email", Open, |app, req, p|
        auth::resend_verification(app, req).await
    ),
    route!(Post "/dashboard/auth/request-password-reset", Open, |app, req, p|
        auth::request_password_reset(app, req).await
    ),
    route!(Post "/dashboard/auth/reset-password", Open, |app, req, p|
        auth::reset_password(app, req).await
    ),
    route!(Post "/dashboard/auth/change-password", Open, |app, req, p|
        auth::change_password(app, req).await
    ),
    route!(Get "/dashboard/auth/profile", Open, |app, req, p| auth::profile(app, req).await),
    route!(Get "/dashboard/usage", Open, |app, req, p| usage::get(app, req).await),
    route!(Patch "/dashboard/auth/preferences", Open, |app, req, p|
        auth::preferences(app, req).await
    ),
    route!(Post "/dashboard/contracts/provision", Open, |app, req, p|
        contracts::provision(app, req).await
    ),
    route!(Get "/dashboard/contracts/:tenantId/status", Open, |app, req, p|
        contracts::status(app, req, p.get("tenantId")?).await
    ),
    route!(Get "/dashboard/contracts", Open, |app, req, p| contracts::list(app, req).await),
    route!(Post "/dashboard/api-keys", Open, |app, req, p| api_keys::create(app, req).await),
    route!(Get "/dashboard/api-keys", Open, |app, req, p| api_keys::list(app, req).await),
    route!(Post "/dashboard/api-keys/:id/toggle", Open, |app, req, p|
        api_keys::toggle(app, req, p.get("id")?).await
    ),
    route!(Delete "/dashboard/api-keys/:id", Open, |app, req, p|
        api_keys::delete(app, req, p.get("id")?).await
    ),
    route!(Patch "/dashboard/tenant/retention", Open, |app, req, p|
        tenant::retention(app, req).await
    ),
    route!(Post "/admin/tenants/:tenantId/plan", Open, |app, req, p|
        admin::set_plan(app, req, p.get("tenantId")?).await
    ),
    route!(Get "/dev/mail", Dev, |app, req, p| mail::outbox(app, req).await),
    route!(Post "/api/v1/balance/delta", Open, |app, req, p| balance::emit(app, req).await),
    route!(Post "/api/v1/balance/delta/batch", Open, |app, req, p|
        balance::emit_batch(app, req).await
    ),
    route!(Get "/api/v1/balance/delta/:anchorId", Open, |app, req, p|
        balance::status(app, req, p.get("anchorId")?).await
    ),
    route!(Get "/api/v1/balance/derive/:customerId", Open, |app, req, p|
        ledgers::derive(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Post "/api/v1/balance/compare", Open, |app, req, p| ledgers::compare(app, req).await),
    route!(Get "/api/v1/balance/customers", Open, |app, req, p| ledgers::customers(app, req).await),
    route!(Get "/api/v1/balance/customers/:customerId", Open, |app, req, p|
        ledgers::customer(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Post "/api/v1/facts", Open, |app, req, p| facts::create(app, req).await),
    route!(Get "/api/v1/facts/:contentHash", Open, |app, req, p|
        facts::get(app, req, p.parse("contentHash", facts::content_hash_param)).await
    ),
    route!(Get "/api/v1/facts/:contentHash/verify", Open, |app, req, p|
        facts::verify(app, req, p.parse("contentHash", facts::content_hash_param)).await
    ),
    route!(Post "/api/v1/balance/checkpoint", Open, |app, req, p|
        proofs::checkpoint_create(app, req).await
    ),
    route!(Get "/api/v1/balance/checkpoints", Open, |app, req, p|
        proofs::checkpoint_list(app, req).await
    ),
    route!(Get "/api/v1/balance/receipt/:customerId", Open, |app, req, p|
        proofs::receipt(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Get "/api/v1/verify/:proofRoot", Public, |app, req, p|
        proofs::public_verify(app, req, p.parse("proofRoot", proofs::proof_root)?).await
    ),
    route!(Get "/api/v1/logs", Public, |app, req, p| proofs::log_list(app, &req).await),
    route!(Get "/api/v1/log/:env/checkpoint", Public, |app, req, p|
        proofs::log_checkpoint(app, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/key", Public, |app, req, p|
        proofs::log_key(app, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/heads", Public, |app, req, p|
        proofs::log_heads(app, req, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/proof/inclusion", Public, |app, req, p|
        proofs::log_inclusion(app, req, p.get("env")?).await
    ),
    route!(Get "/api/v1/log/:env/proof/consistency", Public, |app, req, p|
        proofs::log_consistency(app, req, p.get("env")?).await
    ),
    route!(Get "/verify/:proofRoot", Public, |app, req, p| page::verify(app, req).await),
    route!(Post "/dashboard/webhooks", Open, |app, req, p| webhooks::create(app, req).await),
    route!(Get "/dashboard/webhooks", Open, |app, req, p| webhooks::list(app, req).await),
    route!(Get "/dashboard/webhooks/:id", Open, |app, req, p|
        webhooks::get(app, req, p.get("id")?).await
    ),
    route!(Post "/dashboard/webhooks/:id/toggle", Open, |app, req, p|
        webhooks::toggle(app, req, p.get("id")?).await
    ),
    route!(Post "/dashboard/webhooks/:id/test", Open, |app, req, p|
        webhooks::test(app, req, p.get("id")?).await
    ),
    route!(Delete "/dashboard/webhooks/:id", Open, |app, req, p|
        webhooks::delete(app, req, p.get("id")?).await
    ),
    route!(Get "/dashboard/webhooks/:id/deliveries", Open, |app, req, p|
        webhooks::deliveries(app, req, p.get("id")?).await
    ),
    route!(Post "/dashboard/webhooks/:id/rotate-secret", Open, |app, req, p|
        webhooks::rotate_secret(app, req, p.get("id")?).await
    ),
    route!(Get "/api/v1/webhooks/keys", Public, |app, req, p| webhooks::keys(app, &req).await),
    route!(Post "/dev/bench/hash", Dev, |app, req, p| dev::bench_hash(app, req).await),
    route!(Post "/dev/log/grow", Dev, |app, req, p| dev::log_grow(app, req).await),
    route!(Get "/dev/log/leaf", Dev, |app, req, p| dev::log_leaf(app, req).await),
    route!(Post "/dev/retention", Dev, |app, req, p| dev::retention(app, req).await),
    route!(Get "/dashboard/logs/requests", Open, |app, req, p| logs::requests(app, req).await),
    route!(Get "/dashboard/logs/requests/:requestId", Open, |app, req, p|
        logs::request(app, req, p.get("requestId")?).await
    ),
    route!(Get "/dashboard/events", Open, |app, req, p| logs::events(app, req).await),
    route!(Get "/dashboard/events/:eventId", Open, |app, req, p|
        logs::event(app, req, p.get("eventId")?).await
    ),
    route!(Post "/dashboard/deliveries/:deliveryId/resend", Open, |app, req, p|
        logs::resend(app, req, p.get("deliveryId")?).await
    ),
    route!(Get "/dashboard/search", Open, |app, req, p| insights::search(app, req).await),
    route!(Get "/dashboard/usage/daily", Open, |app, req, p| insights::daily(app, req).await),
    route!(Get "/api/v1/balance/customers/:customerId/history", Open, |app, req, p|
        ledgers::history(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Post "/dashboard/auth/logout", Open, |app, req, p| auth::logout(app, req).await),
    route!(Get "/admin/shards", Open, |app, req, p| admin::shards(app, req).await),
    route!(Get "/log/:name/checkpoint", Public, |app, req, p|
        tiles::checkpoint(app, p.get("name")?).await
    ),
    route!(Get "/log/:name/tile/*tile", Public, |app, req, p|
        tiles::tile(app, p.get("name")?, p.parse("tile", tiles::parse_tile_path)).await
    ),
    route!(Get "/api/v1/logs/witnesses", Public, |app, req, p| proofs::log_witnesses(app).await),
    route!(Post "/dev/witness/fork", Dev, |app, req, p| dev::witness_fork(app, req).await),
    route!(Post "/api/v1/liabilities", Open, |app, req, p| liabilities::create(app, req).await),
    route!(Get "/api/v1/liabilities", Open, |app, req, p| liabilities::list(app, req).await),
    route!(Get "/api/v1/liabilities/:id", Open, |app, req, p|
        liabilities::get(app, req, p.get("id")?).await
    ),
    route!(Get "/api/v1/balance/customers/:customerId/liabilities-proof", Open, |app, req, p|
        liabilities::proof(app, req, p.parse("customerId", CustomerId::parse)).await
    ),
    route!(Post "/dev/liabilities/seed", Dev, |app, req, p| dev::liabilities_seed(app, req).await),
    route!(Get "/api/v1/agreement/liabilities-proof/:merkleRoot", Public, |app, req, p|
        liabilities::customer_proof(app, p.get("merkleRoot")?).await
    ),
    route!(Post "/dev/liabilities/start", Dev, |app, req, p| dev::liabilities_start(app, req).await),
];
