-- Issue 25, the two-party agreement (docs/agreement.md).
--
-- 1. Canonical statements. A statement is stored and logged as its text and
--    the signing key's own signature line only, so appending signature
--    lines by other keys makes no new statement; `text` (the statement text
--    through its last newline) is what makes two statements the same: one
--    (checkpoint, key, text) is one statement. Statements recorded before
--    were stored as submitted: replays padded with other keys' signature
--    lines are dropped here, keeping the first of each (their facts stay in
--    the log, provable through the facts routes).
ALTER TABLE agreements ADD COLUMN text TEXT;
UPDATE agreements SET text = substr(statement, 1, instr(statement, char(10) || char(10)));
DELETE FROM agreements WHERE rowid NOT IN
    (SELECT MIN(rowid) FROM agreements GROUP BY checkpoint_id, verifier_key, text);
CREATE UNIQUE INDEX agreements_one_per_text ON agreements (checkpoint_id, verifier_key, text);

-- 2. Who changed a ledger's key. A key binding after the first is either
--    signed by the key before it (a rotation by the customer: 1) or was
--    registered through a new invitation only (0: every receipt and public
--    answer flags it, "key changed on …, not signed by the previous key").
--    NULL for a ledger's first key (trust on first use). Bindings from
--    before could not carry the previous key's signature: 0.
ALTER TABLE counterparty_keys ADD COLUMN signed_by_previous INTEGER;
UPDATE counterparty_keys SET signed_by_previous = 0
WHERE EXISTS (SELECT 1 FROM counterparty_keys k
              WHERE k.ledger_id = counterparty_keys.ledger_id
                AND (k.registered_at < counterparty_keys.registered_at
                     OR (k.registered_at = counterparty_keys.registered_at
                         AND k.rowid < counterparty_keys.rowid)));
