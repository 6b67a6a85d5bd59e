package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/gateway/app/command"
	"github.com/payplat/platform/services/gateway/domain"
	projectionapi "github.com/payplat/platform/services/payment-projection/api"
)

// The mechanics of a payment's creation (command.PaymentWriter): the admission transaction, the
// JetStream publishes and the subscription to the projection's announcements. The use cases
// (app/command: ProcessPayment, SimulatePayment) decide what is published, in which order, and
// how long to wait.

// Admit runs admit in one short transaction that holds the merchant's row under a share lock
// (lockMerchant). At most half the pool's connections run one at once; a request that finds them
// all taken waits for one no longer than a publish may take, and is answered
// domain.ErrPaymentsUnavailable (503) past that, holding no connection meanwhile.
func (a *Payments) Admit(ctx context.Context, p domain.Principal, merchantID string,
	admit func(domain.PaymentMerchant) error) error {
	release, err := a.acquireAdmission(ctx)
	if err != nil {
		return err
	}
	defer release()
	return pgx.BeginFunc(ctx, a.db, func(tx pgx.Tx) error {
		m, err := lockMerchant(ctx, tx, p, merchantID)
		if err != nil {
			return err
		}
		return admit(m)
	})
}

// acquireAdmission takes an admission slot, waiting at most the publish timeout for one.
func (a *Payments) acquireAdmission(ctx context.Context) (func(), error) {
	wait, cancel := context.WithTimeout(ctx, a.publishTimeout)
	defer cancel()
	select {
	case a.admissions <- struct{}{}:
		return func() { <-a.admissions }, nil
	case <-wait.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: every payment admission is waiting for the bus", domain.ErrPaymentsUnavailable)
	}
}

// Publishable reports domain.ErrPaymentsUnavailable for a gateway without NATS, and for an event
// the bus would refuse (one that does not encode or validate).
func (a *Payments) Publishable(ev domain.PaymentEvent) error {
	if a.pub == nil {
		return domain.ErrPaymentsUnavailable
	}
	msg, err := paymentMessage(ev)
	if err == nil {
		_, _, err = bus.NewEventMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
	}
	return nil
}

// Publish publishes one event, acknowledged by JetStream within the publish timeout.
func (a *Payments) Publish(ctx context.Context, ev domain.PaymentEvent) error {
	if a.pub == nil {
		return domain.ErrPaymentsUnavailable
	}
	msg, err := paymentMessage(ev)
	if err != nil {
		return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
	}
	pctx, cancel := context.WithTimeout(ctx, a.publishTimeout)
	defer cancel()
	if err := a.pub.PublishEvent(pctx, msg); err != nil {
		return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
	}
	return nil
}

// Watch subscribes to the payment-projection's core NATS announcement for the payment
// (projectionapi.AppliedSubject), which it publishes after each batch that applied events of it.
func (a *Payments) Watch(p domain.Principal, paymentID string) (command.PaymentAnnouncements, error) {
	if a.nc == nil {
		return nil, domain.ErrPaymentsUnavailable
	}
	subject, _ := projectionapi.AppliedSubject(string(p.Environment), p.CompanyID.String(), paymentID)
	sub, err := a.nc.SubscribeSync(subject)
	if err != nil {
		return nil, fmt.Errorf("%w: subscribing: %v", domain.ErrPaymentsUnavailable, err)
	}
	return announcements{sub: sub}, nil
}

// announcements are the announcements of one payment, on a synchronous subscription.
type announcements struct {
	sub *nats.Subscription
}

// Next waits for the next announcement; a timeout of the subscription is
// context.DeadlineExceeded, like ctx's.
func (s announcements) Next(ctx context.Context) error {
	_, err := s.sub.NextMsgWithContext(ctx)
	if errors.Is(err, nats.ErrTimeout) {
		return context.DeadlineExceeded
	}
	return err
}

// Stop unsubscribes.
func (s announcements) Stop() { _ = s.sub.Unsubscribe() }

// paymentMessage encodes ev as its protobuf event; the payment id is the correlation id of
// every event of the payment.
func paymentMessage(ev domain.PaymentEvent) (proto.Message, error) {
	meta := &commonv1.EventMeta{EventId: ev.ID, OccurredAt: timestamppb.New(ev.At), CompanyId: ev.CompanyID.String(),
		Environment: string(ev.Environment), CorrelationId: ev.PaymentID}
	if ev.CausationID != "" {
		meta.CausationId = ev.CausationID
	}
	switch ev.Kind {
	case domain.PaymentCreatedEvent:
		return &paymentv1.PaymentCreated{Meta: meta, PaymentId: ev.PaymentID, MerchantId: ev.MerchantID,
			MerchantWallet: ev.MerchantWallet, Amount: ev.Amount, Status: ev.Status,
			ExpiresAt: events.FormatTime(ev.ExpiresAt), CreatedAt: events.FormatTime(ev.At)}, nil
	case domain.PaymentProcessingEvent:
		return &paymentv1.PaymentProcessing{Meta: meta, PaymentId: ev.PaymentID, MerchantId: ev.MerchantID,
			MerchantWallet: ev.MerchantWallet, CustomerWallet: ev.CustomerWallet, Amount: ev.Amount, TxHash: ev.TxHash,
			Status: ev.Status}, nil
	case domain.PaymentConfirmedEvent:
		return &paymentv1.PaymentConfirmed{Meta: meta, PaymentId: ev.PaymentID, MerchantId: ev.MerchantID,
			MerchantWallet: ev.MerchantWallet, CustomerWallet: ev.CustomerWallet, Amount: ev.Amount, TxHash: ev.TxHash,
			BlockExplorerUrl: ev.ExplorerURL, Status: ev.Status, ConfirmedAt: events.FormatTime(ev.At)}, nil
	default:
		return nil, fmt.Errorf("payment event %q: unknown kind", ev.Kind)
	}
}
