-- The dashboard's event log (issue 30) shows each event with its
-- deliveries to every endpoint: found by event id.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
