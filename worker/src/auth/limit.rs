//! Client side of the rate limiter Durable Object (`crate::limiter`).

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
pub const LOGIN_FAILURES: Rate = Rate {
    rate_per_sec: 1.0 / 30.0,
    burst: 10.0,
};

/// Failed logins per client network (`client_network`), whatever the
/// e-mail: 30 at once, then one every 2 seconds, so one network cannot try
/// a common password against many accounts (password spraying). Every
/// attempt takes a token and a successful one gives it back.
pub const LOGIN_FAILURES_PER_NETWORK: Rate = Rate {
    rate_per_sec: 0.5,
    burst: 30.0,
};

/// Mails (verification and reset) per e-mail address: 5 at once, then one
/// every 2 minutes, so the service cannot be used to flood a mailbox.
pub const MAILS_PER_ADDRESS: Rate = Rate {
    rate_per_sec: 1.0 / 120.0,
    burst: 5.0,
};

/// Public routes (`/api/v1/verify/*`, `/api/v1/log/*`, `/verify/*`): per
/// client network, 20 requests/s with a burst of 60.
pub const PUBLIC_RATE: Rate = Rate {
    rate_per_sec: 20.0,
    burst: 60.0,
};

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
    let verdict = call(app, "take", name, rate).await?;
    if verdict.allowed {
        Ok(())
    } else {
        Err(ApiError::RateLimited {
            retry_after_secs: verdict.retry_after_secs,
        })
    }
}

/// Like `take`, and records the bucket's state on `app` so the response
/// carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
/// (for API-key requests: success and 429 alike).
///
/// # Errors
/// As `take`.
pub async fn take_reported(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    let answer = call(app, "take", name, rate).await?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    app.set_rate_limit(crate::app::RateLimitState {
        limit: rate.burst.max(0.0).floor() as u64,
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

/// Like `take`, but answers whether a token was taken instead of failing.
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn try_take(app: &App, name: &str, rate: Rate) -> ApiResult<bool> {
    Ok(call(app, "take", name, rate).await?.allowed)
}

/// Gives one token back to bucket `name` (an attempt that succeeded).
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn refund(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    call(app, "refund", name, rate).await.map(|_| ())
}

/// Refills bucket `name` (a successful login forgives earlier failures).
///
/// # Errors
/// Internal error when the limiter cannot be reached.
pub async fn reset(app: &App, name: &str, rate: Rate) -> ApiResult<()> {
    call(app, "reset", name, rate).await.map(|_| ())
}

async fn call(app: &App, op: &str, name: &str, rate: Rate) -> ApiResult<Answer> {
    let stub = app
        .env
        .durable_object(LIMITER_BINDING)?
        .id_from_name(name)?
        .get_stub()?;
    let url = format!(
        "https://limiter/{op}?rate={}&burst={}&cost=1",
        rate.rate_per_sec, rate.burst
    );
    let mut init = RequestInit::new();
    init.with_method(Method::Post);
    let req = Request::new_with_init(&url, &init)?;
    crate::roundtrips::durable_object();
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
    use super::client_network;

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
