//! The route table: every route's method, path pattern and id, in the
//! order `resolve` tries them.

use worker::Method;

use super::{Route, RouteId};

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
        pattern: "/dashboard/webhooks/:id/rotate-secret",
        id: RouteId::WebhooksRotateSecret,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/webhooks/keys",
        id: RouteId::WebhookKeys,
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
        pattern: "/dashboard/logs/requests",
        id: RouteId::RequestLogList,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/logs/requests/:requestId",
        id: RouteId::RequestLogGet,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/events",
        id: RouteId::EventsList,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/events/:eventId",
        id: RouteId::EventsGet,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/deliveries/:deliveryId/resend",
        id: RouteId::DeliveryResend,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/search",
        id: RouteId::Search,
    },
    Route {
        method: Method::Get,
        pattern: "/dashboard/usage/daily",
        id: RouteId::UsageDaily,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/customers/:customerId/history",
        id: RouteId::BalanceHistory,
    },
    Route {
        method: Method::Post,
        pattern: "/dashboard/auth/logout",
        id: RouteId::AuthLogout,
    },
    Route {
        method: Method::Get,
        pattern: "/admin/shards",
        id: RouteId::AdminShards,
    },
    // C2SP tlog-tiles (issue 28, docs/proofs-api.md "Tiles"): each log's
    // monitoring prefix is /log/<name>/.
    Route {
        method: Method::Get,
        pattern: "/log/:name/checkpoint",
        id: RouteId::TilesCheckpoint,
    },
    Route {
        method: Method::Get,
        pattern: "/log/:name/tile/*tile",
        id: RouteId::TilesTile,
    },
    // Witnesses (issue 28): each log's witness status, and the DEV_MODE
    // fork fault.
    Route {
        method: Method::Get,
        pattern: "/api/v1/logs/witnesses",
        id: RouteId::LogWitnesses,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/witness/fork",
        id: RouteId::DevWitnessFork,
    },
    // Issue 31: liabilities statements (docs/liabilities.md).
    Route {
        method: Method::Post,
        pattern: "/api/v1/liabilities",
        id: RouteId::LiabilitiesCreate,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/liabilities",
        id: RouteId::LiabilitiesList,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/liabilities/:id",
        id: RouteId::LiabilitiesGet,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/balance/customers/:customerId/liabilities-proof",
        id: RouteId::LiabilitiesProof,
    },
    Route {
        method: Method::Post,
        pattern: "/dev/liabilities/seed",
        id: RouteId::DevLiabilitiesSeed,
    },
    Route {
        method: Method::Get,
        pattern: "/api/v1/agreement/liabilities-proof/:merkleRoot",
        id: RouteId::LiabilitiesCustomerProof,
    },
];
