-- Dashboard sessions (issue 18). A person signs in with a secret key once; the browser then holds
-- only a random session token in an HttpOnly cookie. The table keeps the SHA-256 of that token,
-- never the token or the key. A session belongs to the API key it was opened with: it works only
-- while that key is active, so rolling the key ends every session opened with it at once (the
-- lookup joins api_keys and requires revoked_at IS NULL).

-- +goose Up
CREATE TABLE dashboard_sessions (
    token_hash   bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    key_id       uuid        NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- Refreshed at most once a minute by the requests of the session; idle expiry counts from it.
    last_seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dashboard_sessions_key_idx ON dashboard_sessions (key_id);
-- Serves the purge of idle sessions.
CREATE INDEX dashboard_sessions_last_seen_idx ON dashboard_sessions (last_seen_at);

-- +goose Down
DROP TABLE dashboard_sessions;
