-- +goose Up
-- One row per Idempotency-Key and caller scope ("company:<id>:<env>", "admin", "cron"). The row
-- is inserted before the handler runs, so that a concurrent duplicate finds it (status_code NULL:
-- in flight); the first response is stored when the handler finishes with a status below 500.
--
-- Responses can hold secrets (company creation returns the new API keys), so the key itself is
-- stored only as a hash and the response body is encrypted with a key derived from the
-- Idempotency-Key: only a caller presenting it again can read the body (see
-- adapters.IdempotencyStore).
CREATE TABLE idempotency_keys (
    scope            text        NOT NULL,
    key_hash         bytea       NOT NULL CHECK (octet_length(key_hash) = 32),
    fingerprint      bytea       NOT NULL,
    -- Random token of the request that holds the key, so that a request presumed dead and
    -- then taken over cannot overwrite its successor's outcome.
    owner            uuid        NOT NULL,
    status_code      integer,
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- While in flight: after this instant the request is presumed dead (process crash) and a
    -- retry of the same request may take the key over.
    locked_until     timestamptz NOT NULL,
    completed_at     timestamptz,
    PRIMARY KEY (scope, key_hash),
    CHECK ((status_code IS NULL) = (completed_at IS NULL))
);

CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
