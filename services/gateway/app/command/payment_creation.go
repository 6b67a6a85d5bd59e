package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// What ProcessPayment and SimulatePayment share: the admission of a payment, the publishing of
// its events and the wait until the payments projection shows it.

// NewPayment is a payment the caller asks for, its amount and expiry not validated yet (they are
// checked once the merchant is found ACTIVE).
type NewPayment struct {
	Principal domain.Principal
	// RequestID is recorded as the events' causation id.
	RequestID  string
	MerchantID string
	// Amount is a USDC amount as the caller wrote it ("12.50").
	Amount *string
	// ExpiresInSeconds is how long the payment may stay unpaid; nil for the default.
	ExpiresInSeconds *int64
	// Route is the route asked, Caller who calls (the Idempotency-Key scope), IdempotencyKey the
	// request's key or empty: with a key they derive the payment id.
	Route          string
	Caller         string
	IdempotencyKey string
}

// PaymentWriter is what creating a payment needs: the admission's transaction, the bus, and the
// payments read table with the projection's announcements.
type PaymentWriter interface {
	// Admit reads the principal's merchant merchantID under a share lock, runs admit with it
	// (whatever its status) and commits once admit returns nil: a status change committed before
	// the lock is seen, one committed after it waits until the admission ends. It returns admit's
	// error as it is, domain.ErrNotFound for a merchant unknown to p, and wraps
	// domain.ErrPaymentsUnavailable when too many admissions are waiting for the bus.
	Admit(ctx context.Context, p domain.Principal, merchantID string, admit func(domain.PaymentMerchant) error) error
	// Publishable returns an error wrapping domain.ErrPaymentsUnavailable when ev cannot be
	// published: there is no bus, or the event is not one the bus carries.
	Publishable(ev domain.PaymentEvent) error
	// Publish publishes ev, acknowledged by the stream within the publish timeout (an error
	// wrapping domain.ErrPaymentsUnavailable past it).
	Publish(ctx context.Context, ev domain.PaymentEvent) error
	// Watch subscribes to the payments projection's announcements of the principal's payment.
	Watch(p domain.Principal, paymentID string) (PaymentAnnouncements, error)
	// Find reads the principal's payment from the payments read table; nil while it is not there.
	Find(ctx context.Context, p domain.Principal, paymentID string) (*domain.Payment, error)
}

// PaymentAnnouncements are the payments projection's announcements that it applied events of
// one payment.
type PaymentAnnouncements interface {
	// Next waits for the next announcement; context.DeadlineExceeded when ctx's deadline passes
	// first.
	Next(ctx context.Context) error
	// Stop unsubscribes.
	Stop()
}

// PaymentVisibleTimeout bounds how long a payment request waits for the payments projection
// to show what it published (read-your-writes).
const PaymentVisibleTimeout = 10 * time.Second

// paymentIDSpace is the UUIDv5 namespace of payment ids derived from Idempotency-Keys.
var paymentIDSpace = uuid.MustParse("b7e4a0d2-6c1f-5e3a-8d9b-2f4c6a8e0b1d")

// paymentEventSpace is the UUIDv5 namespace of the event ids of the payments the gateway
// publishes: an event id is a function of the payment id and the event, so a retried request
// (same Idempotency-Key, same payment id) re-publishes the same messages, which JetStream and
// every consumer drop as duplicates.
var paymentEventSpace = uuid.MustParse("0f6f1c4e-2d0b-5b8e-9a57-6c1d2e3f4a5b")

func paymentEventID(p domain.Principal, paymentID string, kind domain.PaymentEventKind) string {
	return uuid.NewSHA1(paymentEventSpace, []byte(p.CompanyID.String()+"\x00"+string(p.Environment)+"\x00"+
		paymentID+"\x00"+string(kind))).String()
}

// paymentID is the id of a new payment: under an Idempotency-Key it derives from the caller, the
// route and the key, so that a retry after a 5xx (which the idempotency layer does not store) is
// the same payment, and the route keeps apart the payments of two routes' equal keys.
func paymentID(cmd NewPayment) string {
	if cmd.IdempotencyKey == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(paymentIDSpace, []byte(cmd.Caller+"\x00"+cmd.Route+"\x00"+cmd.IdempotencyKey)).String()
}

// paymentEvents returns the events of a payment, the first (payment.created) published in its
// admission and the others after it.
type paymentEvents func(cmd NewPayment, m domain.PaymentMerchant, paymentID string,
	req domain.PaymentRequest) []domain.PaymentEvent

// paymentCreation creates payments: it admits them, publishes their events and waits until the
// read table shows them.
type paymentCreation struct {
	payments PaymentWriter
	// visible bounds the wait for the read table (PaymentVisibleTimeout).
	visible time.Duration
}

