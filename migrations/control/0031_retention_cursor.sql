-- Fair retention (docs/retention.md): the daily purge goes round the
-- tenants with a retention window, a slice of its row budget each, and
-- keeps here the last tenant it visited; the next run starts after it.
CREATE TABLE retention_cursor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    tenant_id TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
