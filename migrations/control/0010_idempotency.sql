-- Idempotency-Key records, scoped per tenant and environment. A key is kept
-- for IDEMPOTENCY_WINDOW (24 h) after its first use (docs/balance.md).
CREATE TABLE idempotency_keys (
    tenant_id TEXT NOT NULL,
    env TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,           -- SHA-256 of route + body bytes
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    response_status INTEGER,
    response_body TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, env, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
