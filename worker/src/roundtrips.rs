//! Storage round trips counted per request (issue 16): every D1 call
//! (`first`, `all`, `run`, `batch`, one each) and every Durable Object
//! call. The request log line in DEV_MODE reports them as `d1Calls` and
//! `doCalls`, and as `d1Trips` the *sequential* D1 round trips: the calls
//! that started while no other D1 call of the request was in flight
//! (calls made concurrently, e.g. with `join`, count once).
//!
//! Password key derivations (PBKDF2) are counted the same way and reported
//! as `kdfCalls`, so a black-box test can see that a refused request
//! derived no key (issue 14: reset-password checks its token first).
//!
//! Requests that overlap in one isolate do not see each other's calls:
//! [`scoped`] runs a request's future with its own counters made current
//! while it is polled (an isolate runs one future at a time, so a call is
//! counted for the request whose code started it). Queue batches and cron
//! runs are scoped the same way (their counts are reported nowhere, but
//! held to the limits below); work a request hands to `waitUntil` runs
//! [`continued`]: its own round trips, the request's invocation. Work
//! polled outside all of these (in tests) is counted nowhere.
//!
//! Each invocation's D1 queries and subrequests are counted too and, in
//! DEV_MODE, held to a deployed Worker's limits (`crate::limits`).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::error::ApiResult;

/// One request's counters.
#[derive(Default)]
struct Counts {
    d1: Cell<u64>,
    d1_in_flight: Cell<u64>,
    d1_sequential: Cell<u64>,
    durable_object: Cell<u64>,
    kdf: Cell<u64>,
    /// What the whole invocation has used, shared with the work it runs
    /// after its response ([`continued`]).
    invocation: Rc<Invocation>,
}

/// An invocation's D1 queries and subrequests, held to a deployed
/// Worker's limits in DEV_MODE (`crate::limits`).
#[derive(Default)]
struct Invocation {
    queries: Cell<u64>,
    subrequests: Cell<u64>,
}

impl Counts {
    fn add(cell: &Cell<u64>) {
        cell.set(cell.get().saturating_add(1));
    }
}

thread_local! {
    /// The counters of the request being polled, if any.
    static CURRENT: RefCell<Option<Rc<Counts>>> = const { RefCell::new(None) };
}

fn current() -> Option<Rc<Counts>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `request` with counters of its own (see the module's text): a
/// request, a queue batch or a cron run, each one invocation.
pub fn scoped<F: Future>(request: F) -> Scoped<F> {
    Scoped {
        counts: Rc::new(Counts::default()),
        request: Box::pin(request),
    }
}

/// Runs `work` (after the response: `App::after_response`) with counters
/// of its own that share the current invocation's queries and
/// subrequests: deployed, work under `waitUntil` counts against the same
/// invocation, but not against the request's round trips.
pub fn continued<F: Future>(work: F) -> Scoped<F> {
    let counts = Counts {
        invocation: current()
            .map(|c| Rc::clone(&c.invocation))
            .unwrap_or_default(),
        ..Counts::default()
    };
    Scoped {
        counts: Rc::new(counts),
        request: Box::pin(work),
    }
}

/// A request's future with its counters (see [`scoped`]).
pub struct Scoped<F> {
    counts: Rc<Counts>,
    request: Pin<Box<F>>,
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let outer = CURRENT.with(|c| c.replace(Some(Rc::clone(&this.counts))));
        let polled = this.request.as_mut().poll(cx);
        CURRENT.with(|c| *c.borrow_mut() = outer);
        polled
    }
}

/// One password key derivation.
pub fn kdf() {
    if let Some(counts) = current() {
        Counts::add(&counts.kdf);
    }
}

/// One D1 round trip, in flight until the returned guard is dropped
/// (hold it across the call's `await`).
pub fn d1() -> D1Trip {
    let counts = current();
    if let Some(c) = &counts {
        Counts::add(&c.invocation.subrequests);
        Counts::add(&c.d1);
        if c.d1_in_flight.get() == 0 {
            Counts::add(&c.d1_sequential);
        }
        Counts::add(&c.d1_in_flight);
    }
    D1Trip(counts)
}

/// A D1 call in flight (see [`d1`]).
#[must_use = "hold the guard across the call's await"]
pub struct D1Trip(Option<Rc<Counts>>);

impl Drop for D1Trip {
    fn drop(&mut self) {
        if let Some(c) = &self.0 {
            c.d1_in_flight.set(c.d1_in_flight.get().saturating_sub(1));
        }
    }
}

