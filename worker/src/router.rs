//! Every route of the service, in one table. `ROUTES` is the single source
//! that dispatch, request logging and the OpenAPI completeness test share.

use worker::{Method, Request, Response};

use crate::app::App;
use crate::auth::limit;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::routes;

mod matching;
mod table;
use matching::match_pattern;
pub use matching::{is_loopback_host, Params};
pub use table::ROUTES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteId {
    Health,
    OpenApi,
    DevPingCreate,
    DevPingGet,
    AuthRegister,
    AuthLogin,
    AuthVerify,
    AuthResendVerification,
    AuthRequestPasswordReset,
    AuthResetPassword,
    AuthChangePassword,
    AuthProfile,
    Usage,
    AuthPreferences,
    ContractsProvision,
    ContractsStatus,
    ContractsList,
    ApiKeysCreate,
    ApiKeysList,
    ApiKeysToggle,
    ApiKeysDelete,
    TenantRetention,
    AdminSetPlan,
    DevMail,
    BalanceEmit,
    BalanceBatch,
    BalanceStatus,
    BalanceDerive,
    BalanceCompare,
    BalanceCustomers,
    BalanceCustomer,
    FactCreate,
    FactGet,
    FactVerify,
    CheckpointCreate,
    CheckpointList,
    Receipt,
    PublicVerify,
    LogList,
    LogCheckpoint,
    LogKey,
    LogHeads,
    LogInclusion,
    LogConsistency,
    VerifyPage,
    WebhooksCreate,
    WebhooksList,
    WebhooksGet,
    WebhooksToggle,
    WebhooksTest,
    WebhooksDelete,
    WebhooksDeliveries,
    DevBenchHash,
    DevLogGrow,
    DevLogLeaf,
    DevRetention,
    AdminShards,
    AgreementInvite,
    AgreementOpen,
    AgreementKey,
    AgreementStatement,
    WebhooksRotateSecret,
    WebhookKeys,
    RequestLogList,
    RequestLogGet,
    EventsList,
    EventsGet,
    DeliveryResend,
    Search,
    UsageDaily,
    BalanceHistory,
    AuthLogout,
    TilesCheckpoint,
    TilesTile,
    LogWitnesses,
    DevWitnessFork,
    LiabilitiesCreate,
    LiabilitiesList,
    LiabilitiesGet,
    LiabilitiesProof,
    DevLiabilitiesSeed,
    LiabilitiesCustomerProof,
}

pub struct Route {
    pub method: Method,
    /// Path pattern; `:name` segments capture one path segment.
    pub pattern: &'static str,
    pub id: RouteId,
}

/// Finds the route for a request: `Ok((route, params))`, or 404 / 405.
pub fn resolve(method: &Method, path: &str) -> ApiResult<(&'static Route, Params)> {
    let mut path_matched = false;
    for route in ROUTES {
        if let Some(params) = match_pattern(route.pattern, path) {
            if &route.method == method {
                return Ok((route, params));
            }
            path_matched = true;
        }
    }
    if path_matched {
        Err(ApiError::MethodNotAllowed(format!(
            "{method} is not supported on {path}"
        )))
    } else {
        Err(ApiError::coded(
            ErrorCode::RouteNotFound,
            format!("No route for {method} {path}"),
        ))
    }
}

impl RouteId {
    /// Routes anyone can call without a key or session, limited per network (`limit::PUBLIC_RATE`).
    pub fn is_public_read(self) -> bool {
        matches!(
            self,
            RouteId::PublicVerify
                | RouteId::LogList
                | RouteId::LogCheckpoint
                | RouteId::LogKey
                | RouteId::LogHeads
                | RouteId::LogInclusion
                | RouteId::LogConsistency
                | RouteId::VerifyPage
                | RouteId::AgreementOpen
                | RouteId::AgreementKey
                | RouteId::AgreementStatement
                | RouteId::WebhookKeys
                | RouteId::TilesCheckpoint
                | RouteId::TilesTile
                | RouteId::LogWitnesses
                | RouteId::LiabilitiesCustomerProof
        )
    }

