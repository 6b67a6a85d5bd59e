// Package app holds the pool service's use cases, one per file in app/command, driven by the
// ports (NATS commands, the consumer of bus facts). The transaction is the repository's: a use
// case makes one repository call, which runs in a transaction of its own.
package app

import (
	"context"

	"github.com/payplat/platform/pkg/money"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/domain"
)

// Repository loads pools and saves their changes: the events and the read tables in one
// transaction per call, which holds the locks of the pools it changes.
type Repository interface {
	// Update runs fn on the pool of id and saves what it changed.
	Update(ctx context.Context, id domain.ID, fn func(p *domain.Pool) error) error
	// RecordPoolFacts records facts of several pools: each pool's facts in their order, a fact
	// whose key its pool has recorded before recording nothing.
	RecordPoolFacts(ctx context.Context, facts []domain.PoolFact) error
	// RecordFact records f on the pool of id (nothing when the pool has recorded f's key
	// before) and returns, read in the same transaction, the pool's transaction for f's key
	// and its balance after it.
	RecordFact(ctx context.Context, id domain.ID, f domain.Fact) (api.Transaction, api.Balance, error)
}

// NewBalance is the balance reply of a balance and its settings.
func NewBalance(balance money.Amount, s domain.Settings) api.Balance {
	return api.NewBalance(balance, s.LowThreshold, s.AutoTopUpEnabled)
}
