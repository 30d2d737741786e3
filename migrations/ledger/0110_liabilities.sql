-- Issue 31 part B: liabilities statements (docs/liabilities.md). One
-- statement per request or closed period, built by a resumable job in the
-- tenant's ledger shard: phase 1 snapshots every ledger's balance at the
-- period's end (liability_ledgers), phase 2 pushes them in the
-- statement's shuffled order through core's StatementBuilder a page at a
-- time, writing the page's completed nodes (liability_nodes) with the new
-- builder state in one atomic batch. A finished statement is QUEUED for
-- the sequencer, which appends its item hash to the log (kind
-- 'liabilities') and marks it PUBLISHED.
CREATE TABLE liability_statements (
    id TEXT PRIMARY KEY,                  -- lst_...
    tenant_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    period TEXT NOT NULL,                 -- YYYY-MM
    status TEXT NOT NULL CHECK (status IN ('SNAPSHOT', 'BUILDING', 'QUEUED', 'PUBLISHED', 'FAILED')),
    builder_state TEXT NOT NULL,          -- core StatementBuilder text: holds the secret seed
    snapshot_cursor TEXT NOT NULL DEFAULT '',  -- last customer_id snapshotted
    ledger_count INTEGER NOT NULL DEFAULT 0,   -- ledgers snapshotted
    build_cursor TEXT NOT NULL DEFAULT '',     -- last order_key pushed
    built_count INTEGER NOT NULL DEFAULT 0,    -- ledgers pushed
    statement_json TEXT,                  -- the statement as hashed (RFC 8785)
    item_hash TEXT,                       -- Statement::item_hash: the log item
    supersedes TEXT,                      -- item hash of the statement replaced
    superseded_by TEXT,                   -- item hash of the statement replacing it
    liabilities_total TEXT,
    liabilities_count INTEGER,
    receivables_total TEXT,
    receivables_count INTEGER,
    failure TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    leaf_index INTEGER,
    tree_size INTEGER,
    published_at INTEGER
);
CREATE INDEX liability_statements_by_period ON liability_statements (tenant_id, period, created_at);
CREATE INDEX liability_statements_queued ON liability_statements (status) WHERE status = 'QUEUED';
CREATE INDEX liability_statements_by_item ON liability_statements (item_hash);

-- Phase 1's snapshot: one row per ledger with its balance at the period's
-- end, keyed by its order key (the shuffle); phase 2 fills the leaf
-- indexes.
CREATE TABLE liability_ledgers (
    statement_id TEXT NOT NULL,
    order_key TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    balance TEXT NOT NULL,
    liabilities_index INTEGER,
    receivables_index INTEGER,
    PRIMARY KEY (statement_id, order_key)
) WITHOUT ROWID;
CREATE INDEX liability_ledgers_by_customer ON liability_ledgers (statement_id, customer_id);

-- The completed nodes of both trees (core::liabilities::tree::NodeAddr),
-- about 2.2 per ledger, read back O(log n) at a time for a proof.
CREATE TABLE liability_nodes (
    statement_id TEXT NOT NULL,
    tree TEXT NOT NULL CHECK (tree IN ('liabilities', 'receivables')),
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash TEXT NOT NULL,
    sum TEXT NOT NULL,
    PRIMARY KEY (statement_id, tree, level, idx)
) WITHOUT ROWID;
