-- Two-party agreement (issue 19, docs/agreement.md).
-- Invitations: a vendor's single-use, expiring link for one customer ledger;
-- only the token's SHA-256 is stored.
CREATE TABLE invitations (
    token_hash TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    ledger_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
);

-- Counterparty keys: "ledger L has key K", each binding a signed
-- `bvs-agreement/v1 key` statement also recorded in the log (as a fact of
-- the tenant whose contentHash is the statement's item hash). The latest
-- binding of a ledger is its key.
CREATE TABLE counterparty_keys (
    item_hash TEXT PRIMARY KEY,
    ledger_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    verifier_key TEXT NOT NULL,
    statement TEXT NOT NULL,
    registered_at INTEGER NOT NULL
);
CREATE INDEX counterparty_keys_by_ledger ON counterparty_keys (ledger_id, registered_at);

-- Statements a counterparty signed about a committed checkpoint: `balance`
-- (agreed) or `dispute`, verified against the ledger's key, recorded in the
-- log the same way.
CREATE TABLE agreements (
    item_hash TEXT PRIMARY KEY,
    ledger_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    verifier_key TEXT NOT NULL,
    statement TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX agreements_by_checkpoint ON agreements (checkpoint_id, created_at);
