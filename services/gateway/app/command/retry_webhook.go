package command

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// RetryWebhook attempts one of the caller's webhook deliveries now, whatever its schedule.
type RetryWebhook struct {
	Principal domain.Principal
	// LogID is the delivery's id as the caller gave it.
	LogID string
}

// WebhookRetrier asks the webhook-dispatcher to attempt one of the principal's deliveries now
// and returns the updated entry; domain.ErrNotFound for another company's or environment's,
// domain.ErrWebhookInFlight while an attempt is under way, *domain.WebhookRetryLimitedError over
// the company's rate of manual retries.
type WebhookRetrier interface {
	Retry(ctx context.Context, p domain.Principal, logID uuid.UUID) (domain.WebhookLogEntry, error)
}

// RetryWebhookHandler runs RetryWebhook.
type RetryWebhookHandler struct {
	webhooks WebhookRetrier
}

// NewRetryWebhookHandler returns a RetryWebhookHandler retrying through webhooks.
func NewRetryWebhookHandler(webhooks WebhookRetrier) RetryWebhookHandler {
	return RetryWebhookHandler{webhooks: webhooks}
}

// Handle retries the delivery; a malformed id is domain.ErrNotFound like another company's.
func (h RetryWebhookHandler) Handle(ctx context.Context, cmd RetryWebhook) (domain.WebhookLogEntry, error) {
	id, err := uuid.Parse(cmd.LogID)
	if err != nil {
		return domain.WebhookLogEntry{}, domain.ErrNotFound
	}
	return h.webhooks.Retry(ctx, cmd.Principal, id)
}
