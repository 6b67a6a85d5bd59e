package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/services/gateway/domain"
)

// The webhook-dispatcher's request-reply subjects (service "webhooks") and the error codes of
// its replies (header Nats-Service-Error-Code).
const (
	webhooksConfigSubject = "webhooks.config"
	webhooksRetrySubject  = "webhooks.retry"
	webhooksCronSubject   = "webhooks.cron"
)

// How long the gateway waits for the dispatcher: a configuration is quick; a manual retry or a
// cron run waits for attempts bounded by WEBHOOK_TIMEOUT (10 s by default).
const (
	webhooksConfigTimeout = 10 * time.Second
	webhooksAttemptWait   = 45 * time.Second
)

// Webhooks reads the delivery log straight from the webhook-dispatcher's tables (schema
// webhooks, read-only) and sends its commands over NATS request-reply.
type Webhooks struct {
	db *pgxpool.Pool
	nc *nats.Conn
}

// NewWebhooks returns the adapter; nc may be nil (then every command is unavailable).
func NewWebhooks(db *pgxpool.Pool, nc *nats.Conn) *Webhooks { return &Webhooks{db: db, nc: nc} }

const webhookTime = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

// Logs returns the caller's delivery log entries, newest first.
func (w *Webhooks) Logs(ctx context.Context, p domain.Principal, f domain.WebhookLogFilter) ([]domain.WebhookLogEntry, error) {
	rows, err := w.db.Query(ctx, `SELECT id::text, event_id::text, event_type, status, attempts,
			to_char(last_attempt_at AT TIME ZONE 'UTC', `+webhookTime+`),
			CASE WHEN status = 'FAILED' THEN to_char(next_attempt_at AT TIME ZONE 'UTC', `+webhookTime+`) END,
			response_status, response_body, error_message,
			to_char(created_at AT TIME ZONE 'UTC', `+webhookTime+`)
		FROM webhooks.deliveries
		WHERE company_id = $1 AND environment = $2
			AND ($3 = '' OR status = $3) AND ($4 = '' OR event_type = $4)
		ORDER BY created_at DESC, id DESC
		LIMIT $5`, p.CompanyID.String(), string(p.Environment), f.Status, f.EventType, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("reading webhook logs: %w", err)
	}
	logs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.WebhookLogEntry, error) {
		var e domain.WebhookLogEntry
		err := row.Scan(&e.ID, &e.EventID, &e.EventType, &e.Status, &e.Attempts, &e.LastAttemptAt, &e.NextRetryAt,
			&e.ResponseStatus, &e.ResponseBody, &e.ErrorMessage, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading webhook logs: %w", err)
	}
	return logs, nil
}

// Configure changes the caller's webhook endpoint.
func (w *Webhooks) Configure(ctx context.Context, p domain.Principal, c domain.WebhookConfigChange) (domain.WebhookConfig, error) {
	req := struct {
		CompanyID   string  `json:"company_id"`
		Environment string  `json:"environment"`
		URL         *string `json:"url,omitempty"`
		Enabled     *bool   `json:"enabled,omitempty"`
		RollSecret  bool    `json:"roll_secret"`
	}{p.CompanyID.String(), string(p.Environment), c.URL, c.Enabled, c.RollSecret}
	var out domain.WebhookConfig
	err := w.request(ctx, webhooksConfigSubject, webhooksConfigTimeout, req, &out)
	return out, err
}

// Retry dispatches one of the caller's deliveries now and returns the updated entry.
func (w *Webhooks) Retry(ctx context.Context, p domain.Principal, logID uuid.UUID) (domain.WebhookLogEntry, error) {
	req := struct {
		CompanyID   string `json:"company_id"`
		Environment string `json:"environment"`
		LogID       string `json:"log_id"`
	}{p.CompanyID.String(), string(p.Environment), logID.String()}
	var out domain.WebhookLogEntry
	err := w.request(ctx, webhooksRetrySubject, webhooksAttemptWait, req, &out)
	return out, err
}

// RunCron has the dispatcher process the due retries once.
func (w *Webhooks) RunCron(ctx context.Context) (domain.WebhookCronResult, error) {
	var out domain.WebhookCronResult
	err := w.request(ctx, webhooksCronSubject, webhooksAttemptWait, struct{}{}, &out)
	return out, err
}

// request sends in to subject and decodes the reply into out, turning the dispatcher's error
// replies into the gateway's errors.
func (w *Webhooks) request(ctx context.Context, subject string, timeout time.Duration, in, out any) error {
	if w.nc == nil {
		return domain.ErrWebhooksUnavailable
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := w.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) ||
			errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionClosed) {
			return fmt.Errorf("%s: %w: %v", subject, domain.ErrWebhooksUnavailable, err)
		}
		return fmt.Errorf("%s: %w", subject, err)
	}
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		return replyError(code, msg)
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return fmt.Errorf("%s: decoding reply: %w", subject, err)
	}
	return nil
}

func replyError(code string, msg *nats.Msg) error {
	var body struct {
		Message    string `json:"message"`
		Field      string `json:"field"`
		RetryAfter int    `json:"retry_after"`
	}
	_ = json.Unmarshal(msg.Data, &body)
	switch code {
	case "400":
		return domain.Invalid(body.Field, body.Message)
	case "404":
		return domain.ErrNotFound
	case "409":
		return domain.ErrWebhookInFlight
	case "429":
		return &domain.WebhookRetryLimitedError{RetryAfter: max(body.RetryAfter, 1)}
	default:
		return fmt.Errorf("webhook service error %s: %s", code, msg.Header.Get("Nats-Service-Error"))
	}
}
