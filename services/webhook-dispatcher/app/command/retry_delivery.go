package command

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// RetryDelivery attempts a delivery of a company and environment at once, whatever its status
// and schedule (SPEC 4.8): the partner's manual retry.
type RetryDelivery struct {
	CompanyID   string
	Environment string
	DeliveryID  uuid.UUID
}

// RetryDeliveryHandler handles RetryDelivery.
type RetryDeliveryHandler struct {
	repo   app.Repository
	engine app.Engine
}

// NewRetryDeliveryHandler returns a handler that claims the delivery in repo and has engine
// attempt it.
func NewRetryDeliveryHandler(repo app.Repository, engine app.Engine) RetryDeliveryHandler {
	return RetryDeliveryHandler{repo: repo, engine: engine}
}

// Handle attempts the delivery and returns the updated entry. Over the company's rate of manual
// retries it refuses with a *domain.RateLimitedError, before touching the store.
func (h RetryDeliveryHandler) Handle(ctx context.Context, cmd RetryDelivery) (domain.Delivery, error) {
	if err := h.engine.AllowManualRetry(domain.Target{CompanyID: cmd.CompanyID, Environment: cmd.Environment}); err != nil {
		return domain.Delivery{}, err
	}
	c, err := h.repo.ClaimOne(ctx, cmd.DeliveryID, cmd.CompanyID, cmd.Environment, h.engine.Lease())
	if err != nil {
		return domain.Delivery{}, err
	}
	del, err := h.engine.Attempt(ctx, c, app.TriggerManual)
	if err != nil {
		return domain.Delivery{}, fmt.Errorf("manual retry of %s: %w", cmd.DeliveryID, err)
	}
	return del, nil
}
