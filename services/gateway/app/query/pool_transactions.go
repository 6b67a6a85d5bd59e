package query

import (
	"context"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/gateway/domain"
)

// PoolTransactions asks for a page of the caller's pool movements.
type PoolTransactions struct {
	Principal domain.Principal
	Filter    domain.PoolTransactionFilter
}

// PoolTransactionReader reads a page of a company's pool movements in env, newest first, with
// the number of movements the filter matches.
type PoolTransactionReader interface {
	Transactions(ctx context.Context, company uuid.UUID, env domain.Environment,
		f domain.PoolTransactionFilter) (domain.PoolTransactionPage, error)
}

// PoolTransactionsHandler reads a company's pool movements.
type PoolTransactionsHandler struct {
	pool PoolTransactionReader
}

// NewPoolTransactionsHandler returns a PoolTransactionsHandler reading through pool.
func NewPoolTransactionsHandler(pool PoolTransactionReader) PoolTransactionsHandler {
	return PoolTransactionsHandler{pool: pool}
}

// Handle returns the page the filter selects and the filter's total.
func (h PoolTransactionsHandler) Handle(ctx context.Context, q PoolTransactions) (domain.PoolTransactionPage, error) {
	return h.pool.Transactions(ctx, q.Principal.CompanyID, q.Principal.Environment, q.Filter)
}