    /// The `/dev/*` routes: DEV_MODE only, and only when the request came
    /// to a loopback host.
    pub fn is_dev(self) -> bool {
        matches!(
            self,
            RouteId::DevPingCreate
                | RouteId::DevPingGet
                | RouteId::DevMail
                | RouteId::DevBenchHash
                | RouteId::DevLogGrow
                | RouteId::DevLogLeaf
                | RouteId::DevRetention
                | RouteId::DevWitnessFork
                | RouteId::DevLiabilitiesSeed
        )
    }
}

pub async fn dispatch(app: &App, req: Request, id: RouteId, params: Params) -> ApiResult<Response> {
    if id.is_dev() && !is_loopback_host(req.url()?.host_str()) {
        return Err(ApiError::NotFound("Not found".to_string()));
    }
    if id.is_public_read() {
        let address = http::header(&req, "cf-connecting-ip");
        let bucket = limit::client_network(address.as_deref());
        limit::take(app, &bucket, limit::public_rate(app)).await?;
    }
    match id {
        RouteId::Health => routes::health::get(),
        RouteId::OpenApi => routes::openapi::get(),
        RouteId::DevPingCreate => routes::dev::ping_create(app, req).await,
        RouteId::DevPingGet => routes::dev::ping_get(app, params.get("id")?).await,
        RouteId::DevBenchHash => routes::dev::bench_hash(app, req).await,
        RouteId::DevLogGrow => routes::dev::log_grow(app, req).await,
        RouteId::DevLogLeaf => routes::dev::log_leaf(app, req).await,
        RouteId::DevRetention => routes::dev::retention(app, req).await,
        RouteId::DevWitnessFork => routes::dev::witness_fork(app, req).await,
        RouteId::LogWitnesses => routes::proofs::log_witnesses(app).await,
        RouteId::AuthRegister => routes::auth::register(app, req).await,
        RouteId::AuthLogin => routes::auth::login(app, req).await,
        RouteId::AuthVerify => routes::auth::verify(app, req).await,
        RouteId::AuthResendVerification => routes::auth::resend_verification(app, req).await,
        RouteId::AuthRequestPasswordReset => routes::auth::request_password_reset(app, req).await,
        RouteId::AuthResetPassword => routes::auth::reset_password(app, req).await,
        RouteId::AuthChangePassword => routes::auth::change_password(app, req).await,
        RouteId::AuthProfile => routes::auth::profile(app, req).await,
        RouteId::Usage => routes::usage::get(app, req).await,
        RouteId::AuthPreferences => routes::auth::preferences(app, req).await,
        RouteId::ContractsProvision => routes::contracts::provision(app, req).await,
        RouteId::ContractsStatus => {
            routes::contracts::status(app, req, params.get("tenantId")?).await
        }
        RouteId::ContractsList => routes::contracts::list(app, req).await,
        RouteId::ApiKeysCreate => routes::api_keys::create(app, req).await,
        RouteId::ApiKeysList => routes::api_keys::list(app, req).await,
        RouteId::ApiKeysToggle => routes::api_keys::toggle(app, req, params.get("id")?).await,
        RouteId::ApiKeysDelete => routes::api_keys::delete(app, req, params.get("id")?).await,
        RouteId::TenantRetention => routes::tenant::retention(app, req).await,
        RouteId::AdminSetPlan => routes::admin::set_plan(app, req, params.get("tenantId")?).await,
        RouteId::AdminShards => routes::admin::shards(app, req).await,
        RouteId::DevMail => routes::mail::outbox(app, req).await,
        RouteId::BalanceEmit => routes::balance::emit(app, req).await,
        RouteId::BalanceBatch => routes::balance::emit_batch(app, req).await,
        RouteId::BalanceStatus => routes::balance::status(app, req, params.get("anchorId")?).await,
        RouteId::BalanceDerive => {
            routes::ledgers::derive(app, req, params.get("customerId")?).await
        }
        RouteId::BalanceCompare => routes::ledgers::compare(app, req).await,
        RouteId::AgreementInvite => {
            routes::agreement::invite(app, req, params.get("customerId")?).await
        }
        RouteId::AgreementOpen => routes::agreement::open(app, req).await,
        RouteId::AgreementKey => routes::agreement::register_key(app, req).await,
        RouteId::AgreementStatement => routes::agreement::statement(app, req).await,
        RouteId::AuthLogout => routes::auth::logout(app, req).await,
        RouteId::BalanceCustomers => routes::ledgers::customers(app, req).await,
        RouteId::BalanceCustomer => {
            routes::ledgers::customer(app, req, params.get("customerId")?).await
        }
        RouteId::FactCreate => routes::facts::create(app, req).await,
        RouteId::FactGet => routes::facts::get(app, req, params.get("contentHash")?).await,
        RouteId::FactVerify => routes::facts::verify(app, req, params.get("contentHash")?).await,
        RouteId::CheckpointCreate => routes::proofs::checkpoint_create(app, req).await,
        RouteId::CheckpointList => routes::proofs::checkpoint_list(app, req).await,
        RouteId::Receipt => routes::proofs::receipt(app, req, params.get("customerId")?).await,
        RouteId::PublicVerify => {
            routes::proofs::public_verify(app, req, params.get("proofRoot")?).await
        }
        RouteId::LogList => routes::proofs::log_list(app, &req).await,
        RouteId::LogCheckpoint => routes::proofs::log_checkpoint(app, params.get("env")?).await,
        RouteId::LogKey => routes::proofs::log_key(app, params.get("env")?).await,
        RouteId::LogHeads => routes::proofs::log_heads(app, req, params.get("env")?).await,
        RouteId::LogInclusion => routes::proofs::log_inclusion(app, req, params.get("env")?).await,
        RouteId::LogConsistency => {
            routes::proofs::log_consistency(app, req, params.get("env")?).await
        }
        RouteId::VerifyPage => routes::page::verify(app, req).await,
        RouteId::WebhooksCreate => routes::webhooks::create(app, req).await,
        RouteId::WebhooksList => routes::webhooks::list(app, req).await,
        RouteId::WebhooksGet => routes::webhooks::get(app, req, params.get("id")?).await,
        RouteId::WebhooksToggle => routes::webhooks::toggle(app, req, params.get("id")?).await,
        RouteId::WebhooksTest => routes::webhooks::test(app, req, params.get("id")?).await,
        RouteId::WebhooksDelete => routes::webhooks::delete(app, req, params.get("id")?).await,
        RouteId::WebhooksDeliveries => {
            routes::webhooks::deliveries(app, req, params.get("id")?).await
        }
        RouteId::WebhooksRotateSecret => {
            routes::webhooks::rotate_secret(app, req, params.get("id")?).await
        }
        RouteId::WebhookKeys => routes::webhooks::keys(app, &req).await,
        RouteId::RequestLogList => routes::logs::requests(app, req).await,
        RouteId::RequestLogGet => routes::logs::request(app, req, params.get("requestId")?).await,
        RouteId::EventsList => routes::logs::events(app, req).await,
        RouteId::EventsGet => routes::logs::event(app, req, params.get("eventId")?).await,
        RouteId::DeliveryResend => routes::logs::resend(app, req, params.get("deliveryId")?).await,
        RouteId::Search => routes::insights::search(app, req).await,
        RouteId::UsageDaily => routes::insights::daily(app, req).await,
        RouteId::BalanceHistory => {
            routes::ledgers::history(app, req, params.get("customerId")?).await
        }
        RouteId::TilesCheckpoint => routes::tiles::checkpoint(app, params.get("name")?).await,
        RouteId::TilesTile => {
            routes::tiles::tile(app, params.get("name")?, params.get("tile")?).await
        }
        RouteId::LiabilitiesCreate => routes::liabilities::create(app, req).await,
        RouteId::DevLiabilitiesSeed => routes::dev::liabilities_seed(app, req).await,
        RouteId::LiabilitiesList => routes::liabilities::list(app, req).await,
        RouteId::LiabilitiesGet => routes::liabilities::get(app, req, params.get("id")?).await,
        RouteId::LiabilitiesProof => {
            routes::liabilities::proof(app, req, params.get("customerId")?).await
        }
        RouteId::LiabilitiesCustomerProof => {
            routes::liabilities::customer_proof(app, params.get("merkleRoot")?).await
        }
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
