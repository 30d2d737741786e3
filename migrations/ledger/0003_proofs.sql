-- Period checkpoints: a Merkle root over the covered verified deltas,
-- fixed at request time, committed by appending the root to the log.
CREATE TABLE checkpoints (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,            -- a customer, or 'all'
    period TEXT NOT NULL,                 -- YYYY-MM, by verification time
    merkle_root TEXT NOT NULL,
    delta_count INTEGER NOT NULL,
    net_delta TEXT NOT NULL,              -- sum of the covered deltas
    from_index INTEGER NOT NULL,          -- first covered leaf index
    to_index INTEGER NOT NULL,            -- last covered leaf index
    status TEXT NOT NULL CHECK (status IN ('QUEUED', 'COMMITTED')),
    created_at INTEGER NOT NULL,
    committed_at INTEGER,
    leaf_index INTEGER,                   -- where merkle_root sits in the log
    tree_size INTEGER                     -- first signed head that includes it
);
CREATE INDEX checkpoints_by_tenant ON checkpoints (tenant_id, created_at);
CREATE INDEX checkpoints_by_root ON checkpoints (merkle_root);
CREATE INDEX checkpoints_queued ON checkpoints (status) WHERE status = 'QUEUED';

-- Receipts issued: the proof root a receipt handed out, and the ledger
-- range it covers, so the public verify route can resolve it.
CREATE TABLE receipts (
    items_root TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    period TEXT,                          -- NULL: the whole history
    from_seq INTEGER NOT NULL,
    to_seq INTEGER NOT NULL,
    delta_count INTEGER NOT NULL,
    generated_at INTEGER NOT NULL,
    PRIMARY KEY (items_root, tenant_id, customer_id)
);

-- Verified deltas by verification time within a tenant (checkpoints of
-- 'all' customers for a period).
CREATE INDEX deltas_by_tenant_leaf ON deltas (tenant_id, leaf_index) WHERE status = 'VERIFIED';
