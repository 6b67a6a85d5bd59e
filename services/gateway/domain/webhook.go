package domain

import (
	"errors"
	"fmt"
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

// WebhookLogEntry is a delivery log entry (SPEC 2.8), times already in ISO 8601 UTC. A manual
// retry's reply (webhook-dispatcher api.LogEntry) converts to it field for field.
type WebhookLogEntry struct {
	ID             string  `json:"id"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastAttemptAt  *string `json:"last_attempt_at"`
	NextRetryAt    *string `json:"next_retry_at"`
	ResponseStatus *int    `json:"response_status"`
	ResponseBody   *string `json:"response_body"`
	ErrorMessage   *string `json:"error_message"`
	CreatedAt      string  `json:"created_at"`
}

// WebhookConfigChange is a change of the webhook endpoint; nil fields stay as they are.
type WebhookConfigChange struct {
	URL        *string
	Enabled    *bool
	RollSecret bool
}

// WebhookConfig is the endpoint after a change. Secret is set only when the change created it
// (a roll, or the first configuration), and is never readable again. The dispatcher's reply
// (webhook-dispatcher api.ConfigReply) converts to it field for field.
type WebhookConfig struct {
	URL           string `json:"url"`
	Enabled       bool   `json:"enabled"`
	Secret        string `json:"secret,omitempty"`
	SecretVersion int    `json:"secret_version"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
}

// WebhookCronResult counts one cron run's attempts (webhook-dispatcher api.CronReply converts to
// it field for field).
type WebhookCronResult struct {
	TotalProcessed int `json:"total_processed"`
	Successful     int `json:"successful"`
	Failed         int `json:"failed"`
}
