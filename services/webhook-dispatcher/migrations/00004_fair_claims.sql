-- Due deliveries are claimed round-robin across endpoints (adapters.Store.claimWhere): each
-- endpoint's oldest due deliveries are read from this index in claim order (id breaks the ties
-- of a batch created in one statement), so a dead endpoint's thousands of due retries are
-- never scanned beyond one batch. It replaces the index on next_attempt_at alone, which served
-- the former claim (oldest first across all companies).

-- +goose Up
CREATE INDEX deliveries_due_by_endpoint ON deliveries (endpoint_id, next_attempt_at, id)
    WHERE next_attempt_at IS NOT NULL;
DROP INDEX deliveries_due;

-- +goose Down
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
DROP INDEX deliveries_due_by_endpoint;
