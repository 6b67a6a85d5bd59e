package command

import (
	"context"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// SetMerchantStatus changes the status of one of the caller's merchants, as its company may:
// ACTIVE or PAUSED, never out of a platform status (FROZEN, BLACKLISTED, SUSPENDED).
type SetMerchantStatus struct {
	Principal domain.Principal
	// RequestID is recorded by the merchant service as the command's correlation id.
	RequestID  string
	MerchantID string
	// Status is the new status; empty is refused.
	Status string
	Reason string
}

// MerchantStatusSetter asks the merchant service to change a merchant's status: for the company
// of p (domain.ErrMerchantStatusLocked from a platform status), or for the platform when p is nil.
type MerchantStatusSetter interface {
	SetStatus(ctx context.Context, p *domain.Principal, requestID, merchantID, status,
		reason string) (domain.MerchantStatusResult, error)
}

// SetMerchantStatusHandler runs SetMerchantStatus.
type SetMerchantStatusHandler struct {
	merchants MerchantStatusSetter
}

// NewSetMerchantStatusHandler returns a SetMerchantStatusHandler changing through merchants.
func NewSetMerchantStatusHandler(merchants MerchantStatusSetter) SetMerchantStatusHandler {
	return SetMerchantStatusHandler{merchants: merchants}
}

// Handle requires a status, then has the merchant service apply the company's rules to it.
func (h SetMerchantStatusHandler) Handle(ctx context.Context, cmd SetMerchantStatus) (domain.MerchantStatusResult, error) {
	p := cmd.Principal
	return setStatus(ctx, h.merchants, &p, cmd.RequestID, cmd.MerchantID, cmd.Status, cmd.Reason)
}

// setStatus is the step the company's and the platform's changes share: a status is required
// whoever sets it, then the merchant service applies the rules of p (nil: the platform's).
func setStatus(ctx context.Context, merchants MerchantStatusSetter, p *domain.Principal, requestID, merchantID,
	status, reason string) (domain.MerchantStatusResult, error) {
	if status == "" {
		return domain.MerchantStatusResult{}, validation.Invalid("status", "is required")
	}
	return merchants.SetStatus(ctx, p, requestID, merchantID, status, reason)
}
