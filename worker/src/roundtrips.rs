//! Storage round trips counted per isolate (issue 16): every D1 call
//! (`first`, `all`, `run`, `batch`, one each) and every Durable Object
//! call. The request log line in DEV_MODE reports the difference over the
//! request as `d1Calls` and `doCalls`; requests that overlap in one isolate
//! see each other's calls, so the bench measures one request at a time.
//!
//! Password key derivations (PBKDF2) are counted the same way and reported
//! as `kdfCalls`, so a black-box test can see that a refused request
//! derived no key (issue 14: reset-password checks its token first).

use std::sync::atomic::{AtomicU64, Ordering};

static D1: AtomicU64 = AtomicU64::new(0);
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

/// One D1 round trip.
pub fn d1() {
    D1.fetch_add(1, Ordering::Relaxed);
}

/// One Durable Object call.
pub fn durable_object() {
    DURABLE_OBJECT.fetch_add(1, Ordering::Relaxed);
}

/// The counters now, to subtract at the end of a request.
#[derive(Clone, Copy)]
pub struct Mark {
    d1: u64,
    durable_object: u64,
}

pub fn mark() -> Mark {
    Mark {
        d1: D1.load(Ordering::Relaxed),
        durable_object: DURABLE_OBJECT.load(Ordering::Relaxed),
    }
}

impl Mark {
    /// D1 round trips and Durable Object calls since this mark.
    pub fn since(self) -> (u64, u64) {
        let now = mark();
        (
            now.d1.saturating_sub(self.d1),
            now.durable_object.saturating_sub(self.durable_object),
        )
    }
}
