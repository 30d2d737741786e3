//! Storage round trips counted per isolate (issue 16): every D1 call
//! (`first`, `all`, `run`, `batch`, one each) and every Durable Object
//! call. The request log line in DEV_MODE reports the difference over the
//! request as `d1Calls` and `doCalls`, and as `d1Trips` the *sequential*
//! D1 round trips: the calls that started while no other D1 call was in
//! flight (calls made concurrently, e.g. with `join`, count once).
//! Requests that overlap in one isolate see each other's calls, so the
//! bench and `tests/tests/trips.rs` measure one request at a time.
//!
//! Password key derivations (PBKDF2) are counted the same way and reported
//! as `kdfCalls`, so a black-box test can see that a refused request
//! derived no key (issue 14: reset-password checks its token first).

use std::sync::atomic::{AtomicU64, Ordering};

static D1: AtomicU64 = AtomicU64::new(0);
static D1_IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static D1_SEQUENTIAL: AtomicU64 = AtomicU64::new(0);
static DURABLE_OBJECT: AtomicU64 = AtomicU64::new(0);

static KDF: AtomicU64 = AtomicU64::new(0);

/// One password key derivation.
pub fn kdf() {
    KDF.fetch_add(1, Ordering::Relaxed);
}

/// Password key derivations so far, to subtract at the end of a request.
pub fn kdf_count() -> u64 {
    KDF.load(Ordering::Relaxed)
}

/// One D1 round trip, in flight until the returned guard is dropped
/// (hold it across the call's `await`).
pub fn d1() -> D1Trip {
    D1.fetch_add(1, Ordering::Relaxed);
    if D1_IN_FLIGHT.fetch_add(1, Ordering::Relaxed) == 0 {
        D1_SEQUENTIAL.fetch_add(1, Ordering::Relaxed);
    }
    D1Trip
}

/// A D1 call in flight (see [`d1`]).
#[must_use = "hold the guard across the call's await"]
pub struct D1Trip;

impl Drop for D1Trip {
    fn drop(&mut self) {
        D1_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One Durable Object call.
pub fn durable_object() {
    DURABLE_OBJECT.fetch_add(1, Ordering::Relaxed);
}

/// The counters now, to subtract at the end of a request.
#[derive(Clone, Copy)]
pub struct Mark {
    d1: u64,
    d1_sequential: u64,
    durable_object: u64,
}

/// What a request used: D1 calls, of which sequential, and Durable
/// Object calls.
pub struct Used {
    pub d1: u64,
    pub d1_sequential: u64,
    pub durable_object: u64,
}

pub fn mark() -> Mark {
    Mark {
        d1: D1.load(Ordering::Relaxed),
        d1_sequential: D1_SEQUENTIAL.load(Ordering::Relaxed),
        durable_object: DURABLE_OBJECT.load(Ordering::Relaxed),
    }
}

impl Mark {
    /// D1 round trips and Durable Object calls since this mark.
    pub fn since(self) -> Used {
        let now = mark();
        Used {
            d1: now.d1.saturating_sub(self.d1),
            d1_sequential: now.d1_sequential.saturating_sub(self.d1_sequential),
            durable_object: now.durable_object.saturating_sub(self.durable_object),
        }
    }
}
