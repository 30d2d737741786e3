-- Idempotency claims have a lease (IDEMPOTENCY_LEASE, 30 s): an in-flight
-- claim whose lease has passed may be taken over by a retry. quota_charged
-- records the deltas already counted against the quota for this claim, in
-- the same batch as the count, so a retry after a crash never counts twice.
ALTER TABLE idempotency_keys ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN quota_charged INTEGER NOT NULL DEFAULT 0;
