-- Shards (issue 15): each environment's ledgers live on N databases
-- (LEDGER_<ENV>_<n>). A tenant's environment is placed on one shard when it
-- is provisioned; every contract from before sharding is on shard 0, where
-- its data already is.
ALTER TABLE contracts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
CREATE INDEX contracts_env_shard ON contracts (env, shard);

-- Which shard issued a proof root (a submission's items root, a receipt's
-- root, a checkpoint's root), written with it, so the public verify route
-- reads one shard instead of trying them all. A root from before sharding
-- has no row and lives on shard 0.
CREATE TABLE proof_roots (
  root TEXT NOT NULL PRIMARY KEY,
  env TEXT NOT NULL,
  shard INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
