package adapters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// The dashboard's webhook reads (issue 18), straight from the webhook-dispatcher's tables
// (schema webhooks, read-only) like Logs: the endpoint, one delivery with its body, pages of the
// log, and the health of the recent deliveries.

// webhookLogColumns are the columns of a log entry in the order scanWebhookLog reads them.
const webhookLogColumns = `id::text, event_id::text, event_type, status, attempts,
    to_char(last_attempt_at AT TIME ZONE 'UTC', ` + webhookTime + `),
    CASE WHEN status = 'FAILED' THEN to_char(next_attempt_at AT TIME ZONE 'UTC', ` + webhookTime + `) END,
    response_status, response_body, error_message,
    to_char(created_at AT TIME ZONE 'UTC', ` + webhookTime + `)`

func scanWebhookLog(row pgx.CollectableRow) (domain.WebhookLogEntry, error) {
	var e domain.WebhookLogEntry
	err := row.Scan(&e.ID, &e.EventID, &e.EventType, &e.Status, &e.Attempts, &e.LastAttemptAt, &e.NextRetryAt,
		&e.ResponseStatus, &e.ResponseBody, &e.ErrorMessage, &e.CreatedAt)
	return e, err
}

// Endpoint returns the principal's webhook endpoint, and false when none is configured.
func (w *Webhooks) Endpoint(ctx context.Context, p domain.Principal) (domain.WebhookEndpoint, bool, error) {
	var e domain.WebhookEndpoint
	err := w.db.QueryRow(ctx, `SELECT url, enabled, secret_version, updated_at FROM webhooks.endpoints
        WHERE company_id = $1 AND environment = $2`, p.CompanyID.String(), string(p.Environment)).
		Scan(&e.URL, &e.Enabled, &e.SecretVersion, &e.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) || isUndefinedTable(err) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("reading webhook endpoint: %w", err)
	}
	return e, true, nil
}

// Delivery returns one of the principal's deliveries with its body; domain.ErrNotFound for an
// unknown id or another tenant's.
func (w *Webhooks) Delivery(ctx context.Context, p domain.Principal, id string) (domain.WebhookDelivery, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return domain.WebhookDelivery{}, domain.ErrNotFound
	}
	rows, err := w.db.Query(ctx, `SELECT `+webhookLogColumns+`, convert_from(payload, 'UTF8')
        FROM webhooks.deliveries WHERE id = $1 AND company_id = $2 AND environment = $3`,
		pgtype.UUID{Bytes: u, Valid: true}, p.CompanyID.String(), string(p.Environment))
	if err != nil {
		return domain.WebhookDelivery{}, fmt.Errorf("reading webhook delivery: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.WebhookDelivery, error) {
		var d domain.WebhookDelivery
		e := &d.WebhookLogEntry
		err := row.Scan(&e.ID, &e.EventID, &e.EventType, &e.Status, &e.Attempts, &e.LastAttemptAt, &e.NextRetryAt,
			&e.ResponseStatus, &e.ResponseBody, &e.ErrorMessage, &e.CreatedAt, &d.Payload)
		return d, err
	})
	if err != nil {
		return domain.WebhookDelivery{}, fmt.Errorf("reading webhook delivery: %w", err)
	}
	if len(list) == 0 {
		return domain.WebhookDelivery{}, domain.ErrNotFound
	}
	return list[0], nil
}

// LogPage returns up to limit of the principal's log entries with status (empty: any), newest
// first, after cursor (nil: from the newest), and the cursor of the next page (nil: no more).
// It walks the log index (company_id, environment, created_at DESC, id DESC) by key, so a deep
// page costs what the first does.
func (w *Webhooks) LogPage(ctx context.Context, p domain.Principal, status string, after *domain.WebhookLogCursor,
	limit int) ([]domain.WebhookLogEntry, *domain.WebhookLogCursor, error) {
	// Two static queries rather than one with an OR, so that each has a plan bounded by the index.
	query := `SELECT ` + webhookLogColumns + `, created_at FROM webhooks.deliveries
        WHERE company_id = $1 AND environment = $2 AND ($3 = '' OR status = $3)
        ORDER BY created_at DESC, id DESC LIMIT $4`
	args := []any{p.CompanyID.String(), string(p.Environment), status, limit + 1}
	if after != nil {
		u, err := uuid.Parse(after.ID)
		if err != nil {
			return nil, nil, validation.Invalid("after", "is not a position in the log")
		}
		query = `SELECT ` + webhookLogColumns + `, created_at FROM webhooks.deliveries
        WHERE company_id = $1 AND environment = $2 AND ($3 = '' OR status = $3) AND (created_at, id) < ($5, $6)
        ORDER BY created_at DESC, id DESC LIMIT $4`
		args = append(args, after.CreatedAt, pgtype.UUID{Bytes: u, Valid: true})
	}
	rows, err := w.db.Query(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading webhook logs: %w", err)
	}
	var created []time.Time
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.WebhookLogEntry, error) {
		var (
			e  domain.WebhookLogEntry
			ca time.Time
		)
		err := row.Scan(&e.ID, &e.EventID, &e.EventType, &e.Status, &e.Attempts, &e.LastAttemptAt, &e.NextRetryAt,
			&e.ResponseStatus, &e.ResponseBody, &e.ErrorMessage, &e.CreatedAt, &ca)
		created = append(created, ca)
		return e, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading webhook logs: %w", err)
	}
	if len(list) <= limit {
		return list, nil, nil
	}
	list = list[:limit]
	return list, &domain.WebhookLogCursor{CreatedAt: created[limit-1], ID: list[limit-1].ID}, nil
}

// healthWindow is how many of the most recent deliveries the health summary counts: bounded,
// so that it costs the same for a company with a million deliveries.
const healthWindow = 1000

// Health summarises the principal's last healthWindow deliveries: counts per status, and the
// five most recent failing ones.
func (w *Webhooks) Health(ctx context.Context, p domain.Principal) (domain.WebhookHealth, error) {
	h := domain.WebhookHealth{Window: healthWindow}
	rows, err := w.db.Query(ctx, `SELECT status, count(*) FROM (
            SELECT status FROM webhooks.deliveries WHERE company_id = $1 AND environment = $2
            ORDER BY created_at DESC, id DESC LIMIT $3) recent GROUP BY status`,
		p.CompanyID.String(), string(p.Environment), healthWindow)
	if isUndefinedTable(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("reading webhook health: %w", err)
	}
	var (
		status string
		n      int
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		switch status {
		case "SUCCESS":
			h.Success = n
		case "FAILED":
			h.Failed = n
		default:
			h.Pending = n
		}
		return nil
	})
	if err != nil {
		return h, fmt.Errorf("reading webhook health: %w", err)
	}
	if h.Failed > 0 {
		h.Failing, _, err = w.LogPage(ctx, p, "FAILED", nil, 5)
	}
	return h, err
}
