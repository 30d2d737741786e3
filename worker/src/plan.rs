//! Plans, their monthly delta quotas and per-key rates. Figures and
//! reasons: docs/dashboard.md. Below the store: a stored plan is read into
//! a `Plan` at the store edge.

use bvs_core::types::Env;
use serde::{Deserialize, Deserializer};

use crate::ids::TenantId;
use crate::limiter::Rate;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Free,
    Pilot,
    Growth,
    Enterprise,
}

/// Free: 10 verified deltas a month. // spec: Limits, "Free plan quota"
pub const FREE_DELTAS_PER_MONTH: u64 = 10;
/// Pilot: a first production integration. // spec: silent; docs/dashboard.md
pub const PILOT_DELTAS_PER_MONTH: u64 = 10_000;
/// Growth: a business in production. // spec: silent; docs/dashboard.md
pub const GROWTH_DELTAS_PER_MONTH: u64 = 1_000_000;
/// Enterprise: "custom" in the spec; a generous default an operator
/// contract would raise. // spec: silent; docs/dashboard.md
pub const ENTERPRISE_DELTAS_PER_MONTH: u64 = 100_000_000;

/// Per-key rate, Sandbox. // spec: Limits, "Rate, Sandbox"
pub const RATE_SANDBOX: Rate = Rate {
    rate_per_sec: 10.0,
    burst: 20.0,
};
/// Per-key rate, Production. // spec: Limits, "Rate, Production"
pub const RATE_PRODUCTION: Rate = Rate {
    rate_per_sec: 100.0,
    burst: 200.0,
};
/// Per-key rate, Enterprise, both environments ("custom" in the spec):
/// ten times Production. // spec: Limits, "Rate, Enterprise"
pub const RATE_ENTERPRISE: Rate = Rate {
    rate_per_sec: 1000.0,
    burst: 2000.0,
};

/// Facts a tenant may record per calendar month (UTC), per environment.
/// // spec: silent; docs/security.md "Limits per plan"
pub const FACTS_PER_MONTH: [u64; 4] = [100, 100_000, 1_000_000, 100_000_000];
/// Checkpoints a tenant may create per calendar month (UTC), per environment.
/// // spec: silent; docs/security.md "Limits per plan"
pub const CHECKPOINTS_PER_MONTH: [u64; 4] = [50, 10_000, 100_000, 10_000_000];
/// Bytes of fact and delta content a tenant may store per environment (the
/// shared ledger database holds 10 GB). Free: 1 MiB, sixteen 64 KiB facts.
/// // spec: silent; docs/security.md "Limits per plan"
pub const STORAGE_BYTES: [u64; 4] = [1 << 20, 256 << 20, 1 << 30, 4 << 30];
/// Deltas a tenant may have emitted and not yet verified, per environment
/// (its shard): past it, emit and batch answer 429 `verification_backlog`
/// with `Retry-After` and write nothing (issue 27: backpressure instead
/// of an unbounded backlog). Enterprise at least 50,000 (the large-history
/// test queues that many at once). // spec: silent; docs/scaling.md "Backpressure"
pub const BACKLOG_MAX: [u64; 4] = [1_000, 10_000, 25_000, 100_000];
/// API keys a tenant may hold at once (deleted ones do not count).
/// // spec: silent; docs/security.md "Limits per plan"
pub const API_KEYS_MAX: [u64; 4] = [20, 100, 250, 1000];
/// Invitations a tenant may issue per calendar month (UTC), per
/// environment: each is a row and a page a stranger can open.
/// // spec: silent; docs/security.md "Limits per plan"
pub const INVITATIONS_PER_MONTH: [u64; 4] = [20, 1_000, 10_000, 1_000_000];
/// API keys a tenant may create per calendar month (UTC), deleted ones
/// included: twice `API_KEYS_MAX`, so a tenant holding its whole cap can
/// still rotate every key once a month, while create/delete cycles stop
/// there (before, they had no bound at all).
/// // spec: silent; docs/security.md "Limits per plan"
pub const API_KEY_CREATIONS_PER_MONTH: [u64; 4] = [40, 200, 500, 2000];
/// Webhook endpoints a tenant may hold at once.
/// // spec: silent; docs/security.md "Limits per plan"
pub const WEBHOOKS_MAX: [u64; 4] = [5, 20, 50, 100];

/// Days the request log keeps a request, per plan (shortened by the
/// tenant's retention window). // spec: silent; docs/dashboard.md "Request log"
pub const REQUEST_LOG_DAYS: [u64; 4] = [1, 7, 14, 30];
/// Bytes of request log a tenant may write per day and environment (rows
/// past it are not logged): with `REQUEST_LOG_DAYS`, the log's ceiling is
/// 1 MiB, 112 MiB, 896 MiB and 3.75 GiB. // spec: silent; docs/dashboard.md
pub const REQUEST_LOG_BYTES_PER_DAY: [u64; 4] = [1 << 20, 16 << 20, 64 << 20, 128 << 20];

