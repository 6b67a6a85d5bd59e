package adapters

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/payment-projection/notify"
)

// paymentEventSpace is the UUIDv5 namespace of the event ids of the payments the gateway
// publishes: an event id is a function of the payment id and the event, so a retried request
// (same Idempotency-Key, same payment id) re-publishes the same messages, which JetStream and
// every consumer drop as duplicates.
var paymentEventSpace = uuid.MustParse("0f6f1c4e-2d0b-5b8e-9a57-6c1d2e3f4a5b")

func paymentEventID(p domain.Principal, paymentID, event string) string {
	return uuid.NewSHA1(paymentEventSpace, []byte(p.CompanyID.String()+"\x00"+string(p.Environment)+"\x00"+
		paymentID+"\x00"+event)).String()
}

// Process publishes payment.created for an ACTIVE merchant and returns the payment once the
// payments table shows it. request validates the rest of the request; it runs once the merchant
// is found ACTIVE (SPEC §3.1: every payment call checks the merchant's status first).
func (a *Payments) Process(ctx context.Context, p domain.Principal, requestID, merchantID string,
	request func() (domain.PaymentRequest, error)) (domain.Payment, error) {
	done := func(pm *domain.Payment) bool { return pm.Created }
	return a.publishAndWait(ctx, p, merchantID, request, done,
		func(m domain.PaymentMerchant, id string, req domain.PaymentRequest) []proto.Message {
			now := time.Now().UTC()
			return []proto.Message{&paymentv1.PaymentCreated{Meta: a.meta(p, id, "created", requestID, now), PaymentId: id,
				MerchantId: m.ID, MerchantWallet: m.WalletAddress, Amount: req.Amount, Status: "PENDING",
				ExpiresAt: events.FormatTime(now.Add(req.ExpiresIn)), CreatedAt: events.FormatTime(now)}}
		})
}

// Simulate publishes payment.created, payment.processing and payment.confirmed, in that order,
// for a test-mode payment with a random customer wallet and transaction hash, and returns the
// payment once the payments table shows it CONFIRMED with its payment.created applied: the
// projection may apply the three events in any order (concurrent workers), and a row folded from
// processing and confirmed alone has no expires_at yet. request is as for Process.
func (a *Payments) Simulate(ctx context.Context, p domain.Principal, requestID, merchantID string,
	request func() (domain.PaymentRequest, error)) (domain.Payment, error) {
	done := func(pm *domain.Payment) bool { return pm.Created && pm.Status == domain.PaymentConfirmed }
	return a.publishAndWait(ctx, p, merchantID, request, done,
		func(m domain.PaymentMerchant, id string, req domain.PaymentRequest) []proto.Message {
			now := time.Now().UTC()
			customer, tx := "0x"+randomHex(20), "0x"+randomHex(32)
			return []proto.Message{
				&paymentv1.PaymentCreated{Meta: a.meta(p, id, "created", requestID, now), PaymentId: id,
					MerchantId: m.ID, MerchantWallet: m.WalletAddress, Amount: req.Amount, Status: "PENDING",
					ExpiresAt: events.FormatTime(now.Add(req.ExpiresIn)), CreatedAt: events.FormatTime(now)},
				&paymentv1.PaymentProcessing{Meta: a.meta(p, id, "processing", requestID, now), PaymentId: id,
					MerchantId: m.ID, MerchantWallet: m.WalletAddress, CustomerWallet: customer, Amount: req.Amount,
					TxHash: tx, Status: "PROCESSING"},
				&paymentv1.PaymentConfirmed{Meta: a.meta(p, id, "confirmed", requestID, now), PaymentId: id,
					MerchantId: m.ID, MerchantWallet: m.WalletAddress, CustomerWallet: customer, Amount: req.Amount,
					TxHash: tx, BlockExplorerUrl: SimulatedExplorerURL + tx, Status: "CONFIRMED", ConfirmedAt: events.FormatTime(now)},
			}
		})
}

// SimulatedExplorerURL prefixes the block explorer URL of simulated payments (Base Sepolia, a
// test network, since simulation exists only in test mode).
const SimulatedExplorerURL = "https://sepolia.basescan.org/tx/"

func (a *Payments) meta(p domain.Principal, paymentID, event, requestID string, at time.Time) *commonv1.EventMeta {
	m := &commonv1.EventMeta{EventId: paymentEventID(p, paymentID, event), OccurredAt: timestamppb.New(at),
		CompanyId: p.CompanyID.String(), Environment: string(p.Environment), CorrelationId: paymentID}
	if requestID != "" {
		m.CausationId = requestID
	}
	return m
}

