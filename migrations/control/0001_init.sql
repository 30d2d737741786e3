-- Control plane: users, tenants, keys, webhooks, mail, idempotency.
-- Diagnostics table used by the DEV_MODE /dev/ping route (queue round trip).
CREATE TABLE dev_pings (
    id TEXT PRIMARY KEY,
    note TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    consumed_at INTEGER
);
