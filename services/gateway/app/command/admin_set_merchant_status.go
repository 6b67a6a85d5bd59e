package command

import (
	"context"

	"github.com/payplat/platform/services/gateway/domain"
)

// AdminSetMerchantStatus changes the status of any merchant as the platform may: to any status,
// with the reason shown to its company.
type AdminSetMerchantStatus struct {
	// RequestID is recorded by the merchant service as the command's correlation id.
	RequestID  string
	MerchantID string
	// Status is the new status; empty is refused.
	Status string
	Reason string
}

// AdminSetMerchantStatusHandler runs AdminSetMerchantStatus.
type AdminSetMerchantStatusHandler struct {
	merchants MerchantStatusSetter
}

// NewAdminSetMerchantStatusHandler returns an AdminSetMerchantStatusHandler changing through
// merchants.
func NewAdminSetMerchantStatusHandler(merchants MerchantStatusSetter) AdminSetMerchantStatusHandler {
	return AdminSetMerchantStatusHandler{merchants: merchants}
}

// Handle requires a status, then has the merchant service apply it for the platform.
func (h AdminSetMerchantStatusHandler) Handle(ctx context.Context, cmd AdminSetMerchantStatus) (domain.MerchantStatusResult, error) {
	return setStatus(ctx, h.merchants, nil, cmd.RequestID, cmd.MerchantID, cmd.Status, cmd.Reason)
}
