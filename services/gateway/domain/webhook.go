package domain

import (
	"errors"
	"fmt"

	webhookapi "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// Errors of the webhook endpoints beyond the shared ones (the error table of ports/errors.go maps them).
var (
	// ErrWebhookInFlight means an attempt of the delivery is under way; retry it once it ends.
	ErrWebhookInFlight = errors.New("an attempt of this webhook delivery is in flight; retry shortly")
	// ErrWebhooksUnavailable means the webhook-dispatcher did not answer.
	ErrWebhooksUnavailable = errors.New("the webhook service is unavailable; retry later")
)

// WebhookRetryLimitedError refuses a manual retry: the company's manual retries in this
// environment are over their rate (the webhook-dispatcher's WEBHOOK_MANUAL_RETRY_RATE).
type WebhookRetryLimitedError struct {
	// RetryAfter is the seconds until the next manual retry is accepted (at least 1).
	RetryAfter int
}

func (e *WebhookRetryLimitedError) Error() string {
	return fmt.Sprintf("too many manual webhook retries for this company: retry after %d s", e.RetryAfter)
}

// Webhook delivery statuses (SPEC 3.4), the values of the logs' status filter.
var WebhookStatuses = []string{"SUCCESS", "FAILED", "PENDING"}

// WebhookLogFilter selects delivery log entries of the caller's company and environment.
type WebhookLogFilter struct {
	// Status and EventType are empty for no filter.
	Status    string
	EventType string
	Limit     int
}

// WebhookConfigChange is a change of the webhook endpoint; nil fields stay as they are.
type WebhookConfigChange struct {
	URL        *string
	Enabled    *bool
	RollSecret bool
}

// The gateway's API answers with what the webhook-dispatcher answers, so it speaks the
// dispatcher's contract types rather than copies of them that could drift. The gateway's own
// reads of the delivery log fill the same LogEntry.
type (
	// WebhookLogEntry is a delivery log entry (SPEC 2.8), times already in ISO 8601 UTC.
	WebhookLogEntry = webhookapi.LogEntry
	// WebhookConfig is the endpoint after a change. Secret is set only when the change created
	// it (a roll, or the first configuration), and is never readable again.
	WebhookConfig = webhookapi.ConfigReply
	// WebhookCronResult counts one cron run's attempts.
	WebhookCronResult = webhookapi.CronReply
)
