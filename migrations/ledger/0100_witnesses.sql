-- Issue 28: witness cosignatures (C2SP tlog-witness) of this shard's log.
-- What each configured witness last cosigned, and how its last attempt went.
CREATE TABLE witness_state (
  -- the witness's cosignature verifier key (type 0x04): its identity
  vkey TEXT PRIMARY KEY,
  -- the policy's name for it (as configured when last attempted)
  name TEXT NOT NULL,
  -- the last tree size it cosigned, its root (hex) and its signature line
  -- (NULL: it has cosigned nothing yet)
  size INTEGER,
  root TEXT,
  line TEXT,
  -- when that cosignature was received (unix ms)
  cosigned_at INTEGER,
  -- how the last attempt went: cosigned, unavailable, refused (422),
  -- conflict (409 beyond our size), config (400/403/404), misbehaved
  status TEXT NOT NULL,
  -- the last error (kept after a later success: the operator's record)
  error TEXT,
  error_at INTEGER,
  attempted_at INTEGER NOT NULL,
  -- back-off: no attempt before this time (unix ms)
  retry_at INTEGER NOT NULL DEFAULT 0
);

-- Signed tree heads with the cosignature lines collected for them, as
-- published (`/log/<name>/checkpoint`, receipts, public answers).
CREATE TABLE witnessed_heads (
  tree_size INTEGER PRIMARY KEY,
  -- the log's signed note with the witnesses' cosignature lines
  note TEXT NOT NULL,
  cosigners INTEGER NOT NULL,
  -- 1 when the cosignatures meet the environment's quorum
  witnessed INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX witnessed_heads_witnessed ON witnessed_heads (witnessed, tree_size);
