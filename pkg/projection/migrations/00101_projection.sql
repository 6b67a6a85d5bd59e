-- Event ids already applied by each projection fed from JetStream, written in the same
-- transaction as the read-table changes, so a redelivered message changes nothing.
-- (Projections fed from the service's own event store use eventstore's projection_checkpoints.)

-- +goose Up
CREATE TABLE projection_applied (
    projection text        NOT NULL,
    event_id   uuid        NOT NULL,
    stream_seq bigint      NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (projection, event_id)
);

-- +goose Down
DROP TABLE projection_applied;
