//! Client side of the rate limiter Durable Object (`crate::limiter`).

use std::cell::RefCell;
use std::collections::BTreeMap;

use worker::{Method, Request, RequestInit};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::limiter::Answer;
pub use crate::limiter::Rate;

/// Binding of the `RateLimiter` Durable Object namespace (wrangler.toml).
pub const LIMITER_BINDING: &str = "LIMITER";

/// Failed logins per e-mail: 10 at once, then one every 30 seconds (120 an
/// hour at most, which makes online guessing of a real password hopeless).
/// A successful login refills the bucket.
pub const LOGIN_FAILURES: Rate = Rate::new(1.0 / 30.0, 10.0);

/// Failed logins per client network (`client_network`), whatever the
/// e-mail: 30 at once, then one every 2 seconds, so one network cannot try
/// a common password against many accounts (password spraying). Every
/// attempt takes a token and a successful one gives it back.
pub const LOGIN_FAILURES_PER_NETWORK: Rate = Rate::new(0.5, 30.0);

/// Registrations per client network (`client_network`): 5 at once, then
/// one every 12 minutes (5 an hour). A registration creates a tenant and
/// runs the password KDF: an office signing up its team fits, a script
/// creating accounts does not. `REGISTRATIONS_PER_NETWORK_PER_HOUR` (a
/// var) replaces the figure; docs/security.md.
pub const REGISTRATIONS_PER_NETWORK: Rate = Rate::new(5.0 / 3600.0, 5.0);

/// The registration limit for a request from `address`: `None` when it
/// does not apply. The var `REGISTRATIONS_PER_NETWORK_PER_HOUR` (a
/// positive number) replaces both the hourly rate and the burst; in
/// DEV_MODE, `REGISTRATION_LIMIT_EXEMPT_LOOPBACK` = `true` exempts
/// requests from a loopback address or none (a test harness on loopback,
/// which `wrangler dev` names as such: a request through Cloudflare has
/// its client's address), so black-box tests can register hundreds of
/// tenants while a test that sends another `CF-Connecting-IP` still meets
/// the limit.
pub fn registrations_rate(app: &App, address: Option<&str>) -> Option<Rate> {
    let loopback = address.is_none_or(|a| {
        a.trim()
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
    });
    let exempt = app.dev_mode()
        && loopback
        && app.var("REGISTRATION_LIMIT_EXEMPT_LOOPBACK").as_deref() == Some("true");
    if exempt {
        return None;
    }
    let per_hour = app
        .var("REGISTRATIONS_PER_NETWORK_PER_HOUR")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r > 0.0);
    Some(per_hour.map_or(REGISTRATIONS_PER_NETWORK, |n| Rate {
        rate_per_sec: n / 3600.0,
        burst: n,
    }))
}

/// Mails (verification and reset) per e-mail address: 5 at once, then one
/// every 2 minutes, so the service cannot be used to flood a mailbox.
pub const MAILS_PER_ADDRESS: Rate = Rate::new(1.0 / 120.0, 5.0);

/// Public routes (`/api/v1/verify/*`, `/api/v1/log/*`, `/verify/*`): per
/// client network, 20 requests/s with a burst of 60.
pub const PUBLIC_RATE: Rate = Rate::new(20.0, 60.0);

/// The public routes' rate: `PUBLIC_RATE`, except that in DEV_MODE the var
/// `PUBLIC_RATE_PER_SEC` (a positive number) may replace its refill rate,
/// so a test's burst is limited however slowly a loaded machine serves it
/// (tests/tests/isolation.rs). The burst stays.
pub fn public_rate(app: &App) -> Rate {
    let dev_rate = app
        .dev_mode()
        .then(|| app.var("PUBLIC_RATE_PER_SEC"))
        .flatten()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r > 0.0);
    dev_rate.map_or(PUBLIC_RATE, |rate_per_sec| Rate {
        rate_per_sec,
        burst: PUBLIC_RATE.burst,
    })
}

