//! Cron work: bounded per run, never panics; errors are logged and the next
//! run continues where this one stopped.

use crate::app::App;

/// The every-minute sweeper's schedule (wrangler.toml `[triggers]`).
pub const CRON_SWEEP: &str = "* * * * *";
/// The daily retention run's schedule.
pub const CRON_RETENTION: &str = "17 3 * * *";

pub async fn run(app: &App, cron: &str) {
    match cron {
        CRON_SWEEP => worker::console_log!("sweep at {}", app.now_ms),
        CRON_RETENTION => worker::console_log!("retention at {}", app.now_ms),
        other => worker::console_warn!("unknown cron schedule {other}"),
    }
}
