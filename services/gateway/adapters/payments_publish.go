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
// payments table shows it.
func (a *Payments) Process(ctx context.Context, p domain.Principal, requestID string, m domain.PaymentMerchant,
	req domain.PaymentRequest) (domain.Payment, error) {
	id := paymentIDFor(req)
	now := time.Now().UTC()
	created := &paymentv1.PaymentCreated{Meta: a.meta(p, id, "created", requestID, now), PaymentId: id,
		MerchantId: m.ID, MerchantWallet: m.WalletAddress, Amount: req.Amount, Status: "PENDING",
		ExpiresAt: rfc3339(now.Add(req.ExpiresIn)), CreatedAt: rfc3339(now)}
	return a.publishAndWait(ctx, p, m, id, func(*domain.Payment) bool { return true }, created)
}

// Simulate publishes payment.created, payment.processing and payment.confirmed, in that order,
// for a test-mode payment with a random customer wallet and transaction hash, and returns the
// payment once the payments table shows it CONFIRMED.
func (a *Payments) Simulate(ctx context.Context, p domain.Principal, requestID string, m domain.PaymentMerchant,
	req domain.PaymentRequest) (domain.Payment, error) {
	id := paymentIDFor(req)
	now := time.Now().UTC()
	customer, tx := "0x"+randomHex(20), "0x"+randomHex(32)
	created := &paymentv1.PaymentCreated{Meta: a.meta(p, id, "created", requestID, now), PaymentId: id,
		MerchantId: m.ID, MerchantWallet: m.WalletAddress, Amount: req.Amount, Status: "PENDING",
		ExpiresAt: rfc3339(now.Add(req.ExpiresIn)), CreatedAt: rfc3339(now)}
	processing := &paymentv1.PaymentProcessing{Meta: a.meta(p, id, "processing", requestID, now), PaymentId: id,
		MerchantId: m.ID, MerchantWallet: m.WalletAddress, CustomerWallet: customer, Amount: req.Amount, TxHash: tx,
		Status: "PROCESSING"}
	confirmed := &paymentv1.PaymentConfirmed{Meta: a.meta(p, id, "confirmed", requestID, now), PaymentId: id,
		MerchantId: m.ID, MerchantWallet: m.WalletAddress, CustomerWallet: customer, Amount: req.Amount, TxHash: tx,
		BlockExplorerUrl: SimulatedExplorerURL + tx, Status: "CONFIRMED", ConfirmedAt: rfc3339(now)}
	done := func(pm *domain.Payment) bool { return pm.Status == domain.PaymentConfirmed }
	return a.publishAndWait(ctx, p, m, id, done, created, processing, confirmed)
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

// publishAndWait publishes msgs in order (each acknowledged by JetStream before the next) and
// waits until the payment's row satisfies done. It subscribes to the projection's
// announcements for the payment before publishing, so none is missed; a repeated request whose
// events are dropped as duplicates finds the row on its first read.
func (a *Payments) publishAndWait(ctx context.Context, p domain.Principal, m domain.PaymentMerchant, id string,
	done func(*domain.Payment) bool, msgs ...proto.Message) (domain.Payment, error) {
	if a.pub == nil {
		return domain.Payment{}, domain.ErrPaymentsUnavailable
	}
	subject, _ := notify.Subject(string(p.Environment), p.CompanyID.String(), id)
	sub, err := a.nc.SubscribeSync(subject)
	if err != nil {
		return domain.Payment{}, fmt.Errorf("%w: subscribing: %v", domain.ErrPaymentsUnavailable, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := a.publishAdmitted(ctx, p, m, msgs...); err != nil {
		return domain.Payment{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	for {
		pm, err := a.get(ctx, p, id)
		if err != nil {
			return domain.Payment{}, err
		}
		if pm != nil && done(pm) {
			pm.MerchantName = m.Name
			return *pm, nil
		}
		if _, err := sub.NextMsgWithContext(wctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
				return domain.Payment{}, fmt.Errorf("%w: payment %s published but not yet visible", domain.ErrPaymentsUnavailable, id)
			}
			return domain.Payment{}, err
		}
	}
}

// publishAdmitted publishes msgs while it holds a share lock on the merchant's row in the
// merchant service's read table, after checking that the merchant is still ACTIVE. The merchant
// service changes a status by updating that row in the transaction that appends the change, so
// the check and the publish are atomic with respect to status changes: a pause that commits
// before the lock is taken is seen here (403, nothing published), and one that comes later waits
// until JetStream has acknowledged the payment, so it is ordered after it. Without the lock a
// pause could commit between ActiveMerchant's read and the publish, and a PAUSED merchant would
// get a new payment.
func (a *Payments) publishAdmitted(ctx context.Context, p domain.Principal, m domain.PaymentMerchant, msgs ...proto.Message) error {
	return pgx.BeginFunc(ctx, a.db, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM merchant.merchants
            WHERE id = $1 AND company_id = $2 AND environment = $3 FOR SHARE`,
			m.ID, p.CompanyID.String(), string(p.Environment)).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return domain.ErrNotFound
		case err != nil:
			return fmt.Errorf("locking merchant: %w", err)
		case status != "ACTIVE":
			return domain.ErrMerchantNotActive
		}
		if err := a.pub.PublishEvent(ctx, msgs...); err != nil {
			return fmt.Errorf("%w: %v", domain.ErrPaymentsUnavailable, err)
		}
		return nil
	})
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
