-- The dashboard's request log and per-day delta figures (issue 30,
-- docs/dashboard.md "Request log" and "Charts").
--
-- request_log: every authenticated API request of a tenant, on the
-- tenant's shard (dashboard-family requests on its Sandbox shard), written
-- in batches after the response (`request_log`), best effort. Bodies are
-- redacted (no password, API-key secret, webhook secret or token) and cut
-- at 4 KiB each. `expires_at` is fixed when the row is written: the
-- shorter of the plan's log time and the tenant's retention window; the
-- every-minute sweep deletes expired rows, and the daily retention run
-- deletes rows past a window shortened since. The bytes written per tenant
-- and day are metered (`meters`, meter 'request_log', period YYYY-MM-DD).
CREATE TABLE request_log (
    request_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    -- 'sandbox' / 'production': a balance request with a key of that
    -- environment; 'dashboard': a dashboard request (JWT).
    source TEXT NOT NULL CHECK (source IN ('sandbox', 'production', 'dashboard')),
    created_at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,                   -- with its query, tokens redacted
    route TEXT NOT NULL,                  -- the route's pattern
    status INTEGER NOT NULL,
    code TEXT,                            -- the error's `code`, if any
    key_id TEXT,                          -- the API key's id (balance requests)
    duration_ms INTEGER NOT NULL,
    request_body TEXT,
    response_body TEXT,
    expires_at INTEGER NOT NULL
);
CREATE INDEX request_log_by_tenant ON request_log (tenant_id, created_at);
CREATE INDEX request_log_by_id ON request_log (tenant_id, request_id);
CREATE INDEX request_log_expiry ON request_log (expires_at);

-- Verified deltas per tenant and day (UTC, by verification time), with
-- their verification lag (received -> verified) counted in buckets of a
-- quarter power of two of milliseconds (`request_log::stats` explains the
-- scale): the overview's "deltas per day" and "verification lag p50/p99"
-- read 30 days of these rows instead of scanning deltas. Raised by the
-- webhook dispatcher, in the batch that marks the delta.verified events
-- it read as dispatched.
CREATE TABLE delta_days (
    tenant_id TEXT NOT NULL,
    day TEXT NOT NULL,                    -- YYYY-MM-DD
    bucket INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, day, bucket)
);
