//! The rate limiter: one Durable Object per bucket (an API key, or a login
//! e-mail), holding a token bucket.
//!
//! A Durable Object is a single-threaded instance addressed by name across
//! the whole deployment, so every request for one key meets the same bucket
//! however many isolates or locations serve it. Between reading the bucket
//! and writing it back there is no `await`, so concurrent requests cannot
//! both spend the last token. The bucket is also written to the object's
//! storage, so an evicted object resumes where it stopped (the failed-login
//! bucket must not reset when the object sleeps).

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use worker::{durable_object, DurableObject, Env, Request, Response, State};

/// Storage key of the bucket inside its object.
const BUCKET_KEY: &str = "bucket";

/// A token bucket: `rate_per_sec` tokens come back each second, up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub rate_per_sec: f64,
    pub burst: f64,
}

impl Rate {
    /// `rate_per_sec` tokens a second, up to `burst`.
    pub const fn new(rate_per_sec: f64, burst: f64) -> Rate {
        Rate {
            rate_per_sec,
            burst,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Bucket {
    pub tokens: f64,
    pub updated_ms: f64,
}

/// What the limiter answers to `take`.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub allowed: bool,
    /// Whole seconds until `cost` tokens are available again (0 if allowed).
    pub retry_after_secs: u64,
}

/// What the object answers: the verdict and, for the `RateLimit-*` response
/// headers, the whole tokens left and the seconds until the bucket is full.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub allowed: bool,
    pub retry_after_secs: u64,
    #[serde(default)]
    pub remaining: u64,
    #[serde(default)]
    pub reset_secs: u64,
}

impl Answer {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn new(verdict: &Verdict, after: Bucket, rate_per_sec: f64, burst: f64) -> Self {
        let missing = (burst - after.tokens).max(0.0);
        let reset_secs = if rate_per_sec > 0.0 {
            (missing / rate_per_sec).ceil() as u64
        } else {
            0
        };
        Self {
            allowed: verdict.allowed,
            retry_after_secs: verdict.retry_after_secs,
            remaining: after.tokens.max(0.0).floor() as u64,
            reset_secs,
        }
    }
}

impl Bucket {
    /// The tokens `self` holds at `now_ms`, refilled at `rate_per_sec`
    /// (before the burst caps them).
    fn refilled(self, now_ms: f64, rate_per_sec: f64) -> f64 {
        let elapsed_secs = ((now_ms - self.updated_ms) / 1000.0).max(0.0);
        self.tokens + elapsed_secs * rate_per_sec
    }
}

/// Refills `bucket` to `now_ms` at `rate` up to its burst, then takes
/// `cost` tokens if there are enough. Pure, so it is unit-tested natively.
pub fn take(bucket: Bucket, now_ms: f64, rate: Rate, cost: f64) -> (Bucket, Verdict) {
    let Rate {
        rate_per_sec,
        burst,
    } = rate;
    let tokens = bucket.refilled(now_ms, rate_per_sec).min(burst);
    if tokens >= cost {
        (
            Bucket {
                tokens: tokens - cost,
                updated_ms: now_ms,
            },
            Verdict {
                allowed: true,
                retry_after_secs: 0,
            },
        )
    } else {
        let wait_secs = if rate_per_sec > 0.0 {
            ((cost - tokens) / rate_per_sec).ceil()
        } else {
            f64::from(u32::MAX)
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let retry_after_secs = (wait_secs.max(1.0)) as u64;
        (
            Bucket {
                tokens,
                updated_ms: now_ms,
            },
            Verdict {
                allowed: false,
                retry_after_secs,
            },
        )
    }
}

/// Gives `cost` tokens back (after refilling to `now_ms`), never beyond
/// the burst: an attempt that turned out fine does not count.
pub fn refund(bucket: Bucket, now_ms: f64, rate: Rate, cost: f64) -> (Bucket, Verdict) {
    let tokens = (bucket.refilled(now_ms, rate.rate_per_sec) + cost).min(rate.burst);
    (
        Bucket {
            tokens,
            updated_ms: now_ms,
        },
        Verdict {
            allowed: true,
            retry_after_secs: 0,
        },
    )
}

#[durable_object(fetch)]
pub struct RateLimiter {
    state: State,
    bucket: RefCell<Option<Bucket>>,
}

fn query_f64(url: &worker::Url, name: &str) -> Option<f64> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
}

impl DurableObject for RateLimiter {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            bucket: RefCell::new(None),
        }
    }

    /// `POST /take?rate=<per sec>&burst=<n>&cost=<n>` → `Verdict`;
    /// `POST /refund?rate=<per sec>&burst=<n>&cost=<n>` gives tokens back;
    /// `POST /reset?burst=<n>` refills the bucket.
    async fn fetch(&self, req: Request) -> worker::Result<Response> {
        let url = req.url()?;
        let (Some(rate), Some(burst)) = (query_f64(&url, "rate"), query_f64(&url, "burst")) else {
            return Response::error("rate and burst are required", 400);
        };
        let cost = query_f64(&url, "cost").unwrap_or(1.0);
        let now_ms = crate::app::clock_ms() as f64;

        if self.bucket.borrow().is_none() {
            // Storage reads hold the input gate: no other request for this
            // object runs until this one has its bucket.
            let stored: Option<Bucket> = self.state.storage().get(BUCKET_KEY).await.unwrap_or(None);
            let mut slot = self.bucket.borrow_mut();
            if slot.is_none() {
                *slot = Some(stored.unwrap_or(Bucket {
                    tokens: burst,
                    updated_ms: now_ms,
                }));
            }
        }

        // Read, decide, write back: no await in between.
        let (next, verdict) = {
            let mut slot = self.bucket.borrow_mut();
            let current = slot.unwrap_or(Bucket {
                tokens: burst,
                updated_ms: now_ms,
            });
            let (next, verdict) = if url.path() == "/refund" {
                refund(current, now_ms, Rate::new(rate, burst), cost)
            } else if url.path() == "/reset" {
                (
                    Bucket {
                        tokens: burst,
                        updated_ms: now_ms,
                    },
                    Verdict {
                        allowed: true,
                        retry_after_secs: 0,
                    },
                )
            } else {
                take(current, now_ms, Rate::new(rate, burst), cost)
            };
            *slot = Some(next);
            (next, verdict)
        };
        self.state.storage().put(BUCKET_KEY, next).await?;
        Response::from_json(&Answer::new(&verdict, next, rate, burst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: Bucket = Bucket {
        tokens: 0.0,
        updated_ms: 0.0,
    };

    #[test]
    fn the_answer_counts_whole_tokens_left_and_seconds_to_full() {
        let start = Bucket {
            tokens: 20.0,
            updated_ms: 0.0,
        };
        let (after, verdict) = take(start, 0.0, Rate::new(10.0, 20.0), 1.0);
        let a = Answer::new(&verdict, after, 10.0, 20.0);
        assert!(a.allowed);
        assert_eq!(a.remaining, 19);
        assert_eq!(a.reset_secs, 1);
    }

    #[test]
    fn a_full_bucket_allows_its_burst_then_refuses_with_a_retry_delay() {
        let mut b = Bucket {
            tokens: 20.0,
            updated_ms: 0.0,
        };
        for _ in 0..20 {
            let (next, v) = take(b, 0.0, Rate::new(10.0, 20.0), 1.0);
            assert!(v.allowed);
            b = next;
        }
        let (_, v) = take(b, 0.0, Rate::new(10.0, 20.0), 1.0);
        assert!(!v.allowed);
        assert_eq!(v.retry_after_secs, 1);
    }

    #[test]
    fn tokens_come_back_at_the_rate_and_refunds_give_them_back_never_beyond_the_burst() {
        type Op = fn(Bucket, f64, Rate, f64) -> (Bucket, Verdict);
        // (what, milliseconds after an empty bucket, rate, burst, tokens after)
        let cases: [(Op, f64, f64, f64, f64); 4] = [
            (take, 500.0, 10.0, 20.0, 4.0),
            (take, 1_000_000.0, 10.0, 20.0, 19.0),
            (refund, 0.0, 1.0, 3.0, 1.0),
            (refund, 10_000.0, 1.0, 3.0, 3.0),
        ];
        for (op, ms, rate, burst, want) in cases {
            let (b, v) = op(EMPTY, ms, Rate::new(rate, burst), 1.0);
            assert!(v.allowed, "{ms} {rate} {burst}");
            assert!((b.tokens - want).abs() < 1e-9, "{} != {want}", b.tokens);
        }
    }

    #[test]
    fn a_slow_bucket_reports_the_whole_seconds_to_wait() {
        let (_, v) = take(EMPTY, 0.0, Rate::new(1.0 / 30.0, 10.0), 1.0);
        assert!(!v.allowed);
        assert_eq!(v.retry_after_secs, 30);
    }
}
