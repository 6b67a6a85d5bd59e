package query

import (
	"context"

	"github.com/payplat/platform/services/gateway/domain"
)

// WebhookLogs asks for the newest entries of the caller's webhook delivery log.
type WebhookLogs struct {
	Principal domain.Principal
	Filter    domain.WebhookLogFilter
}

// WebhookLogReader reads the principal's delivery log entries the filter selects, newest first.
type WebhookLogReader interface {
	Logs(ctx context.Context, p domain.Principal, f domain.WebhookLogFilter) ([]domain.WebhookLogEntry, error)
}

// WebhookLogsHandler reads a company's webhook delivery log.
type WebhookLogsHandler struct {
	webhooks WebhookLogReader
}

// NewWebhookLogsHandler returns a WebhookLogsHandler reading through webhooks.
func NewWebhookLogsHandler(webhooks WebhookLogReader) WebhookLogsHandler {
	return WebhookLogsHandler{webhooks: webhooks}
}

// Handle returns the entries, newest first (nil when there are none).
func (h WebhookLogsHandler) Handle(ctx context.Context, q WebhookLogs) ([]domain.WebhookLogEntry, error) {
	return h.webhooks.Logs(ctx, q.Principal, q.Filter)
}