/// One Durable Object call.
///
/// # Errors
/// Past the invocation's subrequests (DEV_MODE, `crate::limits`).
pub fn durable_object() -> ApiResult<()> {
    if let Some(counts) = current() {
        Counts::add(&counts.durable_object);
        Counts::add(&counts.invocation.subrequests);
    }
    held_to_limits()
}

/// One D1 query (a statement the store's gateway binds; a batch's count
/// one each).
///
/// # Errors
/// Past the invocation's queries or subrequests (DEV_MODE).
pub fn query() -> ApiResult<()> {
    if let Some(counts) = current() {
        Counts::add(&counts.invocation.queries);
    }
    held_to_limits()
}

/// One subrequest other than D1 or a Durable Object (a queue send, a
/// fetch): counted, held to the limit, then the network's modeled
/// [`crossing`].
///
/// # Errors
/// Past the invocation's subrequests (DEV_MODE), as the platform's error
/// the send or fetch would have answered.
pub async fn outbound() -> worker::Result<()> {
    if let Some(counts) = current() {
        Counts::add(&counts.invocation.subrequests);
    }
    held_to_limits().map_err(|e| worker::Error::RustError(e.body().message))?;
    crossing().await;
    Ok(())
}

fn held_to_limits() -> ApiResult<()> {
    match current() {
        Some(c) => {
            crate::limits::invocation(c.invocation.queries.get(), c.invocation.subrequests.get())
        }
        None => Ok(()),
    }
}

/// What the current request has used so far: D1 calls, of which
/// sequential, Durable Object calls and password key derivations (all
/// zero outside a request).
#[derive(Default)]
pub struct Used {
    pub d1: u64,
    pub d1_sequential: u64,
    pub durable_object: u64,
    pub kdf: u64,
    /// The invocation's D1 queries and subrequests so far (work after the
    /// response included, once it has run).
    pub queries: u64,
    pub subrequests: u64,
}

pub fn used() -> Used {
    current().map_or_else(Used::default, |c| Used {
        d1: c.d1.get(),
        d1_sequential: c.d1_sequential.get(),
        durable_object: c.durable_object.get(),
        kdf: c.kdf.get(),
        queries: c.invocation.queries.get(),
        subrequests: c.invocation.subrequests.get(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use futures_util::future::{join, poll_fn};

    /// Polls `f` until it is ready (the futures here only yield).
    fn block_on<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    /// Yields once, so two scoped futures interleave like two requests.
    fn yield_once() -> impl Future<Output = ()> {
        let mut yielded = false;
        poll_fn(move |cx| {
            if yielded {
                Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    async fn request(d1_calls: u64) -> (u64, u64) {
        for _ in 0..d1_calls {
            let _trip = d1();
            yield_once().await;
        }
        let used = used();
        (used.d1, used.d1_sequential)
    }

    #[test]
    fn interleaved_requests_count_only_their_own_calls() {
        let (a, b) = block_on(join(scoped(request(3)), scoped(request(5))));
        assert_eq!(a, (3, 3));
        assert_eq!(b, (5, 5));
    }

    #[test]
    fn work_outside_a_request_is_counted_nowhere() {
        drop(d1());
        durable_object().unwrap();
        kdf();
        let used = used();
        assert_eq!((used.d1, used.durable_object, used.kdf), (0, 0, 0));
    }
}

// ---------------------------------------------------------------- the deployed shape (issue 42)

thread_local! {
    /// DEV_MODE `DEPLOYED_LATENCY_MS`: milliseconds added to every D1
    /// round trip, Durable Object call, queue send and delivery, and
    /// witness call (0: none, always outside DEV_MODE).
    static MODELED_MS: Cell<u64> = const { Cell::new(0) };
}

/// Sets the modeled latency for this isolate's calls from now on
/// (`App::new`, each invocation: `0` unless DEV_MODE sets it).
pub fn set_modeled_latency(ms: u64) {
    MODELED_MS.with(|m| m.set(ms));
}

/// The modeled latency now, in ms.
pub fn modeled_latency() -> u64 {
    MODELED_MS.with(Cell::get)
}

/// Waits the modeled latency of one crossing of the network (a D1 round
/// trip, a Durable Object call, a queue send or delivery, a witness
/// call): the deployed shape of `wrangler dev`, where D1 is an
/// in-process SQLite file (bench/README.md, "deployed shape"). Returns at
/// once when none is modeled.
pub async fn crossing() {
    let ms = modeled_latency();
    if ms > 0 {
        worker::Delay::from(std::time::Duration::from_millis(ms)).await;
    }
}