// create admits the payment, publishes the rest of its events and waits until its row
// satisfies done.
//
// The admission (admit) is one short transaction: it locks the merchant's row and requires it
// ACTIVE, validates the request, subscribes to the projection's announcements for the payment
// (so none is missed) and publishes the payment's first event, acknowledged by JetStream, before
// it commits. The check and that publish are thus atomic with respect to status changes: a pause
// committed before the lock refuses the payment with nothing published, and one that comes later
// waits until JetStream has the payment, so it is ordered after it. The events after the first
// (processing and confirmed of a simulation) are published once the transaction has committed:
// they need no lock, and the row lock and the connection are held across one publish only,
// bounded by the publish timeout (issue 16: up to three publishes of up to 5 s each held them,
// and a slow NATS took every connection of the gateway's pool).
//
// Every event id derives from the payment id, which under an Idempotency-Key derives from the
// key: a retry after any failure publishes the same messages, which JetStream (Nats-Msg-Id)
// and every consumer drop as duplicates, and finds the row on its first read when all is there.
func (c paymentCreation) create(ctx context.Context, cmd NewPayment, events paymentEvents,
	done func(*domain.Payment) bool) (domain.Payment, error) {
	if cmd.MerchantID == "" {
		return domain.Payment{}, validation.Invalid("merchant_id", "is required")
	}
	adm, err := c.admit(ctx, cmd, events)
	if adm.announcements != nil {
		defer adm.announcements.Stop()
	}
	if err != nil {
		return domain.Payment{}, err
	}
	for _, ev := range adm.rest {
		if err := c.payments.Publish(ctx, ev); err != nil {
			return domain.Payment{}, err
		}
	}
	return c.await(ctx, cmd.Principal, adm, done)
}

// admission is an admitted payment: its merchant and id, the announcements of it (to be
// stopped), and the events left to publish after the first.
type admission struct {
	merchant      domain.PaymentMerchant
	id            string
	announcements PaymentAnnouncements
	rest          []domain.PaymentEvent
}

// admit runs the admission of create: SPEC §3.1, every payment call checks the merchant's status
// first, then the amount and expiry.
func (c paymentCreation) admit(ctx context.Context, cmd NewPayment, events paymentEvents) (admission, error) {
	var adm admission
	err := c.payments.Admit(ctx, cmd.Principal, cmd.MerchantID, func(m domain.PaymentMerchant) error {
		adm.merchant = m
		if err := m.Payable(); err != nil {
			return err
		}
		req, err := domain.NewPaymentRequest(cmd.MerchantID, cmd.Amount, cmd.ExpiresInSeconds)
		if err != nil {
			return err
		}
		if err := m.Within(req); err != nil {
			return err
		}
		adm.id = paymentID(cmd)
		evs := events(cmd, m, adm.id, req)
		// Every event is checked before the first is published: an invalid one publishes nothing.
		for _, ev := range evs {
			if err := c.payments.Publishable(ev); err != nil {
				return err
			}
		}
		if adm.announcements, err = c.payments.Watch(cmd.Principal, adm.id); err != nil {
			return err
		}
		adm.rest = evs[1:]
		return c.payments.Publish(ctx, evs[0])
	})
	return adm, err
}

// await re-reads the payment on each of the projection's announcements until its row satisfies
// done, which ends the wait as soon as the row is there, without polling; past the visibility
// bound it answers domain.ErrPaymentsUnavailable (a retry with the same Idempotency-Key
// publishes nothing new and waits again).
func (c paymentCreation) await(ctx context.Context, p domain.Principal, adm admission,
	done func(*domain.Payment) bool) (domain.Payment, error) {
	wctx, cancel := context.WithTimeout(ctx, c.visible)
	defer cancel()
	for {
		pm, err := c.payments.Find(ctx, p, adm.id)
		if err != nil {
			return domain.Payment{}, err
		}
		if pm != nil && done(pm) {
			pm.MerchantName = adm.merchant.Name
			return *pm, nil
		}
		if err := adm.announcements.Next(wctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return domain.Payment{}, fmt.Errorf("%w: payment %s published but not yet visible",
					domain.ErrPaymentsUnavailable, adm.id)
			}
			return domain.Payment{}, err
		}
	}
}

// paymentEvent is the event kind of payment paymentID, with the fields every event has.
func paymentEvent(kind domain.PaymentEventKind, cmd NewPayment, m domain.PaymentMerchant, paymentID string,
	req domain.PaymentRequest, at time.Time) domain.PaymentEvent {
	return domain.PaymentEvent{Kind: kind, ID: paymentEventID(cmd.Principal, paymentID, kind),
		CompanyID: cmd.Principal.CompanyID, Environment: cmd.Principal.Environment, CausationID: cmd.RequestID,
		At: at, PaymentID: paymentID, MerchantID: m.ID, MerchantWallet: m.WalletAddress, Amount: req.Amount}
}

// createdEvent is the payment.created of a payment, PENDING until it expires.
func createdEvent(cmd NewPayment, m domain.PaymentMerchant, paymentID string, req domain.PaymentRequest,
	at time.Time) domain.PaymentEvent {
	ev := paymentEvent(domain.PaymentCreatedEvent, cmd, m, paymentID, req, at)
	ev.Status = domain.PaymentPending
	ev.ExpiresAt = at.Add(req.ExpiresIn)
	return ev
}
