-- Issue 43 (docs/liabilities.md, "Assets"): a liabilities statement sums
-- one asset's balances: '' for the tenant's default asset (every
-- statement before this migration), else `CODE/p`. The period's
-- statements, their supersede chain and the customer's proof are each
-- per asset.
ALTER TABLE liability_statements ADD COLUMN asset TEXT NOT NULL DEFAULT '';
