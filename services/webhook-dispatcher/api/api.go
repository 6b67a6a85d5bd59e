// Package api is the webhook-dispatcher's request-reply service over NATS (a nats.go micro
// service named "webhooks", queue group "webhooks"): the subjects, the JSON requests and
// replies, the error codes, and the client the gateway uses; and the subjects on which it
// announces each recorded delivery attempt (outcomes.go).
//
// pkg/natsauth grants each subject by name, so a new endpoint needs a permission there too.
package api

import (
	"time"

	"github.com/payplat/platform/pkg/natsx"
)

// Service identity in `nats micro ls`. Every instance joins the queue group, so each request
// is answered once.
const (
	ServiceName = "webhooks"
	QueueGroup  = "webhooks"
	// SubjectPrefix is the group of every endpoint.
	SubjectPrefix = "webhooks"
)

// Endpoints, relative to SubjectPrefix.
const (
	EndpointConfig = "config"
	EndpointRetry  = "retry"
	EndpointCron   = "cron"
)

// Subject returns the full subject of an endpoint.
func Subject(endpoint string) string { return SubjectPrefix + "." + endpoint }

// How long the Client waits for a reply: a configuration is quick; a manual retry or a cron run
// waits for attempts bounded by WEBHOOK_TIMEOUT (10 s by default).
const (
	ConfigTimeout  = 10 * time.Second
	AttemptTimeout = 45 * time.Second
)

// Error codes of a failed request, in the Nats-Service-Error-Code header and the body (an
// Error). The names are those of the merchant's and the pool's contracts; the values are the
// HTTP status the gateway answers with, kept as they were on the wire so that gateways and
// dispatchers of different releases understand each other during a rolling upgrade.
const (
	CodeValidation = "400"
	CodeNotFound   = "404"
	CodeInFlight   = "409"
	// CodeRateLimited refuses a manual retry over its company's rate; the body's RetryAfter says
	// when the next is accepted.
	CodeRateLimited = "429"
	CodeInternal    = "500"
	// CodeServiceUnavailable is set by the Client, never sent: no webhook-dispatcher answered in
	// time.
	CodeServiceUnavailable = natsx.CodeUnavailable
)

// ConfigRequest configures the endpoint of a company and environment.
type ConfigRequest struct {
	CompanyID   string  `json:"company_id"`
	Environment string  `json:"environment"`
	URL         *string `json:"url,omitempty"`
	Enabled     *bool   `json:"enabled,omitempty"`
	RollSecret  bool    `json:"roll_secret"`
}

// ConfigReply is the endpoint after the change. Secret is set only when it was just created.
type ConfigReply struct {
	URL           string `json:"url"`
	Enabled       bool   `json:"enabled"`
	Secret        string `json:"secret,omitempty"`
	SecretVersion int    `json:"secret_version"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
}

// RetryRequest asks for an immediate attempt of one delivery; the reply is its LogEntry.
type RetryRequest struct {
	CompanyID   string `json:"company_id"`
	Environment string `json:"environment"`
	LogID       string `json:"log_id"`
}

// CronRequest asks for one run of the due retries.
type CronRequest struct {
	Limit int `json:"limit,omitempty"`
}

// CronReply counts a cron run's attempts.
type CronReply struct {
	TotalProcessed int `json:"total_processed"`
	Successful     int `json:"successful"`
	Failed         int `json:"failed"`
}

// LogEntry is a delivery log entry (SPEC 2.8), as the gateway serves it.
type LogEntry struct {
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

// Error is an error reply, in the one error shape of every service's API; its RetryAfter is
// the seconds until a request refused for its rate (CodeRateLimited) will be accepted.
type Error = natsx.Error
