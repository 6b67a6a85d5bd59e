package command

import (
	"context"
	"time"

	"github.com/payplat/platform/services/gateway/domain"
)

// ProcessPayment asks for a payment to one of the caller's merchants (the SDK's call): the
// payment is PENDING until the customer pays or it expires.
type ProcessPayment struct {
	NewPayment
}

// ProcessPaymentHandler runs ProcessPayment.
type ProcessPaymentHandler struct {
	creation paymentCreation
}

// NewProcessPaymentHandler returns a ProcessPaymentHandler creating payments through payments.
func NewProcessPaymentHandler(payments PaymentWriter) ProcessPaymentHandler {
	return ProcessPaymentHandler{creation: paymentCreation{payments: payments, visible: PaymentVisibleTimeout}}
}

// Handle publishes payment.created for an ACTIVE merchant (domain.ErrNotFound,
// domain.ErrMerchantNotActive otherwise, checked before the amount and expiry) and returns the
// payment once the payments table shows it.
func (h ProcessPaymentHandler) Handle(ctx context.Context, cmd ProcessPayment) (domain.Payment, error) {
	done := func(pm *domain.Payment) bool { return pm.Created }
	return h.creation.create(ctx, cmd.NewPayment, func(cmd NewPayment, m domain.PaymentMerchant, paymentID string,
		req domain.PaymentRequest) []domain.PaymentEvent {
		return []domain.PaymentEvent{createdEvent(cmd, m, paymentID, req, time.Now().UTC())}
	}, done)
}
