package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/services/gateway/domain"
)

// Subjects of the pool service's commands (services/pool/ports: micro service "pool").
const (
	poolSubjectUpdateSettings  = "svc.pool.settings.update"
	poolSubjectSimulateDeposit = "svc.pool.deposits.simulate"
)

// poolCommandTimeout bounds a pool command round trip.
const poolCommandTimeout = 10 * time.Second

// PoolCommands sends the pool service's commands over NATS request-reply. The wire types
// mirror services/pool/ports (UpdateSettingsRequest, SimulateDepositRequest, CommandError).
type PoolCommands struct {
	nc *nats.Conn
}

// NewPoolCommands returns a client on nc.
func NewPoolCommands(nc *nats.Conn) *PoolCommands { return &PoolCommands{nc: nc} }

type poolSettingsRequest struct {
	CompanyID        string  `json:"company_id"`
	Environment      string  `json:"environment"`
	LowThreshold     *string `json:"low_threshold,omitempty"`
	AutoTopUpEnabled *bool   `json:"auto_top_up_enabled,omitempty"`
	RequestID        string  `json:"request_id,omitempty"`
}

type poolDepositRequest struct {
	CompanyID     string `json:"company_id"`
	Environment   string `json:"environment"`
	Amount        string `json:"amount"`
	RequestID     string `json:"request_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
}

type poolCommandError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// UpdateSettings changes the pool settings and returns the balance after the change.
func (c *PoolCommands) UpdateSettings(ctx context.Context, company uuid.UUID, env domain.Environment,
	u domain.PoolSettingsUpdate, requestID string) (domain.PoolBalance, error) {
	req := poolSettingsRequest{CompanyID: company.String(), Environment: string(env),
		AutoTopUpEnabled: u.AutoTopUpEnabled, RequestID: requestID}
	if u.LowThreshold != nil {
		s := u.LowThreshold.String()
		req.LowThreshold = &s
	}
	var out domain.PoolBalance
	return out, c.call(ctx, poolSubjectUpdateSettings, req, &out)
}

// SimulateDeposit records a simulated deposit in a test pool. A commandID makes it idempotent
// (the pool records one deposit per id); empty, every call is a new deposit. requestID is
// recorded as the event's correlation id.
func (c *PoolCommands) SimulateDeposit(ctx context.Context, company uuid.UUID, env domain.Environment,
	amount, commandID, requestID string) (domain.PoolDeposit, error) {
	var out domain.PoolDeposit
	return out, c.call(ctx, poolSubjectSimulateDeposit, poolDepositRequest{CompanyID: company.String(),
		Environment: string(env), Amount: amount, RequestID: commandID, CorrelationID: requestID}, &out)
}

func (c *PoolCommands) call(ctx context.Context, subject string, req, out any) error {
	if c.nc == nil {
		return fmt.Errorf("pool commands: no NATS connection: %w", domain.ErrPoolServiceUnavailable)
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, poolCommandTimeout)
	defer cancel()
	msg, err := c.nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return fmt.Errorf("pool command %s: %w: %w", subject, domain.ErrPoolServiceUnavailable, err)
	}
	if err != nil {
		return fmt.Errorf("pool command %s: %w", subject, err)
	}
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		var e poolCommandError
		_ = json.Unmarshal(msg.Data, &e)
		switch e.Code {
		case "VALIDATION_ERROR":
			return domain.Invalid(e.Field, e.Message)
		case "TEST_MODE_ONLY":
			return domain.ErrPoolTestModeOnly
		case "UNAVAILABLE":
			return fmt.Errorf("pool command %s: %w: %s", subject, domain.ErrPoolServiceUnavailable, e.Message)
		default:
			return fmt.Errorf("pool command %s failed: %s %s", subject, code, msg.Header.Get("Nats-Service-Error"))
		}
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return fmt.Errorf("pool command %s: decoding reply: %w", subject, err)
	}
	return nil
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
