-- Webhook endpoints (one per company and environment) and the delivery log.

-- +goose Up
CREATE TABLE endpoints (
    id             uuid        PRIMARY KEY,
    company_id     text        NOT NULL,
    environment    text        NOT NULL CHECK (environment IN ('test', 'live')),
    url            text        NOT NULL DEFAULT '',
    enabled        boolean     NOT NULL DEFAULT false,
    -- The signing secret sealed with AES-256-GCM under WEBHOOK_SECRET_KEY: nonce || ciphertext.
    secret_sealed  bytea       NOT NULL,
    secret_version integer     NOT NULL DEFAULT 1,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, environment)
);

CREATE TABLE deliveries (
    id              uuid        PRIMARY KEY,
    endpoint_id     uuid        NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    company_id      text        NOT NULL,
    environment     text        NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    -- The exact bytes POSTed on every attempt (serialised once, at creation).
    payload         bytea       NOT NULL,
    status          text        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED')),
    attempts        integer     NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    -- When the delivery is due for an automatic attempt; NULL once delivered or permanently failed.
    next_attempt_at timestamptz,
    response_status integer,
    response_body   text,
    error_message   text,
    -- A claim on the delivery while an attempt is in flight; an expired lease is free again.
    lease_until     timestamptz,
    lease_token     uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (endpoint_id, event_id)
);

CREATE INDEX deliveries_log ON deliveries (company_id, environment, created_at DESC, id DESC);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- +goose Down
DROP TABLE deliveries;
DROP TABLE endpoints;
