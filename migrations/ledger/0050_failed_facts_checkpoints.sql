-- Facts and checkpoints that can never be appended to the log end FAILED,
-- as deltas do (worker/src/ledger/sequencer.rs), and keep why in
-- `failure` (the message of the append that failed). SQLite cannot widen
-- a CHECK in place: each table is rebuilt (new table, copy, drop, rename,
-- indexes again). Rowids are copied as they are: the sequencer reads
-- queued items and retention purges in rowid order.

CREATE TABLE facts_0050 (
    tenant_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT,                        -- NULL once purged
    status TEXT NOT NULL CHECK (status IN ('QUEUED', 'VERIFIED', 'FAILED')),
    created_at INTEGER NOT NULL,
    leaf_index INTEGER,
    tree_size INTEGER,
    verified_at INTEGER,
    data_purged INTEGER NOT NULL DEFAULT 0,
    purged_at INTEGER,
    failure TEXT,                         -- why it FAILED (NULL otherwise)
    PRIMARY KEY (tenant_id, content_hash)
);
INSERT INTO facts_0050 (rowid, tenant_id, content_hash, content, metadata, status, created_at,
    leaf_index, tree_size, verified_at, data_purged, purged_at)
SELECT rowid, tenant_id, content_hash, content, metadata, status, created_at,
    leaf_index, tree_size, verified_at, data_purged, purged_at
FROM facts;
DROP TABLE facts;
ALTER TABLE facts_0050 RENAME TO facts;
CREATE INDEX facts_queued ON facts (status) WHERE status = 'QUEUED';
CREATE INDEX facts_purgeable ON facts (tenant_id, verified_at)
    WHERE data_purged = 0 AND status = 'VERIFIED';

CREATE TABLE checkpoints_0050 (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,            -- a customer, or 'all'
    period TEXT NOT NULL,                 -- YYYY-MM, by verification time
    merkle_root TEXT NOT NULL,
    delta_count INTEGER NOT NULL,
    net_delta TEXT NOT NULL,              -- sum of the covered deltas
    from_index INTEGER NOT NULL,          -- first covered leaf index
    to_index INTEGER NOT NULL,            -- last covered leaf index
    status TEXT NOT NULL CHECK (status IN ('QUEUED', 'COMMITTED', 'FAILED')),
    created_at INTEGER NOT NULL,
    committed_at INTEGER,
    leaf_index INTEGER,                   -- where merkle_root sits in the log
    tree_size INTEGER,                    -- first signed head that includes it
    failure TEXT                          -- why it FAILED (NULL otherwise)
);
INSERT INTO checkpoints_0050 (rowid, id, tenant_id, customer_id, period, merkle_root,
    delta_count, net_delta, from_index, to_index, status, created_at, committed_at,
    leaf_index, tree_size)
SELECT rowid, id, tenant_id, customer_id, period, merkle_root,
    delta_count, net_delta, from_index, to_index, status, created_at, committed_at,
    leaf_index, tree_size
FROM checkpoints;
DROP TABLE checkpoints;
ALTER TABLE checkpoints_0050 RENAME TO checkpoints;
CREATE INDEX checkpoints_by_tenant ON checkpoints (tenant_id, created_at);
CREATE INDEX checkpoints_by_root ON checkpoints (merkle_root);
CREATE INDEX checkpoints_queued ON checkpoints (status) WHERE status = 'QUEUED';