func paymentIDFor(req domain.PaymentRequest) string {
	if req.PaymentID != "" {
		return req.PaymentID
	}
	return uuid.NewString()
}

// publishAndWait admits the payment, publishes the rest of its events and waits until its row
// satisfies done.
//
// The admission (admit) is one short transaction: it locks the merchant's row and requires it
// ACTIVE (lockActiveMerchant), validates the request, subscribes to the projection's
// announcements for the payment (so none is missed) and publishes the payment's first event,
// acknowledged by JetStream, before it commits. The check and that publish are thus atomic with
// respect to status changes: a pause committed before the lock refuses the payment with nothing
// published, and one that comes later waits until JetStream has the payment, so it is ordered
// after it. The events after the first (processing and confirmed of a simulation) are published
// once the transaction has committed: they need no lock, and the row lock and the connection are
// held across one publish only, bounded by the publish timeout (issue 16: up to three publishes
// of up to 5 s each held them, and a slow NATS took every connection of the gateway's pool).
//
// Every event id derives from the payment id, which under an Idempotency-Key derives from the
// key: a retry after any failure publishes the same messages, which JetStream (Nats-Msg-Id)
// and every consumer drop as duplicates, and finds the row on its first read when all is there.
func (a *Payments) publishAndWait(ctx context.Context, p domain.Principal, merchantID string,
	request func() (domain.PaymentRequest, error), done func(*domain.Payment) bool,
	events func(m domain.PaymentMerchant, paymentID string, req domain.PaymentRequest) []proto.Message) (domain.Payment, error) {
	adm, err := a.admit(ctx, p, merchantID, request, events)
	if adm.sub != nil {
		defer func() { _ = adm.sub.Unsubscribe() }()
	}
	if err != nil {
		return domain.Payment{}, err
	}
	for _, ev := range adm.rest {
		if err := a.publish(ctx, ev); err != nil {
			return domain.Payment{}, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	for {
		pm, err := a.get(ctx, p, adm.id)
		if err != nil {
			return domain.Payment{}, err
		}
		if pm != nil && done(pm) {
			pm.MerchantName = adm.merchant.Name
			return *pm, nil
		}
		if _, err := adm.sub.NextMsgWithContext(wctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
				return domain.Payment{}, fmt.Errorf("%w: payment %s published but not yet visible", domain.ErrPaymentsUnavailable, adm.id)
			}
			return domain.Payment{}, err
		}
	}
}

// admission is an admitted payment: its merchant and id, the subscription to its announcements
// (to be unsubscribed), and the events left to publish after the first.
type admission struct {
	merchant domain.PaymentMerchant
	id       string
	sub      *nats.Subscription
	rest     []proto.Message
}

// admit runs the admission transaction of publishAndWait. At most half the pool's connections
// run one at once; a request that finds them all taken waits for one no longer than a publish may take, and is
// answered domain.ErrPaymentsUnavailable (503) past that, holding no connection meanwhile.
func (a *Payments) admit(ctx context.Context, p domain.Principal, merchantID string,
	request func() (domain.PaymentRequest, error),
	events func(m domain.PaymentMerchant, paymentID string, req domain.PaymentRequest) []proto.Message) (admission, error) {
	var adm admission
	release, err := a.acquireAdmission(ctx)
	if err != nil {
		return adm, err
	}
	defer release()
	err = pgx.BeginFunc(ctx, a.db, func(tx pgx.Tx) error {
		var err error
		if adm.merchant, err = lockActiveMerchant(ctx, tx, p, merchantID); err != nil {
			return err
		}
		req, err := request()
		if err != nil {
			return err
		}
		if a.pub == nil {
			return domain.ErrPaymentsUnavailable
		}
		adm.id = paymentIDFor(req)
		evs := events(adm.merchant, adm.id, req)
		// Every event is checked before the first is published: an invalid one publishes nothing.
		for _, ev := range evs {
			if _, _, err := bus.NewEventMessage(ev); err != nil {
				return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
			}
		}
		subject, _ := notify.Subject(string(p.Environment), p.CompanyID.String(), adm.id)
		if adm.sub, err = a.nc.SubscribeSync(subject); err != nil {
			return fmt.Errorf("%w: subscribing: %v", domain.ErrPaymentsUnavailable, err)
		}
		adm.rest = evs[1:]
		return a.publish(ctx, evs[0])
	})
	return adm, err
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

// publish publishes one event, acknowledged by JetStream within the publish timeout.
func (a *Payments) publish(ctx context.Context, ev proto.Message) error {
	pctx, cancel := context.WithTimeout(ctx, a.publishTimeout)
	defer cancel()
	if err := a.pub.PublishEvent(pctx, ev); err != nil {
		return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
