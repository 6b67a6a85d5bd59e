package command

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// UpdatePoolSettings changes the given settings of the caller's treasury pool; nil ones stay as
// they are.
type UpdatePoolSettings struct {
	Principal domain.Principal
	// RequestID is recorded by the pool service as the command's correlation id.
	RequestID string
	// LowThreshold is a USDC amount as the caller wrote it ("100.00").
	LowThreshold *string
	AutoTopUp    *bool
}

// PoolSettingsUpdater asks the pool service to change a pool's settings and returns the balance
// after the change.
type PoolSettingsUpdater interface {
	UpdateSettings(ctx context.Context, company uuid.UUID, env domain.Environment, u domain.PoolSettingsUpdate,
		requestID string) (domain.PoolBalance, error)
}

// UpdatePoolSettingsHandler runs UpdatePoolSettings.
type UpdatePoolSettingsHandler struct {
	pool PoolSettingsUpdater
}

// NewUpdatePoolSettingsHandler returns an UpdatePoolSettingsHandler changing through pool.
func NewUpdatePoolSettingsHandler(pool PoolSettingsUpdater) UpdatePoolSettingsHandler {
	return UpdatePoolSettingsHandler{pool: pool}
}

// Handle requires at least one setting and a threshold that is a USDC amount of 0 or more, then
// has the pool service apply the change.
func (h UpdatePoolSettingsHandler) Handle(ctx context.Context, cmd UpdatePoolSettings) (domain.PoolBalance, error) {
	if cmd.LowThreshold == nil && cmd.AutoTopUp == nil {
		return domain.PoolBalance{}, validation.Invalid("", "give low_threshold, auto_top_up_enabled or both")
	}
	u := domain.PoolSettingsUpdate{AutoTopUpEnabled: cmd.AutoTopUp}
	if cmd.LowThreshold != nil {
		a, err := money.Parse(*cmd.LowThreshold)
		if err != nil {
			return domain.PoolBalance{}, validation.Invalid("low_threshold",
				`must be a USDC amount of 0 or more with at most 6 decimals, as a string ("100.00")`)
		}
		if money.CheckAmount(a) != nil {
			return domain.PoolBalance{}, validation.Invalid("low_threshold", domain.AboveMaxAmount)
		}
		u.LowThreshold = &a
	}
	return h.pool.UpdateSettings(ctx, cmd.Principal.CompanyID, cmd.Principal.Environment, u, cmd.RequestID)
}
