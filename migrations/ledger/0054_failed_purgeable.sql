-- Retention (docs/retention.md) also removes the raw context of FAILED
-- deltas and facts (never verified, so their window runs from when they
-- were received): partial indexes find them without a scan, as
-- deltas_purgeable and facts_purgeable do for verified rows.
CREATE INDEX deltas_failed_purgeable ON deltas (tenant_id, received_at)
    WHERE data_purged = 0 AND status = 'FAILED';
CREATE INDEX facts_failed_purgeable ON facts (tenant_id, created_at)
    WHERE data_purged = 0 AND status = 'FAILED';
