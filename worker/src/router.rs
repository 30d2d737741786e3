//! Every route of the service, in one table. `ROUTES` is the single source
//! that dispatch, request logging and the OpenAPI completeness test share.

use worker::{Method, Request, Response};

use crate::app::App;
use crate::auth::limit;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::http;
use crate::routes;

mod matching;
use matching::match_pattern;
pub use matching::{is_loopback_host, Params};

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
}

pub struct Route {
    pub method: Method,
    /// Path pattern; `:name` segments capture one path segment.
    pub pattern: &'static str,
    pub id: RouteId,
}

pub const ROUTES: &[Route] = &[
    Route {
        method: Method::Post,
        pattern: "/api/v1/balance/customers/:customerId/invitations",
        id: RouteId::AgreementInvite,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/agreement/invitation",
        id: RouteId::AgreementOpen,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/agreement/keys",
        id: RouteId::AgreementKey,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/agreement/statements",
        id: RouteId::AgreementStatement,
    },
    Route {
        method: Method::Get,
        pattern: "/health",
        id: RouteId::Health,
    },
    Route {
        method: Method::Get,
        pattern: "/openapi.json",
        id: RouteId::OpenApi,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/ping",
        id: RouteId::DevPingCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/dev/ping/:id",
        id: RouteId::DevPingGet,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/register",
        id: RouteId::AuthRegister,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/login",
        id: RouteId::AuthLogin,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/auth/verify",
        id: RouteId::AuthVerify,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/resend-verification-email",
        id: RouteId::AuthResendVerification,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/request-password-reset",
        id: RouteId::AuthRequestPasswordReset,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/reset-password",
        id: RouteId::AuthResetPassword,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/change-password",
        id: RouteId::AuthChangePassword,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/auth/profile",
        id: RouteId::AuthProfile,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/usage",
        id: RouteId::Usage,
    },
    Route {
        method: Method::Patch,
        pattern: "/dashboard/auth/preferences",
        id: RouteId::AuthPreferences,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/contracts/provision",
        id: RouteId::ContractsProvision,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/contracts/:tenantId/status",
        id: RouteId::ContractsStatus,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/contracts",
        id: RouteId::ContractsList,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/api-keys",
        id: RouteId::ApiKeysCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/api-keys",
        id: RouteId::ApiKeysList,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/api-keys/:id/toggle",
        id: RouteId::ApiKeysToggle,
    },
    Route {
        method: Method::Delete,
        pattern: "/dashboard/api-keys/:id",
        id: RouteId::ApiKeysDelete,
    },
    Route {
        method: Method::Patch,
        pattern: "/dashboard/tenant/retention",
        id: RouteId::TenantRetention,
    },
    Route {
        method: Method::Post,
        pattern: "/admin/tenants/:tenantId/plan",
        id: RouteId::AdminSetPlan,
    },
    Route {
        method: Method::Get,
        pattern: "/dev/mail",
        id: RouteId::DevMail,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/balance/delta",
        id: RouteId::BalanceEmit,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/balance/delta/batch",
        id: RouteId::BalanceBatch,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/delta/:anchorId",
        id: RouteId::BalanceStatus,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/derive/:customerId",
        id: RouteId::BalanceDerive,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/balance/compare",
        id: RouteId::BalanceCompare,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/customers",
        id: RouteId::BalanceCustomers,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/customers/:customerId",
        id: RouteId::BalanceCustomer,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/facts",
        id: RouteId::FactCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/facts/:contentHash",
        id: RouteId::FactGet,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/facts/:contentHash/verify",
        id: RouteId::FactVerify,
    },
    Route {
        method: Method::Post,
        pattern: "/api/v1/balance/checkpoint",
        id: RouteId::CheckpointCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/checkpoints",
        id: RouteId::CheckpointList,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/receipt/:customerId",
        id: RouteId::Receipt,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/verify/:proofRoot",
        id: RouteId::PublicVerify,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/logs",
        id: RouteId::LogList,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/log/:env/checkpoint",
        id: RouteId::LogCheckpoint,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/log/:env/key",
        id: RouteId::LogKey,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/log/:env/heads",
        id: RouteId::LogHeads,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/log/:env/proof/inclusion",
        id: RouteId::LogInclusion,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/log/:env/proof/consistency",
        id: RouteId::LogConsistency,
    },
    Route {
        method: Method::Get,
        pattern: "/verify/:proofRoot",
        id: RouteId::VerifyPage,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/webhooks",
        id: RouteId::WebhooksCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/webhooks",
        id: RouteId::WebhooksList,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/webhooks/:id",
        id: RouteId::WebhooksGet,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/webhooks/:id/toggle",
        id: RouteId::WebhooksToggle,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/webhooks/:id/test",
        id: RouteId::WebhooksTest,
    },
    Route {
        method: Method::Delete,
        pattern: "/dashboard/webhooks/:id",
        id: RouteId::WebhooksDelete,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/webhooks/:id/deliveries",
        id: RouteId::WebhooksDeliveries,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/bench/hash",
        id: RouteId::DevBenchHash,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/log/grow",
        id: RouteId::DevLogGrow,
    },
    Route {
        method: Method::Get,
        pattern: "/dev/log/leaf",
        id: RouteId::DevLogLeaf,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/retention",
        id: RouteId::DevRetention,
    },
    Route {
        method: Method::Get,
        pattern: "/admin/shards",
        id: RouteId::AdminShards,
    },
];

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
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
