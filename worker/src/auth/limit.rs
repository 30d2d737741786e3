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

/// Mails (verification and reset) per e-mail address: 5 at once, then one
/// every 2 minutes, so the service cannot be used to flood a mailbox.
pub const MAILS_PER_ADDRESS: Rate = Rate {
    rate_per_sec: 1.0 / 120.0,
    burst: 5.0,
};

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
    let mut resp = stub.fetch_with_request(req).await?;
    if resp.status_code() != 200 {
        return Err(ApiError::internal(format!(
            "rate limiter answered {}",
            resp.status_code()
        )));
    }
    Ok(resp.json::<Answer>().await?)
}
