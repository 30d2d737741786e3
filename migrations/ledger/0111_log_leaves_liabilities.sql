-- Issue 31 part B: a liabilities statement is a log item of its own kind.
-- SQLite cannot widen a CHECK in place: the table is rebuilt (same
-- columns, same index).
CREATE TABLE log_leaves_new (
    leaf_index INTEGER PRIMARY KEY,
    item_hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('delta', 'fact', 'checkpoint', 'liabilities')),
    ref_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    appended_at INTEGER NOT NULL
);
INSERT INTO log_leaves_new (leaf_index, item_hash, kind, ref_id, tenant_id, appended_at)
    SELECT leaf_index, item_hash, kind, ref_id, tenant_id, appended_at FROM log_leaves;
DROP TABLE log_leaves;
ALTER TABLE log_leaves_new RENAME TO log_leaves;
CREATE INDEX log_leaves_by_item ON log_leaves (item_hash);
