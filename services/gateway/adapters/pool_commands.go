package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	poolapi "github.com/payplat/platform/services/pool/api"
)

// PoolCommands sends the pool service's commands over NATS request-reply (services/pool/api).
type PoolCommands struct {
	client *poolapi.Client
}

// NewPoolCommands returns a client on nc; with a nil nc every command answers
// domain.ErrPoolServiceUnavailable.
func NewPoolCommands(nc *nats.Conn) *PoolCommands {
	return &PoolCommands{client: poolapi.NewClient(nc)}
}

// UpdateSettings changes the pool settings and returns the balance after the change.
func (c *PoolCommands) UpdateSettings(ctx context.Context, company uuid.UUID, env domain.Environment,
	u domain.PoolSettingsUpdate, requestID string) (domain.PoolBalance, error) {
	req := poolapi.UpdateSettingsRequest{CompanyID: company.String(), Environment: string(env),
		AutoTopUpEnabled: u.AutoTopUpEnabled, RequestID: requestID}
	if u.LowThreshold != nil {
		s := u.LowThreshold.String()
		req.LowThreshold = &s
	}
	b, err := c.client.UpdateSettings(ctx, req)
	if err != nil {
		return domain.PoolBalance{}, poolError(poolapi.SubjectUpdateSettings, err)
	}
	return b, nil
}

// SimulateDeposit records a simulated deposit in a test pool. A commandID makes it idempotent
// (the pool records one deposit per id); empty, every call is a new deposit. requestID is
// recorded as the event's correlation id.
func (c *PoolCommands) SimulateDeposit(ctx context.Context, company uuid.UUID, env domain.Environment,
	amount, commandID, requestID string) (domain.PoolDeposit, error) {
	d, err := c.client.SimulateDeposit(ctx, poolapi.SimulateDepositRequest{CompanyID: company.String(),
		Environment: string(env), Amount: amount, RequestID: commandID, CorrelationID: requestID})
	if err != nil {
		return domain.PoolDeposit{}, poolError(poolapi.SubjectSimulateDeposit, err)
	}
	return domain.PoolDeposit{Transaction: domain.PoolTransaction(d.Transaction), Balance: d.Balance}, nil
}

// poolError maps a command API error to the gateway's errors.
func poolError(subject string, err error) error {
	var e *poolapi.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("pool command %s: %w", subject, err)
	}
	switch e.Code {
	case poolapi.CodeValidation:
		return validation.Invalid(e.Field, e.Message)
	case poolapi.CodeTestModeOnly:
		return domain.ErrPoolTestModeOnly
	case poolapi.CodeUnavailable, poolapi.CodeServiceUnavailable:
		return fmt.Errorf("pool command %s: %w: %s", subject, domain.ErrPoolServiceUnavailable, e.Message)
	default:
		return fmt.Errorf("pool command %s failed: %w", subject, err)
	}
}

// Pool is the gateway's access to the treasury pool: reads from the read tables, commands over
// NATS.
type Pool struct {
	*PoolReader
	*PoolCommands
}

// NewPool returns the pool access on db (reads) and nc (commands; nil refuses them).
func NewPool(db *pgxpool.Pool, nc *nats.Conn) *Pool {
	return &Pool{PoolReader: NewPoolReader(db), PoolCommands: NewPoolCommands(nc)}
}
