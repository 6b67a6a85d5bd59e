// Package app holds the webhook-dispatcher's delivery engine, the Dispatcher: it creates
// deliveries from bus events, makes their first attempts on per-endpoint lanes, records them in
// batches, recovers stranded ones, prunes the log and shares the partitions (Assigner). It is
// long-running state rather than a use case, so it lives here and not in app/command, whose
// request-reply use cases (endpoint configuration, manual retry, cron run) drive it through the
// interfaces declared in this file.
package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Repository is the persistence the engine and the use cases need (implemented by
// adapters.Repository).
type Repository interface {
	UpdateEndpoint(ctx context.Context, company, env string, update func(*domain.Endpoint, bool) error) (domain.Endpoint, error)
	Deliverable(ctx context.Context, targets []domain.Target) (map[domain.Target]bool, error)
	CreateDeliveries(ctx context.Context, news []domain.NewDelivery, lease time.Duration, adv domain.Advance) ([]domain.Claim, error)
	ClaimDue(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error)
	ClaimStranded(ctx context.Context, limit int, lease time.Duration) ([]domain.Claim, error)
	ClaimOne(ctx context.Context, id uuid.UUID, company, env string, lease time.Duration) (domain.Claim, error)
	Renew(ctx context.Context, c domain.Claim, lease time.Duration) (bool, error)
	Release(ctx context.Context, c domain.Claim) error
	Record(ctx context.Context, c domain.Claim, a domain.Attempted) (domain.Delivery, error)
	RecordAll(ctx context.Context, recs []domain.Recording) (map[uuid.UUID]int, error)
	PruneDelivered(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// Sender POSTs one attempt (implemented by adapters.Sender).
type Sender interface {
	Send(ctx context.Context, url string, headers map[string]string, body []byte) domain.Outcome
}

// Engine is the part of the delivery engine (*Dispatcher) that the manual retry and the cron
// run drive: they claim deliveries themselves, for Lease, and have the engine attempt them
// outside the lanes.
type Engine interface {
	// Lease is how long a claim must hold its delivery for one attempt and its recording.
	Lease() time.Duration
	// AllowManualRetry takes one manual retry from the budget of target's company and
	// environment; over it, it returns a *domain.RateLimitedError.
	AllowManualRetry(target domain.Target) error
	// Attempt sends claim c once and records the outcome; trigger (TriggerCron, TriggerManual)
	// labels the metrics and the log.
	Attempt(ctx context.Context, c domain.Claim, trigger string) (domain.Delivery, error)
}
