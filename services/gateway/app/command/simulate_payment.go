package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/payplat/platform/services/gateway/domain"
)

// SimulatePayment fires a test-mode payment to one of the caller's merchants that a customer
// pays at once: payment.created, payment.processing and payment.confirmed (test keys only).
type SimulatePayment struct {
	NewPayment
}

// SimulatedExplorerURL prefixes the block explorer URL of simulated payments (Base Sepolia, a
// test network, since simulation exists only in test mode).
const SimulatedExplorerURL = "https://sepolia.basescan.org/tx/"

// SimulatePaymentHandler runs SimulatePayment.
type SimulatePaymentHandler struct {
	creation paymentCreation
}

// NewSimulatePaymentHandler returns a SimulatePaymentHandler creating payments through payments.
func NewSimulatePaymentHandler(payments PaymentWriter) SimulatePaymentHandler {
	return SimulatePaymentHandler{creation: paymentCreation{payments: payments, visible: PaymentVisibleTimeout}}
}

// Permit returns domain.ErrPaymentTestModeOnly unless p calls with a test key. Handle checks it
// first; the HTTP port checks it before reading the body, so that a live key is refused
// whatever it sent.
func (SimulatePaymentHandler) Permit(p domain.Principal) error {
	return testModeOnly(p, domain.ErrPaymentTestModeOnly)
}

// Handle publishes payment.created, payment.processing and payment.confirmed, in that order,
// for a test-mode payment with a random customer wallet and transaction hash, and returns the
// payment once the payments table shows it CONFIRMED with its payment.created applied: the
// projection may apply the three events in any order (concurrent workers), and a row folded from
// processing and confirmed alone has no expires_at yet. The merchant is checked as for
// ProcessPayment.
func (h SimulatePaymentHandler) Handle(ctx context.Context, cmd SimulatePayment) (domain.Payment, error) {
	if err := h.Permit(cmd.Principal); err != nil {
		return domain.Payment{}, err
	}
	done := func(pm *domain.Payment) bool { return pm.Created && pm.Status == domain.PaymentConfirmed }
	return h.creation.create(ctx, cmd.NewPayment, simulatedPaymentEvents, done)
}

// simulatedPaymentEvents are the three events of a simulated payment, paid by a random wallet
// in a random transaction.
func simulatedPaymentEvents(cmd NewPayment, m domain.PaymentMerchant, paymentID string,
	req domain.PaymentRequest) []domain.PaymentEvent {
	now := time.Now().UTC()
	customer, tx := "0x"+randomHex(20), "0x"+randomHex(32)
	processing := paymentEvent(domain.PaymentProcessingEvent, cmd, m, paymentID, req, now)
	processing.CustomerWallet, processing.TxHash, processing.Status = customer, tx, "PROCESSING"
	confirmed := paymentEvent(domain.PaymentConfirmedEvent, cmd, m, paymentID, req, now)
	confirmed.CustomerWallet, confirmed.TxHash, confirmed.Status = customer, tx, domain.PaymentConfirmed
	confirmed.ExplorerURL = SimulatedExplorerURL + tx
	return []domain.PaymentEvent{createdEvent(cmd, m, paymentID, req, now), processing, confirmed}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
