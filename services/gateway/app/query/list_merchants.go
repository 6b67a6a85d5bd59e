package query

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// ListMerchants asks for the caller's merchants in its key's environment.
type ListMerchants struct {
	Principal domain.Principal
}

// MerchantLister reads a company's merchants in env, newest first, with their balances.
type MerchantLister interface {
	List(ctx context.Context, companyID uuid.UUID, env domain.Environment) ([]domain.MerchantSummary, error)
}

// ListMerchantsHandler lists a company's merchants.
type ListMerchantsHandler struct {
	merchants MerchantLister
}

// NewListMerchantsHandler returns a ListMerchantsHandler reading through merchants.
func NewListMerchantsHandler(merchants MerchantLister) ListMerchantsHandler {
	return ListMerchantsHandler{merchants: merchants}
}

// Handle returns the caller's merchants, newest first.
func (h ListMerchantsHandler) Handle(ctx context.Context, q ListMerchants) ([]domain.MerchantSummary, error) {
	return h.merchants.List(ctx, q.Principal.CompanyID, q.Principal.Environment)
}
