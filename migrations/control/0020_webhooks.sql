-- Webhooks, their deliveries and every delivery attempt (docs/webhooks.md).
--
-- Invariant: no column holds a webhook secret in clear; `secret_sealed` is
-- sealed (auth::secret::seal) with a key derived from JWT_SECRET, because
-- signing needs the secret itself, not a hash of it.

CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    url TEXT NOT NULL,
    -- JSON array of subscribed event names, validated at creation.
    events TEXT NOT NULL,
    description TEXT NOT NULL,
    secret_sealed TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_triggered_at INTEGER
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at);

-- One event for one webhook. The id is derived from (event id, webhook id),
-- so dispatching an event twice inserts nothing new (INSERT OR IGNORE).
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    -- 'sandbox' or 'production' for ledger events; NULL for `test`.
    env TEXT,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    -- Raw context, kept for replay and debugging only for the tenant's
    -- retention window: NULL once purged (completed deliveries only).
    url TEXT,
    payload TEXT,
    event_created_at INTEGER NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('pending', 'delivering', 'succeeded', 'failed', 'canceled')),
    attempts INTEGER NOT NULL DEFAULT 0,
    -- 'pending': when the next attempt is due. 'delivering': when the
    -- running attempt's lease ends; an attempt that died mid-way is retried
    -- once it has passed. NULL once the delivery is complete.
    next_attempt_at INTEGER,
    last_http_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    completed_at INTEGER,
    data_purged INTEGER NOT NULL DEFAULT 0,
    purged_at INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at);
CREATE INDEX webhook_deliveries_purgeable ON webhook_deliveries (tenant_id, completed_at)
    WHERE data_purged = 0 AND completed_at IS NOT NULL;

-- Every attempt: when, how long, what came back.
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    -- NULL when no HTTP response came back (network error, time-out).
    http_status INTEGER,
    outcome TEXT NOT NULL CHECK (outcome IN ('succeeded', 'retry', 'failed')),
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
);
