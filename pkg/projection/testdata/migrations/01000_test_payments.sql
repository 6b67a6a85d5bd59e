-- +goose Up
CREATE TABLE test_payments (
    payment_id text PRIMARY KEY,
    amount     text   NOT NULL,
    applied    int    NOT NULL DEFAULT 1,
    stream_seq bigint NOT NULL DEFAULT 0
);
-- +goose Down
DROP TABLE test_payments;
