package query

import (
	"context"

	"github.com/payplat/platform/services/gateway/domain"
)

// ListPayments asks for a page of the caller's payments.
type ListPayments struct {
	Principal domain.Principal
	Filter    domain.PaymentFilter
}

// PaymentLister reads a page of the principal's payments, newest first, with their merchants'
// names, and whether more follow.
type PaymentLister interface {
	List(ctx context.Context, p domain.Principal, f domain.PaymentFilter) ([]domain.Payment, bool, error)
}

// ListPaymentsHandler lists a company's payments.
type ListPaymentsHandler struct {
	payments PaymentLister
}

// NewListPaymentsHandler returns a ListPaymentsHandler reading through payments.
func NewListPaymentsHandler(payments PaymentLister) ListPaymentsHandler {
	return ListPaymentsHandler{payments: payments}
}

// Handle returns the page the filter selects and whether more payments follow it.
func (h ListPaymentsHandler) Handle(ctx context.Context, q ListPayments) ([]domain.Payment, bool, error) {
	return h.payments.List(ctx, q.Principal, q.Filter)
}
