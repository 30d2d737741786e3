-- Issue 27: verification keeps up with intake.

-- The log's hashes as C2SP tlog-tiles (https://c2sp.org/tlog-tiles): the
-- tile at level `level`, index `idx` holds the `width` hashes (32 bytes
-- each, concatenated: `data`, served as-is) at tree level 8*level of the
-- subtrees idx*256 .. idx*256+width-1. Level 0 holds the log's leaf
-- hashes; each entry of level L+1 is the root of a full tile of level L. A
-- tile only ever widens: the sequencer writes each round's grown tiles
-- (full ones completed and the right edge's partial ones) in the round's
-- own batch and drops their narrower copies. The key holds the width, so
-- two rounds that grow the log from the same size cannot both commit.
-- A log kept as stored hashes before (log_hashes) is migrated to tiles by
-- the sequencer, resumably (ledger::tiles; log_meta 'tiles_size' is the
-- size the tiles cover, 'tiles_migration' the migration's place).
CREATE TABLE log_tiles (
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    width INTEGER NOT NULL CHECK (width BETWEEN 1 AND 256),
    data BLOB NOT NULL CHECK (length(data) = 32 * width),
    PRIMARY KEY (level, idx, width)
);

-- Fair rounds: the tenants with queued deltas, and each one's queue in
-- arrival order (rowid), walked with one index seek per tenant.
CREATE INDEX deltas_queued_by_tenant ON deltas (status, tenant_id) WHERE status = 'QUEUED';

-- Backpressure: meter 'backlog' (period '') counts each tenant's deltas
-- emitted and not yet verified, raised in the emit's batch against the
-- plan's bound, lowered by the sequencer's round. Start it at what is
-- queued now.
INSERT INTO meters (tenant_id, meter, period, used, cap)
SELECT tenant_id, 'backlog', '', COUNT(*), COUNT(*) FROM deltas WHERE status = 'QUEUED'
GROUP BY tenant_id
ON CONFLICT (tenant_id, meter, period) DO UPDATE SET used = excluded.used,
    cap = MAX(meters.cap, excluded.used);
