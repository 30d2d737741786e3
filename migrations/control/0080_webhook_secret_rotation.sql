-- Webhook secret rotation (issue 29, docs/webhooks.md "Rotating the
-- secret"): the previous secret keeps signing (a second `v1,` signature in
-- `webhook-signature`) until `previous_secret_expires_at`, so a receiver
-- can switch secrets without dropping a delivery. Sealed like
-- `secret_sealed`; NULL when no rotation is in its overlap.
ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at INTEGER;
