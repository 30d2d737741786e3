-- One ledger database per environment. Amounts are canonical decimal TEXT
-- (D1 integers pass through JS numbers). Times are unix milliseconds.

-- A customer's ledger: created by its first delta; aggregates are updated
-- by the sequencer when deltas are verified.
CREATE TABLE ledgers (
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    ledger_id TEXT NOT NULL,              -- derived, deterministic (docs/ledger.md)
    verified_count INTEGER NOT NULL DEFAULT 0,
    computed_balance TEXT NOT NULL DEFAULT '0',
    first_activity_at INTEGER,            -- first verification time
    last_activity_at INTEGER,             -- last verification time
    latest_items_root TEXT,               -- receipt id of the latest verified delta
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, customer_id)
);

-- One request that queued items: a single emit or a batch.
CREATE TABLE submissions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    contract_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('single', 'batch')),
    items_root TEXT NOT NULL,
    item_count INTEGER NOT NULL,
    received_at INTEGER NOT NULL
);
CREATE INDEX submissions_by_root ON submissions (items_root);

-- Deltas. rowid order is the queue order the sequencer follows.
CREATE TABLE deltas (
    anchor_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    position INTEGER NOT NULL,            -- index within the submission
    item_hash TEXT NOT NULL,
    items_root TEXT NOT NULL,             -- the submission's root (= receiptId)
    delta TEXT NOT NULL,
    reason TEXT,                          -- raw context: NULL once purged
    reference_id TEXT,
    metadata TEXT,
    declared_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('QUEUED', 'VERIFIED', 'FAILED')),
    leaf_index INTEGER,                   -- position in the environment's log
    tree_size INTEGER,                    -- first signed tree head that includes it
    ledger_seq INTEGER,                   -- 1-based position in the customer's ledger
    balance_after TEXT,                   -- ledger balance after this delta
    verified_at INTEGER,                  -- blockTimestamp
    data_purged INTEGER NOT NULL DEFAULT 0,
    purged_at INTEGER
);
CREATE INDEX deltas_by_ledger ON deltas (tenant_id, customer_id, ledger_seq);
CREATE INDEX deltas_queued ON deltas (status) WHERE status = 'QUEUED';
CREATE INDEX deltas_by_submission ON deltas (submission_id, position);
CREATE INDEX deltas_by_items_root ON deltas (items_root);
CREATE INDEX deltas_by_verified_at ON deltas (verified_at) WHERE data_purged = 0;

-- Per-ledger, per-month aggregates (by verification time), maintained by the
-- sequencer so that derive never scans history. A window covers the
-- contiguous ledger_seq range [first_seq, last_seq].
CREATE TABLE ledger_windows (
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    window TEXT NOT NULL,                 -- YYYY-MM
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    balance_before TEXT NOT NULL,         -- ledger balance before first_seq
    balance_after TEXT NOT NULL,          -- ledger balance after last_seq
    first_verified_at INTEGER NOT NULL,
    last_verified_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, customer_id, window)
);

-- Facts: arbitrary content identified by its SHA-256.
CREATE TABLE facts (
    tenant_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    content TEXT NOT NULL,
    metadata TEXT,                        -- NULL once purged
    status TEXT NOT NULL CHECK (status IN ('QUEUED', 'VERIFIED')),
    created_at INTEGER NOT NULL,
    leaf_index INTEGER,
    tree_size INTEGER,
    verified_at INTEGER,
    data_purged INTEGER NOT NULL DEFAULT 0,
    purged_at INTEGER,
    PRIMARY KEY (tenant_id, content_hash)
);
CREATE INDEX facts_queued ON facts (status) WHERE status = 'QUEUED';

-- The log: stored hashes in the Go tlog layout (tlog_tiles), one row each.
CREATE TABLE log_hashes (
    idx INTEGER PRIMARY KEY,
    hash TEXT NOT NULL
);

-- What each leaf of the log is. leaf_index is the primary key, so two
-- sequencers racing from the same tree size cannot both commit.
CREATE TABLE log_leaves (
    leaf_index INTEGER PRIMARY KEY,
    item_hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('delta', 'fact', 'checkpoint')),
    ref_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    appended_at INTEGER NOT NULL
);
CREATE INDEX log_leaves_by_item ON log_leaves (item_hash);

-- Signed tree heads (C2SP tlog-checkpoint signed notes).
CREATE TABLE tree_heads (
    tree_size INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    note TEXT NOT NULL,
    note_hash TEXT NOT NULL,              -- SHA-256 of the note: the API's txHash
    created_at INTEGER NOT NULL
);

-- Transactional outbox for events (delta.verified, checkpoint.verified ...):
-- written in the same batch as the state change, moved to webhook
-- deliveries in the control database by the webhook dispatcher.
CREATE TABLE events (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    dispatched_at INTEGER
);
CREATE INDEX events_pending ON events (created_at) WHERE dispatched_at IS NULL;
