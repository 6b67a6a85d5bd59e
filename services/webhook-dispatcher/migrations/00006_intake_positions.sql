-- Where the intake of each partition has got to in each event stream (ports.Intake): every
-- catalogue event of the partition's companies at or below seq has its deliveries (or needed
-- none). A position moves in the transaction that creates the deliveries it covers, and only
-- while the partition's lease is held by the dispatcher that moves it, so a partition is read
-- from one place and a crash re-reads what was not committed. The dispatchers read the event
-- streams themselves: the WEBHOOK_EVENTS copy they read before is retired at start (see
-- ports.StartPositions).

-- +goose Up
CREATE TABLE partition_positions (
    stream    text    NOT NULL,
    partition integer NOT NULL CHECK (partition >= 0),
    seq       bigint  NOT NULL CHECK (seq >= 0),
    PRIMARY KEY (stream, partition)
);

-- The creation time of each event stream the positions count in: a stream created again (by an
-- operator) numbers new messages from 1, so its positions start over (ports.Intake.rewind).
CREATE TABLE intake_streams (
    stream  text        PRIMARY KEY,
    created timestamptz NOT NULL
);

-- +goose Down
DROP TABLE intake_streams;
DROP TABLE partition_positions;
