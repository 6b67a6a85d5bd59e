-- The event store of one service schema: one append-only table of events with a global position,
-- a stream id and a stream version. Readers tail it in (tx_id, position) order, taking only rows
-- whose transaction is older than every transaction still running, so a late commit is never
-- skipped (see pkg/eventstore/doc.go).

-- +goose Up
CREATE TABLE events (
    position       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx_id          xid8        NOT NULL DEFAULT pg_current_xact_id(),
    event_id       uuid        NOT NULL,
    stream_id      text        NOT NULL,
    stream_version bigint      NOT NULL CHECK (stream_version > 0),
    event_type     text        NOT NULL,
    subject        text        NOT NULL,
    company_id     text        NOT NULL,
    environment    text        NOT NULL,
    correlation_id text        NOT NULL DEFAULT '',
    causation_id   text        NOT NULL DEFAULT '',
    occurred_at    timestamptz NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    payload        bytea       NOT NULL,
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version)
);
CREATE INDEX events_tx_position_idx ON events (tx_id, position);

-- Where each relay (event store -> JetStream) has got to: the last event position it knows the
-- stream holds, and that message's stream sequence.
CREATE TABLE relay_checkpoints (
    name        text        PRIMARY KEY,
    tx_id       xid8        NOT NULL,
    position    bigint      NOT NULL,
    stream_seq  bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Where each projection fed from this event store has got to, written in the same transaction
-- as the read-table changes it made.
CREATE TABLE projection_checkpoints (
    name        text        PRIMARY KEY,
    tx_id       xid8        NOT NULL,
    position    bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_checkpoints;
DROP TABLE relay_checkpoints;
DROP TABLE events;
