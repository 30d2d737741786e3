-- Issue 31 part D: a customer's co-signature of its inclusion in a
-- liabilities statement (`bvs-agreement/v1 liabilities`,
-- docs/liabilities.md §11), sent beside its period's balance statement.
-- Logged as a fact of the tenant (its content the canonical signed note),
-- like the other agreement statements; one row per canonical note.
CREATE TABLE liability_cosignatures (
    item_hash TEXT PRIMARY KEY,           -- SHA-256 of the canonical signed note
    statement_id TEXT NOT NULL,           -- lst_...: the statement co-signed
    ledger_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    verifier_key TEXT NOT NULL,
    statement TEXT NOT NULL,              -- the canonical signed note
    created_at INTEGER NOT NULL
);
CREATE INDEX liability_cosignatures_by_statement ON liability_cosignatures (statement_id, created_at);