/// The network a client address belongs to, as a bucket name: an IPv4
/// address is its own network, an IPv6 address counts as its /64 (one
/// subscriber usually holds a whole /64, so per-address limits would not
/// bind). Anything unreadable shares one bucket.
pub fn client_network(address: Option<&str>) -> String {
    match address.map(str::trim).map(str::parse::<std::net::IpAddr>) {
        Some(Ok(std::net::IpAddr::V4(v4))) => format!("net:{v4}"),
        Some(Ok(std::net::IpAddr::V6(v6))) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("net:{v4}"),
            None => {
                let s = v6.segments();
                format!("net:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        _ => "net:unknown".to_string(),
    }
}

/// Takes one token from bucket `name`; 429 with the whole seconds to wait
/// when there is none.
///
/// # Errors
/// `ApiError::RateLimited` when the bucket is empty; internal error when
/// the limiter cannot be reached.
pub async fn take(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    let verdict = call(app, "take", name, rate, 1).await?;
    if verdict.allowed {
        Ok(())
    } else {
        Err(ApiError::RateLimited {
            retry_after_secs: verdict.retry_after_secs,
        })
    }
}

/// How much of a second's rate an isolate leases from a key's bucket at
/// once (issue 16): a lease of `rate × 0.1` tokens (10 at 100/s, 100 at
/// 1000/s; no lease below 20/s) is taken from the Durable Object in one
/// call and spent in the isolate, so most requests under the limit make no
/// limiter call. Every request served still spent a token of the shared
/// bucket, so the limit is never exceeded; tokens an isolate leased and did
/// not spend within [`LEASE_MS`] are forfeited, which can only make the
/// limit stricter, by less than one lease per isolate. Near the limit (the
/// bucket cannot give a whole lease) requests take one token each, as
/// without a lease. Measured: docs/performance.md.
const LEASE_SECS: f64 = 0.1;
/// How long leased tokens stay spendable in the isolate.
pub const LEASE_MS: u64 = 1000;
/// Buckets an isolate keeps leases for; past it, the leases are dropped.
const LEASES_MAX: usize = 10_000;

#[derive(Clone, Copy)]
struct Lease {
    tokens: u64,
    until_ms: u64,
    /// The bucket's whole tokens left after the lease was taken.
    remaining: u64,
    reset_secs: u64,
}

thread_local! {
    static LEASES: RefCell<BTreeMap<String, Lease>> = const { RefCell::new(BTreeMap::new()) };
}

/// Tokens one lease takes at `rate` (1: no lease).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn lease_size(rate: Rate) -> u64 {
    ((rate.rate_per_sec * LEASE_SECS).floor() as u64).clamp(1, rate.burst.max(1.0) as u64)
}

/// Spends one leased token of `name`, if the isolate holds a live one:
/// the bucket's state to report.
fn spend_leased(name: &str, now_ms: u64) -> Option<crate::app::RateLimitState> {
    LEASES.with(|leases| {
        let mut leases = leases.borrow_mut();
        let lease = leases.get_mut(name)?;
        if lease.tokens == 0 || now_ms >= lease.until_ms {
            leases.remove(name);
            return None;
        }
        lease.tokens -= 1;
        Some(crate::app::RateLimitState {
            limit: 0,
            remaining: lease.remaining + lease.tokens,
            reset_secs: lease.reset_secs.max(1),
        })
    })
}

/// Whether the isolate holds a live leased token of `name` (nothing is
/// spent): the next request of that bucket is very likely not limited.
pub fn holds_lease(name: &str, now_ms: u64) -> bool {
    LEASES.with(|leases| {
        leases
            .borrow()
            .get(name)
            .is_some_and(|l| l.tokens > 0 && now_ms < l.until_ms)
    })
}

fn keep_lease(name: &str, lease: Lease) {
    LEASES.with(|leases| {
        let mut leases = leases.borrow_mut();
        if leases.len() >= LEASES_MAX {
            leases.clear();
        }
        leases.insert(name.to_string(), lease);
    });
}

/// Like `take`, and records the bucket's state on `app` so the response
/// carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
/// (for API-key requests: success and 429 alike). Tokens are leased to the
/// isolate a tenth of a second's rate at a time ([`lease_size`]).
///
/// # Errors
/// As `take`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub async fn take_reported(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    let limit = rate.burst.max(0.0).floor() as u64;
    let size = lease_size(rate);
    if size > 1 {
        if let Some(state) = spend_leased(name, app.now_ms) {
            app.set_rate_limit(crate::app::RateLimitState { limit, ..state });
            return Ok(());
        }
        let answer = call(app, "take", name, rate, size).await?;
        if answer.allowed {
            keep_lease(
                name,
                Lease {
                    tokens: size - 1,
                    until_ms: app.now_ms + LEASE_MS,
                    remaining: answer.remaining,
                    reset_secs: answer.reset_secs,
                },
            );
            app.set_rate_limit(crate::app::RateLimitState {
                limit,
                remaining: answer.remaining + size - 1,
                reset_secs: answer.reset_secs,
            });
            return Ok(());
        }
        // Near the limit: one token at a time.
    }
    let answer = call(app, "take", name, rate, 1).await?;
    app.set_rate_limit(crate::app::RateLimitState {
        limit,
        remaining: answer.remaining,
        reset_secs: if answer.allowed {
            answer.reset_secs
        } else {
            answer.retry_after_secs
        },
    });
    if answer.allowed {
        Ok(())
    } else {
        Err(ApiError::RateLimited {
            retry_after_secs: answer.retry_after_secs,
        })
    }
}

