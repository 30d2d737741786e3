-- Mail through the queue (docs/security.md, "Cheap refusals"): resend-
-- verification and request-password-reset write one row here for any
-- address, known or not, then ring the queue; the consumer claims the row
-- (deletes it), looks the address up, and issues and sends the mail if
-- there is one to send. The HTTP path never reads the users table.
CREATE TABLE mail_requests (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX mail_requests_created ON mail_requests (created_at);
