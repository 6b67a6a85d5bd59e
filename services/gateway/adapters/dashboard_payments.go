package adapters

import (
	"context"
	"fmt"

	"github.com/payplat/platform/services/gateway/domain"
)

// Get returns one of the principal's payments with its merchant's name (the dashboard's payment
// detail); domain.ErrNotFound for an unknown id or another tenant's.
func (a *Payments) Get(ctx context.Context, p domain.Principal, paymentID string) (domain.Payment, error) {
	pm, err := a.Find(ctx, p, paymentID)
	if err != nil {
		return domain.Payment{}, fmt.Errorf("reading payment: %w", err)
	}
	if pm == nil {
		return domain.Payment{}, domain.ErrNotFound
	}
	list := []domain.Payment{*pm}
	if err := a.nameMerchants(ctx, p, list); err != nil {
		return domain.Payment{}, err
	}
	return list[0], nil
}
