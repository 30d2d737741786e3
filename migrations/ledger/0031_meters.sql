-- Metered writes (docs/security.md, "Limits per plan"): one counter row per
-- tenant, meter and period, raised in the same D1 batch as the write it
-- counts. The CHECK is the ceiling: a raise past `cap` fails the statement,
-- which rolls back the whole batch, so a write over its limit writes
-- nothing and two concurrent writes can never both take the last unit.
-- Meters: 'facts' and 'checkpoints' per calendar month (period YYYY-MM),
-- 'bytes' (facts and deltas stored, period '') for the storage ceiling.
CREATE TABLE meters (
    tenant_id TEXT NOT NULL,
    meter TEXT NOT NULL,
    period TEXT NOT NULL,
    used INTEGER NOT NULL,
    cap INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, meter, period),
    CHECK (used <= cap)
);
