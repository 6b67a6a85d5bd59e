// Package query holds the merchant service's queries.
package query

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// MerchantStatus asks for a merchant's current status (payments check that it is ACTIVE).
type MerchantStatus struct {
	MerchantID uuid.UUID
	Scope      app.Scope
}

// MerchantStatusHandler answers MerchantStatus from the merchant's current state.
type MerchantStatusHandler struct {
	repo app.Repository
}

// NewMerchantStatusHandler returns a handler that reads merchants from repo.
func NewMerchantStatusHandler(repo app.Repository) MerchantStatusHandler {
	return MerchantStatusHandler{repo: repo}
}

// Handle returns the merchant, domain.ErrNotFound when it is not in scope.
func (h MerchantStatusHandler) Handle(ctx context.Context, q MerchantStatus) (*domain.Merchant, error) {
	return h.repo.Get(ctx, q.MerchantID, q.Scope)
}
