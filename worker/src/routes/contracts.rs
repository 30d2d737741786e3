//! `/dashboard/contracts*`: a tenant's environments.

use bvs_core::time::format_iso_ms;
use bvs_core::types::Env;
use serde::Serialize;
use worker::{Request, Response};

use crate::app::App;
use crate::auth;
use crate::auth::contracts::{self, ContractStatus};
use crate::auth::Session;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ids::{ContractId, TenantId};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContractView {
    id: ContractId,
    tenant_id: TenantId,
    environment: &'static str,
    status: String,
    provisioned_at: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EnvironmentStatus {
    environment: &'static str,
    status: String,
    provisioned_at: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusView {
    tenant_id: TenantId,
    environments: Vec<EnvironmentStatus>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProvisionView {
    tenant_id: TenantId,
    environment: &'static str,
    status: &'static str,
    message: String,
}

#[allow(clippy::cast_possible_wrap)]
fn iso(ms: Option<u64>) -> Option<String> {
    ms.map(|m| format_iso_ms(m as i64))
}

/// `POST /dashboard/contracts/provision` `{environment: testnet|mainnet}`.
///
/// Setup (the environment's log: empty tree and first signed tree head)
/// runs before the reply; the reply reports the accepted transition,
/// `provisioning`, and the status route shows where it ended (`active`,
/// or `error`).
pub async fn provision(app: &App, mut req: Request, session: Session) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let text = f.required("environment");
    let env = if f.problems.is_empty() {
        f.check(Env::parse_contract_name("environment", &text))
    } else {
        None
    };
    f.finish()?;
    let env = env.ok_or_else(|| ApiError::internal("validated environment missing"))?;
    session.require_verified()?;
    let tenant_id = session.tenant_id().clone();
    contracts::provision(app, &tenant_id, env).await?;
    let view = ProvisionView {
        tenant_id,
        environment: env.contract_name(),
        status: "provisioning",
        message: format!(
            "{} is being provisioned; it usually takes under 30 seconds. Follow it with \
             GET /dashboard/contracts/:tenantId/status",
            auth::env_label(env)
        ),
    };
    http::dashboard(201, &view, Some("Provisioning started"))
}

/// `GET /dashboard/contracts/:tenantId/status`: only the caller's tenant;
/// any other id is 404.
pub async fn status(app: &App, session: Session, tenant_id: &TenantId) -> ApiResult<Response> {
    if session.tenant_id() != tenant_id {
        return Err(ApiError::NotFound(format!("No tenant {tenant_id}")));
    }
    let rows = contracts::of_tenant(app, tenant_id).await?;
    let mut environments = Vec::with_capacity(Env::ALL.len());
    for env in Env::ALL {
        let row = rows.iter().find(|r| r.env == env);
        environments.push(EnvironmentStatus {
            environment: env.contract_name(),
            status: row
                .map_or(ContractStatus::NotProvisioned, |r| r.status)
                .as_str()
                .to_string(),
            provisioned_at: iso(row.and_then(|r| r.provisioned_at)),
        });
    }
    http::dashboard(
        200,
        &StatusView {
            tenant_id: tenant_id.clone(),
            environments,
        },
        None,
    )
}

/// `GET /dashboard/contracts`: the tenant's contracts.
pub async fn list(app: &App, session: Session) -> ApiResult<Response> {
    let rows = contracts::of_tenant(app, session.tenant_id()).await?;
    let mut views = Vec::with_capacity(rows.len());
    for r in rows {
        let env = r.env;
        views.push(ContractView {
            id: r.id,
            tenant_id: r.tenant_id,
            environment: env.contract_name(),
            status: r.status.as_str().to_string(),
            provisioned_at: iso(r.provisioned_at),
        });
    }
    http::dashboard(200, &views, None)
}
