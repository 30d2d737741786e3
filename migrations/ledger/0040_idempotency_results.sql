-- The answer of a write made under an Idempotency-Key, stored in the same
-- atomic batch as the submission it answers: "committed" and "answered"
-- cannot diverge, and the primary key refuses a second write for the key.
CREATE TABLE idempotency_results (
    tenant_id TEXT NOT NULL,
    env TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response_status INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, env, key)
);
CREATE INDEX idempotency_results_expiry ON idempotency_results (expires_at);
