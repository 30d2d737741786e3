-- Emit in two round trips (issue 16): the Idempotency-Key claim of an emit
-- moves next to the write, on the tenant's shard, into the same atomic
-- batch as the monthly quota, the storage meter, the submission and its
-- answer (`idempotency_results`). `token` is the claiming request's own
-- random id: every later statement of the batch runs only while the claim
-- holds this request's token, so a replay or a conflicting request writes
-- nothing. A claim is 'done' once its answer is stored (in the same batch);
-- 'in_flight' only exists under the DEV_MODE fault point that stops a
-- request between its write and its completion. An in-flight claim whose
-- lease has passed may be taken over (IDEMPOTENCY_LEASE, 30 s).
-- The monthly delta quota is a row of `meters` (meter 'deltas', period
-- YYYY-MM), raised in the same batch: `CHECK (used <= cap)` rolls back an
-- emit over its quota or over the storage ceiling whole.
CREATE TABLE idempotency_claims (
    tenant_id TEXT NOT NULL,
    env TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    token TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    lease_until INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, env, key)
);
CREATE INDEX idempotency_claims_expiry ON idempotency_claims (expires_at);
