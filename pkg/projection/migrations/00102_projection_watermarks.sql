-- How far a rebuild of each stream-fed projection read each stream: its swap sets the stream
-- sequence here, and the live consumer skips the events at or below it as applied (the rebuilt
-- tables hold them). See pkg/projection/watermark.go.

-- +goose Up
CREATE TABLE projection_watermarks (
    projection text        NOT NULL,
    stream     text        NOT NULL,
    stream_seq bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (projection, stream)
);

-- +goose Down
DROP TABLE projection_watermarks;
