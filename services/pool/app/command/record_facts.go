// Package command holds the pool service's commands, one per file.
package command

import (
	"context"

	"github.com/payplat/platform/services/pool/app"
	"github.com/payplat/platform/services/pool/domain"
)

// RecordFacts records facts from the bus (treasury deposits, withdrawals and refunds,
// confirmed payments) on their pools, all in one transaction, so that a batch of messages is
// acknowledged only once every fact of it is recorded.
type RecordFacts struct {
	Facts []domain.PoolFact
}

// RecordFactsHandler handles RecordFacts.
type RecordFactsHandler struct {
	repo app.Repository
}

// NewRecordFactsHandler returns a handler that records facts through repo.
func NewRecordFactsHandler(repo app.Repository) RecordFactsHandler {
	return RecordFactsHandler{repo: repo}
}

// Handle records each fact whose key its pool has not recorded before; a redelivered fact
// records nothing.
func (h RecordFactsHandler) Handle(ctx context.Context, cmd RecordFacts) error {
	return h.repo.RecordPoolFacts(ctx, cmd.Facts)
}
