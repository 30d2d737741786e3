-- Ledger database (one per environment): ledgers, deltas, submissions,
-- log leaves and tree heads, checkpoints, facts.
CREATE TABLE log_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