/// An API key's rate limit around the key's read (the rate is the key's
/// plan's, known once the key is read): `read` learns whether the isolate
/// holds a live lease of `bucket` (nothing is spent: the request is very
/// likely not limited, so the read may carry a write, issue 16) and
/// answers what it read with the rate to spend at; then one token is spent
/// ([`take_reported`]). A read that fails spends nothing.
///
/// # Errors
/// The read's errors; as [`take_reported`].
pub async fn around_read<T, F, Fut>(app: &App, bucket: &str, read: F) -> ApiResult<T>
where
    F: FnOnce(bool) -> Fut,
    Fut: std::future::Future<Output = ApiResult<(T, Rate)>>,
{
    let (value, rate) = read(holds_lease(bucket, app.now_ms)).await?;
    take_reported(app, bucket, rate).await?;
    Ok(value)
}

/// Like `take`, but answers whether a token was taken instead of failing.
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn try_take(app: &App, name: &str, rate: Rate) -> ApiResult<bool> {
    Ok(call(app, "take", name, rate, 1).await?.allowed)
}

/// Gives one token back to bucket `name` (an attempt that succeeded).
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn refund(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    call(app, "refund", name, rate, 1).await.map(|_| ())
}

/// Refills bucket `name` (a successful login forgives earlier failures).
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn reset(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    call(app, "reset", name, rate, 1).await.map(|_| ())
}

async fn call(app: &App, op: &str, name: &str, rate: Rate, cost: u64) -> ApiResult<Answer> {
    let stub = app
        .env
        .durable_object(LIMITER_BINDING)?
        .id_from_name(name)?
        .get_stub()?;
    let url = format!(
        "https://limiter/{op}?rate={}&burst={}&cost={cost}",
        rate.rate_per_sec, rate.burst
    );
    let mut init = RequestInit::new();
    init.with_method(Method::Post);
    let req = Request::new_with_init(&url, &init)?;
    crate::roundtrips::durable_object()?;
    crate::roundtrips::crossing().await;
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(ApiError::internal(format!(
            "rate limiter answered {}",
            resp.status_code()
        )));
    }
    Ok(resp.json::<Answer>().await?)
}

#[cfg(test)]
mod tests {
    use super::{
        client_network, holds_lease, keep_lease, lease_size, spend_leased, Lease, LEASE_MS,
    };
    use crate::plan::{RATE_ENTERPRISE, RATE_PRODUCTION, RATE_SANDBOX};

    #[test]
    fn a_lease_is_a_tenth_of_a_seconds_rate_and_none_for_sandbox_keys() {
        assert_eq!(lease_size(RATE_SANDBOX), 1);
        assert_eq!(lease_size(RATE_PRODUCTION), 10);
        assert_eq!(lease_size(RATE_ENTERPRISE), 100);
    }

    #[test]
    fn leased_tokens_are_spent_one_by_one_until_gone_or_expired() {
        let lease = Lease {
            tokens: 2,
            until_ms: 1_000 + LEASE_MS,
            remaining: 50,
            reset_secs: 1,
        };
        keep_lease("k1", lease);
        assert_eq!(spend_leased("k1", 1_000).map(|s| s.remaining), Some(51));
        assert_eq!(spend_leased("k1", 1_001).map(|s| s.remaining), Some(50));
        assert!(spend_leased("k1", 1_002).is_none(), "spent");
        keep_lease("k2", lease);
        assert!(spend_leased("k2", 1_000 + LEASE_MS).is_none(), "expired");
        assert!(spend_leased("k3", 0).is_none(), "never leased");
        keep_lease("k4", Lease { tokens: 1, ..lease });
        assert!(holds_lease("k4", 1_000));
        assert!(!holds_lease("k4", 1_000 + LEASE_MS), "expired");
        assert!(spend_leased("k4", 1_000).is_some());
        assert!(!holds_lease("k4", 1_000), "spent");
        assert!(!holds_lease("k5", 0), "never leased");
    }

    #[test]
    fn an_ipv6_client_counts_as_its_64_and_an_ipv4_client_as_its_address() {
        assert_eq!(
            client_network(Some("2001:db8:1:2:aaaa::1")),
            client_network(Some("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        );
        assert_ne!(
            client_network(Some("2001:db8:1:2::1")),
            client_network(Some("2001:db8:1:3::1"))
        );
        assert_eq!(client_network(Some("192.0.2.7")), "net:192.0.2.7");
        assert_eq!(client_network(Some("::ffff:192.0.2.7")), "net:192.0.2.7");
        assert_ne!(
            client_network(Some("192.0.2.7")),
            client_network(Some("192.0.2.8"))
        );
        assert_eq!(client_network(None), client_network(Some("junk")));
    }
}
