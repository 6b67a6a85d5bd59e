-- +goose Up
CREATE TABLE companies (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL CHECK (char_length(name) BETWEEN 2 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX companies_created_at_idx ON companies (created_at DESC, id DESC);

-- Keys are stored only as the SHA-256 of the full key (see domain.APIKey for why a fast hash is
-- right for 238-bit random keys); display_prefix is the non-secret start shown to operators.
CREATE TABLE api_keys (
    id             uuid        PRIMARY KEY,
    company_id     uuid        NOT NULL REFERENCES companies (id),
    kind           text        NOT NULL CHECK (kind IN ('secret', 'publishable')),
    environment    text        NOT NULL CHECK (environment IN ('test', 'live')),
    display_prefix text        NOT NULL,
    key_hash       bytea       NOT NULL CHECK (octet_length(key_hash) = 32),
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz,
    CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);

-- At most one active key per company, kind and environment: a roll revokes the old key and
-- inserts the new one in one transaction, and two concurrent rolls cannot both succeed.
CREATE UNIQUE INDEX api_keys_one_active_idx
    ON api_keys (company_id, kind, environment) WHERE revoked_at IS NULL;

-- +goose Down
DROP TABLE api_keys;
DROP TABLE companies;
