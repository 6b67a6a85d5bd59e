-- Delivered deliveries are deleted once older than WEBHOOK_DELIVERY_RETENTION (app.Prune), in
-- small batches, oldest first: this index finds them without scanning the log, and holds only
-- delivered rows, so the deliveries still being attempted never pay for it.

-- +goose Up
CREATE INDEX deliveries_delivered ON deliveries (last_attempt_at) WHERE status = 'SUCCESS';

-- +goose Down
DROP INDEX deliveries_delivered;
