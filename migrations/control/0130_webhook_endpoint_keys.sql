-- Per-endpoint Ed25519 signing keys (issue 40, docs/webhooks.md
-- "Verifying a delivery"): a webhook's `v1a,` key is derived from its id
-- and this generation (webhooks::signing::EndpointKey), so no key is
-- stored and every existing webhook has a key of its own at once
-- (generation 1). A rotation (`rotate-secret`) moves to the next
-- generation; the previous generation keeps signing beside it while the
-- previous secret does (`previous_secret_expires_at`).
ALTER TABLE webhooks ADD COLUMN key_generation INTEGER NOT NULL DEFAULT 1;
