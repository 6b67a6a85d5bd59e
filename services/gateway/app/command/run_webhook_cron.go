package command

import (
	"context"

	"github.com/payplat/platform/services/gateway/domain"
)

// WebhookCronRunner has the webhook-dispatcher attempt the deliveries whose retry is due (at
// most 20 a run).
type WebhookCronRunner interface {
	RunCron(ctx context.Context) (domain.WebhookCronResult, error)
}

// RunWebhookCronHandler runs the scheduled webhook retries once (the cron's call).
type RunWebhookCronHandler struct {
	webhooks WebhookCronRunner
}

// NewRunWebhookCronHandler returns a RunWebhookCronHandler running through webhooks.
func NewRunWebhookCronHandler(webhooks WebhookCronRunner) RunWebhookCronHandler {
	return RunWebhookCronHandler{webhooks: webhooks}
}

// Handle runs the due retries and counts their outcomes.
func (h RunWebhookCronHandler) Handle(ctx context.Context) (domain.WebhookCronResult, error) {
	return h.webhooks.RunCron(ctx)
}
