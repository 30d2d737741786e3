-- A receipt reads, in the same batch as its deltas (issue 16: at most three
-- sequential round trips), the committed checkpoints of its customer that
-- could have its root (same delta count), for its agreement side; before,
-- it looked them up by root after computing it. This index serves that read
-- without scanning every checkpoint of the tenant.
CREATE INDEX checkpoints_by_customer ON checkpoints (tenant_id, customer_id, created_at);
