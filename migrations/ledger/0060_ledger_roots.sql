-- Issue 25 (docs/security.md, "What a root discloses"): a root given to one
-- customer opens only that customer's deltas.
--
-- 1. Per-ledger roots. A delta's `ledger_root` is the RFC 9162 root over the
--    itemHashes of its own ledger's deltas in its submission (position
--    order): the submission's items root when the submission holds one
--    ledger (every single emit), a root of its own for each ledger of a
--    batch that spans several. It is the proof root a customer is given
--    (derive, receipts, latestCheckpoint, the delta.verified webhook); the
--    vendor keeps the batch's items root. Written by emit; NULL only for
--    deltas from before this migration, which the minute sweep backfills
--    (`ledger::roots_backfill`: resumable, a bounded slice per run; the
--    partial index below finds what is left). Until then readers take the
--    items root, whose public answer shows no amounts when it spans ledgers.
ALTER TABLE deltas ADD COLUMN ledger_root TEXT;
CREATE INDEX deltas_by_ledger_root ON deltas (ledger_root) WHERE ledger_root IS NOT NULL;
CREATE INDEX deltas_without_ledger_root ON deltas (submission_id) WHERE ledger_root IS NULL;

-- 2. Whole-tenant checkpoints are stored with customer_id '*', which no
--    customer id can be (letters, digits, '_', '-', '.', ':'), instead of
--    'all', which one could (and is refused as a customer id from now on).
--    An existing 'all' checkpoint is the whole tenant's unless the tenant
--    has a ledger named 'all' whose verified deltas in the checkpoint's
--    span and period are exactly as many as it covers (then it is that
--    ledger's; where both readings cover the same deltas they are the same
--    checkpoint). docs/proofs-api.md, "Customer ids".
UPDATE checkpoints SET customer_id = '*'
WHERE customer_id = 'all'
  AND (NOT EXISTS (SELECT 1 FROM ledgers l
                   WHERE l.tenant_id = checkpoints.tenant_id AND l.customer_id = 'all')
       OR delta_count != (SELECT COUNT(*) FROM deltas d
                          WHERE d.tenant_id = checkpoints.tenant_id AND d.customer_id = 'all'
                            AND d.status = 'VERIFIED'
                            AND d.leaf_index >= checkpoints.from_index
                            AND d.leaf_index <= checkpoints.to_index
                            AND d.verified_at >= CAST(strftime('%s', checkpoints.period || '-01') AS INTEGER) * 1000
                            AND d.verified_at < CAST(strftime('%s', checkpoints.period || '-01', '+1 month') AS INTEGER) * 1000));

-- 3. Whether the records a checkpoint's public answer lists recompute its
--    merkleRoot, checked once (when the checkpoint is created, or by the
--    minute sweep for one too large to check at once and for those from
--    before this migration) and stored, so that an anonymous GET never
--    re-reads a whole checkpoint: 1 passed, 0 failed, NULL not yet. The
--    sweep's progress through a large checkpoint: the frontier over the
--    records read so far (`bvs_core::frontier` text) and the last leaf read.
ALTER TABLE checkpoints ADD COLUMN records_verified INTEGER;
ALTER TABLE checkpoints ADD COLUMN check_frontier TEXT;
ALTER TABLE checkpoints ADD COLUMN check_after_leaf INTEGER;
CREATE INDEX checkpoints_unchecked ON checkpoints (created_at) WHERE records_verified IS NULL;
