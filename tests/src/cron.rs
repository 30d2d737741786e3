//! The crons, run through wrangler's scheduled route at a chosen time.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::client::Api;

/// The every-minute cron (sequencer sweep, webhook deliveries).
pub const SWEEP_CRON: &str = "*+*+*+*+*";
/// The daily retention cron.
pub const RETENTION_CRON: &str = "17+3+*+*+*";

/// Milliseconds since the Unix epoch, the unit of the scheduled route.
pub fn now_ms() -> u64 {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_else(|e| panic!("clock before 1970: {e}"))
        .as_millis();
    u64::try_from(ms).unwrap_or_else(|e| panic!("{ms} ms: {e}"))
}

/// Runs `cron` as if it were `time_ms`, through wrangler's scheduled route.
pub fn run_cron(api: &Api, cron: &str, time_ms: u64) {
    let r = api.get(&format!(
        "/cdn-cgi/local/scheduled?cron={cron}&time={time_ms}"
    ));
    assert_eq!(r.status, 200, "scheduled route: {}", r.text);
}

/// Runs the every-minute sweep as if it were `time_ms`.
pub fn sweep(api: &Api, time_ms: u64) {
    run_cron(api, SWEEP_CRON, time_ms);
}

/// Runs the daily retention cron as if it were `time_ms`.
pub fn run_retention(api: &Api, time_ms: u64) {
    run_cron(api, RETENTION_CRON, time_ms);
}
