-- Retention (docs/retention.md): the daily purge finds a tenant's verified,
-- not yet purged rows by verification time, and its dispatched events.
CREATE INDEX deltas_purgeable ON deltas (tenant_id, verified_at)
    WHERE data_purged = 0 AND status = 'VERIFIED';
CREATE INDEX facts_purgeable ON facts (tenant_id, verified_at)
    WHERE data_purged = 0 AND status = 'VERIFIED';
CREATE INDEX events_dispatched ON events (tenant_id, created_at)
    WHERE dispatched_at IS NOT NULL;
