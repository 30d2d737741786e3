-- Dashboard: tenants, users, single-use e-mail tokens, environments
-- (contracts), API keys, monthly usage and the DEV_MODE mail outbox.
--
-- Invariant: no column holds a password, an API-key secret or an e-mail
-- token in clear. Passwords are PBKDF2 hashes, key secrets and tokens are
-- SHA-256 hashes, and the dev outbox seals its bodies.

CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    plan TEXT NOT NULL DEFAULT 'free'
        CHECK (plan IN ('free', 'pilot', 'growth', 'enterprise')),
    -- NULL keeps raw business data forever (the spec's default).
    data_retention_days INTEGER
        CHECK (data_retention_days IS NULL OR data_retention_days IN (7, 30, 90)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX tenants_with_retention ON tenants (data_retention_days)
    WHERE data_retention_days IS NOT NULL;

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    -- Lowercased by bvs_core::types::Email.
    email TEXT NOT NULL UNIQUE,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'owner',
    -- pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>
    password_hash TEXT NOT NULL,
    email_verified INTEGER NOT NULL DEFAULT 0,
    preferred_environment TEXT NOT NULL DEFAULT 'sandbox'
        CHECK (preferred_environment IN ('sandbox', 'production')),
    -- Carried in every JWT; bumped by a password change or reset, which
    -- revokes every JWT issued before.
    session_version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX users_tenant ON users (tenant_id);

CREATE TABLE auth_tokens (
    -- Lowercase hex SHA-256 of the token sent by e-mail.
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    purpose TEXT NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
    expires_at INTEGER NOT NULL,
    used_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX auth_tokens_user ON auth_tokens (user_id, purpose);

CREATE TABLE contracts (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    env TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    status TEXT NOT NULL
        CHECK (status IN ('not_provisioned', 'provisioning', 'active', 'error')),
    provisioned_at INTEGER,
    -- Why setup failed (status 'error'); never shown with internal detail.
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, env)
);

CREATE TABLE api_keys (
    -- The {id} part of pk_{env}_{id}.{secret}.
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    env TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    name TEXT,
    -- Lowercase hex SHA-256 of the {secret} part.
    secret_hash TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    deleted_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

CREATE TABLE usage_monthly (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    env TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    -- YYYY-MM, UTC.
    period TEXT NOT NULL,
    deltas_used INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, env, period)
);

-- DEV_MODE only: the dev mail transport's outbox. `sealed` holds the body
-- and token, encrypted and authenticated with a key derived from JWT_SECRET.
CREATE TABLE mail_outbox (
    id TEXT PRIMARY KEY,
    to_email TEXT NOT NULL,
    subject TEXT NOT NULL,
    kind TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX mail_outbox_to ON mail_outbox (to_email, created_at);
