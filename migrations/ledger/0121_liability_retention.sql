-- Issue 31 part D: a statement's snapshot (liability_ledgers) and nodes
-- (liability_nodes) follow the tenant's retention window
-- (docs/liabilities.md §12). The retention purge stamps purged_at (and
-- drops the seed from builder_state) first, so a proof is refused (410
-- liabilities_purged) from then on, then deletes the rows a bounded
-- number per run. The statement row itself (statement_json, item_hash,
-- totals, counts, leaf_index) is kept, and so is its log item.
ALTER TABLE liability_statements ADD COLUMN purged_at INTEGER;
