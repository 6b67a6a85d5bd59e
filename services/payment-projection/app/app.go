// Package app holds payment-projection's use cases, one per file in app/command, driven by the
// ports (the expiry ticker; the projection of payment events is pkg/projection's runner driving
// ports.Projector). The transaction is the repository's: a use case makes one repository call,
// which runs in a transaction of its own.
package app

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// DuePayments claims the payments whose expiry is due.
type DuePayments interface {
	// ExpireDue claims, in one transaction, up to limit PENDING payments (created, nothing
	// since) past their deadline at now that no other replica holds (FOR UPDATE SKIP LOCKED),
	// and calls expire with them. When expire succeeds the claims are marked expired
	// (expiry_published_at) and committed, and nobody claims them again; otherwise the
	// transaction rolls back and the next claimer takes them. It returns how many it claimed.
	ExpireDue(ctx context.Context, now time.Time, limit int, expire func(context.Context, []domain.Due) error) (int, error)
}

// EventPublisher publishes events to JetStream, each with Nats-Msg-Id = its event id, and
// returns once the stream has stored them (bus.Publisher).
type EventPublisher interface {
	PublishEvent(ctx context.Context, msgs ...proto.Message) error
}
