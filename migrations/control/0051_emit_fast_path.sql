-- Emit in two round trips (issue 16): the monthly delta quota and the
-- Idempotency-Key claims of emits moved to the tenant's ledger shard, next
-- to the write they guard, into its atomic batch (meters 'deltas' and
-- idempotency_claims, migrations/ledger/0051_emit_claims.sql). No other
-- route takes an Idempotency-Key, so the control database keeps neither.
-- Nothing is deployed yet: the counts are not carried over.
DROP TABLE usage_monthly;
DROP TABLE idempotency_keys;
