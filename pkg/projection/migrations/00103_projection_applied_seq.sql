-- The applied event ids of a projection in stream order, for the Pruner: it deletes, in
-- batches, those at or below its consumer's ack floor (pkg/projection/prune.go).

-- +goose Up
CREATE INDEX projection_applied_seq ON projection_applied (projection, stream_seq);

-- +goose Down
DROP INDEX projection_applied_seq;
