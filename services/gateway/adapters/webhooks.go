package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	webhookapi "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// Webhooks reads the delivery log straight from the webhook-dispatcher's tables (schema
// webhooks, read-only) and sends its commands over NATS request-reply
// (services/webhook-dispatcher/api).
type Webhooks struct {
	db     *pgxpool.Pool
	client *webhookapi.Client
}

// NewWebhooks returns the adapter; nc may be nil (then every command is unavailable).
func NewWebhooks(db *pgxpool.Pool, nc *nats.Conn) *Webhooks {
	return &Webhooks{db: db, client: webhookapi.NewClient(nc)}
}

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
	r, err := w.client.Configure(ctx, webhookapi.ConfigRequest{CompanyID: p.CompanyID.String(),
		Environment: string(p.Environment), URL: c.URL, Enabled: c.Enabled, RollSecret: c.RollSecret})
	if err != nil {
		return domain.WebhookConfig{}, webhookError(err)
	}
	return r, nil
}

// Retry dispatches one of the caller's deliveries now and returns the updated entry.
func (w *Webhooks) Retry(ctx context.Context, p domain.Principal, logID uuid.UUID) (domain.WebhookLogEntry, error) {
	e, err := w.client.Retry(ctx, webhookapi.RetryRequest{CompanyID: p.CompanyID.String(),
		Environment: string(p.Environment), LogID: logID.String()})
	if err != nil {
		return domain.WebhookLogEntry{}, webhookError(err)
	}
	return e, nil
}

// RunCron has the dispatcher process the due retries once.
func (w *Webhooks) RunCron(ctx context.Context) (domain.WebhookCronResult, error) {
	r, err := w.client.RunCron(ctx, webhookapi.CronRequest{})
	if err != nil {
		return domain.WebhookCronResult{}, webhookError(err)
	}
	return r, nil
}

// webhookError turns the dispatcher's error replies into the gateway's errors.
func webhookError(err error) error {
	var e *webhookapi.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case webhookapi.CodeValidation:
		return validation.Invalid(e.Field, e.Message)
	case webhookapi.CodeNotFound:
		return domain.ErrNotFound
	case webhookapi.CodeInFlight:
		return domain.ErrWebhookInFlight
	case webhookapi.CodeRateLimited:
		return &domain.WebhookRetryLimitedError{RetryAfter: max(e.RetryAfter, 1)}
	case webhookapi.CodeServiceUnavailable:
		return fmt.Errorf("%w: %s", domain.ErrWebhooksUnavailable, e.Message)
	default:
		return fmt.Errorf("webhook service error %s: %s", e.Code, e.Message)
	}
}
