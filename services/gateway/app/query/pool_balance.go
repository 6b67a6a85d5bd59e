package query

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// PoolBalance asks for the balance and settings of the caller's treasury pool.
type PoolBalance struct {
	Principal domain.Principal
}

// PoolBalanceReader reads the pool balance of a company in env; a pool with no event yet has
// balance 0.00 and the default settings.
type PoolBalanceReader interface {
	Balance(ctx context.Context, company uuid.UUID, env domain.Environment) (domain.PoolBalance, error)
}

// PoolBalanceHandler reads a company's pool balance.
type PoolBalanceHandler struct {
	pool PoolBalanceReader
}

// NewPoolBalanceHandler returns a PoolBalanceHandler reading through pool.
func NewPoolBalanceHandler(pool PoolBalanceReader) PoolBalanceHandler {
	return PoolBalanceHandler{pool: pool}
}

// Handle returns the caller's pool balance (SPEC §2.5).
func (h PoolBalanceHandler) Handle(ctx context.Context, q PoolBalance) (domain.PoolBalance, error) {
	return h.pool.Balance(ctx, q.Principal.CompanyID, q.Principal.Environment)
}
