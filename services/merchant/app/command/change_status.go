package command

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain"
)

// ChangeStatus sets a merchant's status on behalf of Actor: the owning company (Scope is its
// company and environment) or the platform (Scope.All).
type ChangeStatus struct {
	MerchantID uuid.UUID
	Scope      app.Scope
	Actor      domain.Actor
	Status     string
	Reason     string
}

// ChangeStatusHandler handles ChangeStatus.
type ChangeStatusHandler struct {
	repo app.Repository
	now  func() time.Time
}

// NewChangeStatusHandler returns a handler that loads and saves merchants through repo.
func NewChangeStatusHandler(repo app.Repository) ChangeStatusHandler {
	return ChangeStatusHandler{repo: repo, now: time.Now}
}

// Handle applies the status machine of SPEC §3.1 and returns the merchant after the change
// (unchanged, with no event, when it already had the status).
func (h ChangeStatusHandler) Handle(ctx context.Context, cmd ChangeStatus) (*domain.Merchant, error) {
	to, err := domain.ParseStatus(cmd.Status)
	if err != nil {
		return nil, err
	}
	if cmd.Actor == domain.ActorCompany && !to.CompanySettable() {
		return nil, validation.Invalid("status", "must be ACTIVE or PAUSED")
	}
	return h.repo.Update(ctx, cmd.MerchantID, cmd.Scope, func(m *domain.Merchant) ([]domain.Event, error) {
		ev, err := m.ChangeStatus(cmd.Actor, to, cmd.Reason, h.now().Truncate(time.Microsecond))
		if err != nil || ev == nil {
			return nil, err
		}
		return []domain.Event{*ev}, nil
	})
}
