-- Relay leadership as a lease with a fencing token (pkg/relay/lease.go). A session advisory lock
-- alone kept a leader that hung or was cut off (SIGSTOP, a network partition) in charge until
-- TCP keepalive gave up, hours later, and the relay stalled meanwhile.

-- +goose Up
-- One row per relay: who leads, with which token, until when (PostgreSQL's clock). A replica
-- takes the lease over when it has expired, or at once when the holder's session is gone, and
-- increments the token.
CREATE TABLE relay_leases (
    name        text        PRIMARY KEY,
    holder      text        NOT NULL DEFAULT '',
    token       bigint      NOT NULL DEFAULT 0,
    expires_at  timestamptz NOT NULL DEFAULT '-infinity',
    acquired_at timestamptz,
    renewed_at  timestamptz
);

-- The token of the lease the checkpoint belongs to: a takeover writes its token here, and every
-- checkpoint write requires it, so a leader that lost its lease cannot move the checkpoint.
ALTER TABLE relay_checkpoints ADD COLUMN lease_token bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE relay_checkpoints DROP COLUMN lease_token;
DROP TABLE relay_leases;
