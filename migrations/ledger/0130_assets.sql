-- Issue 43 (docs/balance.md, "Assets"): a ledger holds one balance per
-- asset. `asset` is the asset's key: '' for the tenant's default asset
-- (today's unnamed balance, and every row from before this migration),
-- else `CODE/p` (`USD/2`). A customer always has its default-asset row
-- (the emit writes it with the first delta of any asset), so the rows
-- with asset '' are the tenant's customers, one each.

-- The assets a tenant has used, with the precision each code was first
-- used with (a later delta naming another precision is refused) and the
-- tenant's default floor for debits of it (NULL: none).
CREATE TABLE assets (
    tenant_id TEXT NOT NULL,
    code TEXT NOT NULL,
    precision INTEGER NOT NULL,
    balance_at_least TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, code)
);

-- What refuses a delta whose code names another precision: the emit's
-- batch inserts a NULL code into it only when the stored precision
-- differs, the NOT NULL fails the whole batch (nothing of the request is
-- written), and the emit answers 400 naming the field. Never holds a row.
CREATE TABLE asset_guard (
    code TEXT NOT NULL
);

CREATE TABLE ledgers_0130 (
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    asset TEXT NOT NULL DEFAULT '',
    ledger_id TEXT NOT NULL,
    verified_count INTEGER NOT NULL DEFAULT 0,
    computed_balance TEXT NOT NULL DEFAULT '0',
    first_activity_at INTEGER,
    last_activity_at INTEGER,
    latest_items_root TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, customer_id, asset)
);
INSERT INTO ledgers_0130 (tenant_id, customer_id, asset, ledger_id, verified_count,
    computed_balance, first_activity_at, last_activity_at, latest_items_root, created_at)
SELECT tenant_id, customer_id, '', ledger_id, verified_count, computed_balance,
    first_activity_at, last_activity_at, latest_items_root, created_at
FROM ledgers;
DROP TABLE ledgers;
ALTER TABLE ledgers_0130 RENAME TO ledgers;

CREATE TABLE ledger_windows_0130 (
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    asset TEXT NOT NULL DEFAULT '',
    window TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    balance_before TEXT NOT NULL,
    balance_after TEXT NOT NULL,
    first_verified_at INTEGER NOT NULL,
    last_verified_at INTEGER NOT NULL,
    frontier TEXT NOT NULL DEFAULT '0:',
    first_leaf INTEGER NOT NULL DEFAULT 0,
    last_leaf INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, customer_id, asset, window)
);
INSERT INTO ledger_windows_0130 (tenant_id, customer_id, asset, window, first_seq, last_seq,
    balance_before, balance_after, first_verified_at, last_verified_at, frontier, first_leaf,
    last_leaf)
SELECT tenant_id, customer_id, '', window, first_seq, last_seq, balance_before, balance_after,
    first_verified_at, last_verified_at, frontier, first_leaf, last_leaf
FROM ledger_windows;
DROP TABLE ledger_windows;
ALTER TABLE ledger_windows_0130 RENAME TO ledger_windows;

-- A delta's asset; its ledger_seq and balance_after are its asset's.
ALTER TABLE deltas ADD COLUMN asset TEXT NOT NULL DEFAULT '';
DROP INDEX deltas_by_ledger;
CREATE INDEX deltas_by_ledger ON deltas (tenant_id, customer_id, asset, ledger_seq);

-- A checkpoint's and a receipt's asset: a customer's covers that asset's
-- deltas only; a whole-tenant checkpoint ('*') covers every asset.
ALTER TABLE checkpoints ADD COLUMN asset TEXT NOT NULL DEFAULT '';
ALTER TABLE receipts ADD COLUMN asset TEXT NOT NULL DEFAULT '';
