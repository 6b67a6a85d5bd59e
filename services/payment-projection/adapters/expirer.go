package adapters

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// EventPublisher publishes events to JetStream, each with Nats-Msg-Id = its event id, and
// returns once the stream has stored them (bus.Publisher).
type EventPublisher interface {
	PublishEvent(ctx context.Context, msgs ...proto.Message) error
}

// expiredEventSpace is the UUIDv5 namespace of the event ids of payment.expired.
var expiredEventSpace = uuid.MustParse("3b0c6a52-51f6-4f57-9a43-1d1c1f8a0e77")

// ExpiredEventID is the id of the one payment.expired event of a payment: deterministic, so a
// publish repeated after a crash is the same message (JetStream drops it by Nats-Msg-Id within
// the duplicate window, and every consumer drops it by event id after that).
func ExpiredEventID(k domain.Key) uuid.UUID {
	return uuid.NewSHA1(expiredEventSpace, []byte(k.CompanyID+"\x00"+k.Environment+"\x00"+k.PaymentID))
}

// Expirer publishes payment.expired for PENDING payments (created, nothing since) past
// expires_at. Each run claims due payments with FOR UPDATE SKIP LOCKED, publishes their events,
// and marks them (expiry_published_at) in the same transaction: with several replicas each
// payment is claimed by one, and once its transaction commits nobody claims it again. A crash
// between the publish and the commit leaves the payment unmarked; the next claimer publishes
// the same event id again, which is de-duplicated.
type Expirer struct {
	db    *pgxpool.Pool
	pub   EventPublisher
	batch int
	now   func() time.Time
}

// NewExpirer returns an expirer claiming up to batch payments per transaction.
func NewExpirer(db *pgxpool.Pool, pub EventPublisher, batch int) *Expirer {
	if batch <= 0 {
		batch = 100
	}
	return &Expirer{db: db, pub: pub, batch: batch, now: time.Now}
}

type due struct {
	key       domain.Key
	merchant  string
	amount    int64
	expiresAt time.Time
}

// RunOnce expires one batch of due payments and returns how many it published.
func (x *Expirer) RunOnce(ctx context.Context) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, x.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT company_id, environment, payment_id, merchant_id, amount_micros, expires_at
            FROM payments
            WHERE status = 'CREATED' AND has_created AND expiry_published_at IS NULL AND expires_at <= $1
            ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, x.now(), x.batch)
		if err != nil {
			return err
		}
		var d due
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
			err := r.Scan(&d.key.CompanyID, &d.key.Environment, &d.key.PaymentID, &d.merchant, &d.amount, &d.expiresAt)
			return d, err
		})
		if err != nil || len(list) == 0 {
			return err
		}
		msgs := make([]proto.Message, len(list))
		for i, d := range list {
			msgs[i] = expiredEvent(d)
		}
		if err := x.pub.PublishEvent(ctx, msgs...); err != nil {
			return fmt.Errorf("publishing payment.expired: %w", err)
		}
		c, e, id := make([]string, len(list)), make([]string, len(list)), make([]string, len(list))
		for i, d := range list {
			c[i], e[i], id[i] = d.key.CompanyID, d.key.Environment, d.key.PaymentID
		}
		_, err = tx.Exec(ctx, `UPDATE payments p SET expiry_published_at = p.expires_at
            FROM unnest($1::text[], $2::text[], $3::text[]) AS t(c, e, id)
            WHERE p.tenant_id = `+tenantOfTC+` AND p.company_id = t.c AND p.environment = t.e AND p.payment_id = t.id`,
			c, e, id)
		n = len(list)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expiring payments: %w", err)
	}
	return n, nil
}

// Run expires due payments every interval until ctx ends; a failed run is retried at the next
// tick (nothing was marked, so nothing is lost).
func (x *Expirer) Run(ctx context.Context, interval time.Duration, onError func(error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for {
			n, err := x.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				onError(err)
			}
			if err != nil || n < x.batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// expiredEvent is the payment.expired event of a due payment. Every field is a function of the
// payment, so a re-publish after a crash carries the same bytes; expired_at is the deadline.
func expiredEvent(d due) *paymentv1.PaymentExpired {
	return &paymentv1.PaymentExpired{
		Meta: &commonv1.EventMeta{
			EventId:       ExpiredEventID(d.key).String(),
			OccurredAt:    timestamppb.New(d.expiresAt),
			CompanyId:     d.key.CompanyID,
			Environment:   d.key.Environment,
			CorrelationId: d.key.PaymentID,
		},
		PaymentId:  d.key.PaymentID,
		MerchantId: d.merchant,
		Amount:     money.FromMicros(d.amount).String(),
		Status:     domain.StatusExpired,
		ExpiredAt:  events.FormatTime(d.expiresAt),
	}
}
