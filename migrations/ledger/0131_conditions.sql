-- Issue 43 (docs/balance.md, "Conditions"): a delta may carry conditions
-- checked when it is sequenced; one that fails them ends FAILED and its
-- refusal becomes a log item of its own kind.

-- The delta's conditions as hashed (`{"balanceAtLeast":"0"}`; NULL: none).
-- Part of the item hash: retention never purges it.
ALTER TABLE deltas ADD COLUMN conditions TEXT;
-- Why a FAILED delta failed: `{"code": ..., "message": ...}` (NULL for a
-- delta failed before this column: APPEND_FAILED).
ALTER TABLE deltas ADD COLUMN failure TEXT;
-- A refused delta's refusal item (its RFC 8785 text, whose SHA-256 is the
-- leaf's item hash), its leaf, the position it met (the asset's verified
-- deltas before it) and when the round refused it.
ALTER TABLE deltas ADD COLUMN refusal TEXT;
ALTER TABLE deltas ADD COLUMN refusal_leaf INTEGER;
ALTER TABLE deltas ADD COLUMN refusal_seq INTEGER;
ALTER TABLE deltas ADD COLUMN refused_at INTEGER;
CREATE INDEX deltas_refused_by_ledger ON deltas (tenant_id, customer_id, asset, refusal_seq)
    WHERE refusal_leaf IS NOT NULL;

-- A refusal is a log item of its own kind. SQLite cannot widen a CHECK in
-- place: the table is rebuilt (same columns, same index), as in 0111.
CREATE TABLE log_leaves_new (
    leaf_index INTEGER PRIMARY KEY,
    item_hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('delta', 'fact', 'checkpoint', 'liabilities', 'refusal')),
    ref_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    appended_at INTEGER NOT NULL
);
INSERT INTO log_leaves_new (leaf_index, item_hash, kind, ref_id, tenant_id, appended_at)
    SELECT leaf_index, item_hash, kind, ref_id, tenant_id, appended_at FROM log_leaves;
DROP TABLE log_leaves;
ALTER TABLE log_leaves_new RENAME TO log_leaves;
CREATE INDEX log_leaves_by_item ON log_leaves (item_hash);