impl Plan {
    pub const ALL: [Plan; 4] = [Plan::Free, Plan::Pilot, Plan::Growth, Plan::Enterprise];

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Pilot => "pilot",
            Plan::Growth => "growth",
            Plan::Enterprise => "enterprise",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Plan::Free => "Free",
            Plan::Pilot => "Pilot",
            Plan::Growth => "Growth",
            Plan::Enterprise => "Enterprise",
        }
    }

    pub fn parse(text: &str) -> Option<Plan> {
        Plan::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// A stored plan name; an unknown one is a bug, answered as Free.
    pub fn from_stored(text: &str) -> Plan {
        Plan::parse(text).unwrap_or(Plan::Free)
    }

    /// Production is for Pilot and above. // spec: Limits, "Production availability"
    pub fn allows_production(self) -> bool {
        self != Plan::Free
    }

    /// Verified deltas a tenant may record per calendar month (UTC) in
    /// `env`. Each environment counts on its own: sandbox traffic never eats
    /// the production quota.
    pub fn deltas_per_month(self, env: Env) -> u64 {
        match (self, env) {
            (Plan::Free, Env::Sandbox) => FREE_DELTAS_PER_MONTH,
            (Plan::Free, Env::Production) => 0,
            (Plan::Pilot, _) => PILOT_DELTAS_PER_MONTH,
            (Plan::Growth, _) => GROWTH_DELTAS_PER_MONTH,
            (Plan::Enterprise, _) => ENTERPRISE_DELTAS_PER_MONTH,
        }
    }

    /// This plan's column in the per-plan limit tables above.
    fn index(self) -> usize {
        match self {
            Plan::Free => 0,
            Plan::Pilot => 1,
            Plan::Growth => 2,
            Plan::Enterprise => 3,
        }
    }

    /// Deltas emitted and not yet verified, in one environment.
    pub fn backlog_max(self) -> u64 {
        BACKLOG_MAX[self.index()]
    }

    /// Facts per calendar month in one environment.
    pub fn facts_per_month(self) -> u64 {
        FACTS_PER_MONTH[self.index()]
    }

    /// Checkpoints per calendar month in one environment.
    pub fn checkpoints_per_month(self) -> u64 {
        CHECKPOINTS_PER_MONTH[self.index()]
    }

    /// Bytes of fact and delta content stored in one environment.
    pub fn storage_bytes(self) -> u64 {
        STORAGE_BYTES[self.index()]
    }

    /// API keys held at once.
    pub fn api_keys_max(self) -> u64 {
        API_KEYS_MAX[self.index()]
    }

    /// Invitations per calendar month in one environment.
    pub fn invitations_per_month(self) -> u64 {
        INVITATIONS_PER_MONTH[self.index()]
    }

    /// API keys created per calendar month, deleted ones included.
    pub fn api_key_creations_per_month(self) -> u64 {
        API_KEY_CREATIONS_PER_MONTH[self.index()]
    }

    /// Webhook endpoints held at once.
    pub fn webhooks_max(self) -> u64 {
        WEBHOOKS_MAX[self.index()]
    }

    /// Days the request log keeps a request.
    pub fn request_log_days(self) -> u64 {
        REQUEST_LOG_DAYS[self.index()]
    }

    /// Bytes of request log written per day and environment.
    pub fn request_log_bytes_per_day(self) -> u64 {
        REQUEST_LOG_BYTES_PER_DAY[self.index()]
    }

    /// The per-key token bucket.
    pub fn rate(self, env: Env) -> Rate {
        match (self, env) {
            (Plan::Enterprise, _) => RATE_ENTERPRISE,
            (_, Env::Sandbox) => RATE_SANDBOX,
            (_, Env::Production) => RATE_PRODUCTION,
        }
    }
}

/// A stored plan column, read into its type (see `Plan::from_stored`).
///
/// # Errors
/// Only when the column is not text.
pub fn stored<'de, D: Deserializer<'de>>(d: D) -> Result<Plan, D::Error> {
    Ok(Plan::from_stored(&String::deserialize(d)?))
}

/// Whose quota: a tenant's, in one environment, on its plan (the
/// quota's subject; here, beside the plan, so that `auth` names it without
/// depending on `quota`).
pub struct Account<'a> {
    pub tenant_id: &'a TenantId,
    pub env: Env,
    pub plan: Plan,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paid_plans_reach_production() {
        assert!(!Plan::Free.allows_production());
        assert!(Plan::Pilot.allows_production());
        assert_eq!(Plan::Free.deltas_per_month(Env::Sandbox), 10);
        assert_eq!(Plan::Free.deltas_per_month(Env::Production), 0);
    }

    #[test]
    fn enterprise_has_a_higher_rate_than_the_spec_defaults() {
        assert_eq!(Plan::Growth.rate(Env::Sandbox), RATE_SANDBOX);
        assert_eq!(Plan::Growth.rate(Env::Production), RATE_PRODUCTION);
        assert!(Plan::Enterprise.rate(Env::Sandbox).rate_per_sec > RATE_PRODUCTION.rate_per_sec);
    }
}
