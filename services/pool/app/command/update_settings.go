package command

import (
	"context"
	"time"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/app"
	"github.com/payplat/platform/services/pool/domain"
)

// UpdateSettings changes the settings of the pool of a company and environment; a field left
// nil keeps its value.
type UpdateSettings struct {
	CompanyID   string
	Environment string
	// LowThreshold is a non-negative USDC amount, as the request spells it ("100.00").
	LowThreshold     *string
	AutoTopUpEnabled *bool
	// RequestID is the caller's request id, recorded as the correlation id of the event.
	RequestID string
}

// UpdateSettingsHandler handles UpdateSettings.
type UpdateSettingsHandler struct {
	repo app.Repository
	now  func() time.Time
}

// NewUpdateSettingsHandler returns a handler that loads and saves pools through repo.
func NewUpdateSettingsHandler(repo app.Repository) UpdateSettingsHandler {
	return UpdateSettingsHandler{repo: repo, now: time.Now}
}

// Handle validates the command, changes the pool's settings (a low-balance alert when the new
// threshold makes the pool low) and returns the pool's balance after the change.
func (h UpdateSettingsHandler) Handle(ctx context.Context, cmd UpdateSettings) (api.Balance, error) {
	id, err := domain.NewID(cmd.CompanyID, cmd.Environment)
	if err != nil {
		return api.Balance{}, validation.Invalid("", err.Error())
	}
	var threshold *money.Amount
	if cmd.LowThreshold != nil {
		a, err := money.Parse(*cmd.LowThreshold)
		if err != nil {
			return api.Balance{}, validation.Invalid("low_threshold",
				"must be a non-negative USDC amount with at most 6 decimals, e.g. \"100.00\"")
		}
		if money.CheckAmount(a) != nil {
			return api.Balance{}, validation.Invalid("low_threshold", "must be at most "+money.MaxAmount.String()+" USDC, the largest amount of one operation")
		}
		threshold = &a
	}
	var after api.Balance
	err = h.repo.Update(ctx, id, func(p *domain.Pool) error {
		s := p.Settings()
		if threshold != nil {
			s.LowThreshold = *threshold
		}
		if cmd.AutoTopUpEnabled != nil {
			s.AutoTopUpEnabled = *cmd.AutoTopUpEnabled
		}
		if _, err := p.ChangeSettings(s, h.now().UTC(), domain.Cause{CorrelationID: cmd.RequestID}); err != nil {
			return err
		}
		// The pool as the update saves it: what its balances row holds once committed (a pool
		// without events, whose row is not kept, is at balance 0.00 with the default settings).
		after = app.NewBalance(p.Balance(), p.Settings())
		return nil
	})
	if err != nil {
		return api.Balance{}, err
	}
	return after, nil
}
