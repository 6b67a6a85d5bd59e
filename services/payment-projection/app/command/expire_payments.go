// Package command holds payment-projection's commands, one use case per file.
package command

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"

	"github.com/payplat/platform/services/payment-projection/app"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// ExpirePaymentsHandler publishes payment.expired for PENDING payments (created, nothing
// since) past their deadline, a batch at a time. Each batch is claimed, published and marked in
// one transaction (app.DuePayments): with several replicas each payment is claimed by one, and
// once its transaction commits nobody claims it again. A crash between the publish and the
// commit, or a failed publish or commit, leaves the batch unmarked; the next claimer publishes
// the same event ids again, which are de-duplicated.
type ExpirePaymentsHandler struct {
	due   app.DuePayments
	pub   app.EventPublisher
	batch int
	now   func() time.Time
}

// NewExpirePaymentsHandler returns a handler claiming up to batch payments per transaction.
func NewExpirePaymentsHandler(due app.DuePayments, pub app.EventPublisher, batch int) ExpirePaymentsHandler {
	if batch <= 0 {
		batch = 100
	}
	return ExpirePaymentsHandler{due: due, pub: pub, batch: batch, now: time.Now}
}

// Batch is how many payments one Handle claims at most.
func (h ExpirePaymentsHandler) Batch() int { return h.batch }

// Handle expires one batch of due payments and returns how many it published.
func (h ExpirePaymentsHandler) Handle(ctx context.Context) (int, error) {
	n, err := h.due.ExpireDue(ctx, h.now(), h.batch, func(ctx context.Context, list []domain.Due) error {
		msgs := make([]proto.Message, len(list))
		for i, d := range list {
			msgs[i] = expiredEvent(d)
		}
		if err := h.pub.PublishEvent(ctx, msgs...); err != nil {
			return fmt.Errorf("publishing payment.expired: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expiring payments: %w", err)
	}
	return n, nil
}

// expiredEventSpace is the UUIDv5 namespace of the event ids of payment.expired.
var expiredEventSpace = uuid.MustParse("3b0c6a52-51f6-4f57-9a43-1d1c1f8a0e77")

// ExpiredEventID is the id of the one payment.expired event of a payment: deterministic, so a
// publish repeated after a crash is the same message (JetStream drops it by Nats-Msg-Id within
// the duplicate window, and every consumer drops it by event id after that).
func ExpiredEventID(k domain.Key) uuid.UUID {
	return uuid.NewSHA1(expiredEventSpace, []byte(k.CompanyID+"\x00"+k.Environment+"\x00"+k.PaymentID))
}

// expiredEvent is the payment.expired event of a due payment. Every field is a function of the
// payment, so a re-publish after a crash carries the same bytes; expired_at is the deadline.
func expiredEvent(d domain.Due) *paymentv1.PaymentExpired {
	return &paymentv1.PaymentExpired{
		Meta: &commonv1.EventMeta{
			EventId:       ExpiredEventID(d.Key).String(),
			OccurredAt:    timestamppb.New(d.ExpiresAt),
			CompanyId:     d.Key.CompanyID,
			Environment:   d.Key.Environment,
			CorrelationId: d.Key.PaymentID,
		},
		PaymentId:  d.Key.PaymentID,
		MerchantId: d.MerchantID,
		Amount:     money.FromMicros(d.AmountMicros).String(),
		Status:     domain.StatusExpired,
		ExpiredAt:  events.FormatTime(d.ExpiresAt),
	}
}
