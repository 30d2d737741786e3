-- Incremental Merkle roots (compact ranges, bvs_core::frontier) kept by the
-- sequencer, so a checkpoint reads its merkleRoot instead of re-reading and
-- re-hashing every covered delta.

-- Per customer and period: the frontier over its deltas in ledger order,
-- and the log positions of the first and last of them.
ALTER TABLE ledger_windows ADD COLUMN frontier TEXT NOT NULL DEFAULT '0:';
ALTER TABLE ledger_windows ADD COLUMN first_leaf INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_windows ADD COLUMN last_leaf INTEGER NOT NULL DEFAULT 0;

-- Per tenant and period (checkpoints of 'all' customers): deltas in log order.
CREATE TABLE tenant_windows (
    tenant_id TEXT NOT NULL,
    window TEXT NOT NULL,
    deltas_count INTEGER NOT NULL,
    net_delta TEXT NOT NULL,
    first_leaf INTEGER NOT NULL,
    last_leaf INTEGER NOT NULL,
    frontier TEXT NOT NULL,
    PRIMARY KEY (tenant_id, window)
);
