package command

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// SimulatePoolDeposit records a simulated deposit into the caller's treasury pool, recorded and
// published like a real one (test keys only).
type SimulatePoolDeposit struct {
	Principal domain.Principal
	// RequestID is recorded as the deposit event's correlation id.
	RequestID string
	// Amount is a USDC amount as the caller wrote it ("100.00").
	Amount *string
	// Caller names who calls (the Idempotency-Key scope) and IdempotencyKey is the request's key,
	// or empty.
	Caller         string
	IdempotencyKey string
}

// PoolDepositSimulator asks the pool service to record a simulated deposit in a test pool; the
// pool records one deposit per non-empty commandID, and requestID as its correlation id.
type PoolDepositSimulator interface {
	SimulateDeposit(ctx context.Context, company uuid.UUID, env domain.Environment, amount, commandID,
		requestID string) (domain.PoolDeposit, error)
}

// SimulatePoolDepositHandler runs SimulatePoolDeposit.
type SimulatePoolDepositHandler struct {
	pool PoolDepositSimulator
}

// NewSimulatePoolDepositHandler returns a SimulatePoolDepositHandler recording through pool.
func NewSimulatePoolDepositHandler(pool PoolDepositSimulator) SimulatePoolDepositHandler {
	return SimulatePoolDepositHandler{pool: pool}
}

// Permit returns domain.ErrPoolTestModeOnly unless p calls with a test key. Handle checks it
// first; the HTTP port checks it before reading the body, so that a live key is refused
// whatever it sent.
func (SimulatePoolDepositHandler) Permit(p domain.Principal) error {
	return testModeOnly(p, domain.ErrPoolTestModeOnly)
}

// testModeOnly is the rule every simulation shares: it returns refusal unless p calls with a test
// key, so that nothing simulated can reach live data.
func testModeOnly(p domain.Principal, refusal error) error {
	if p.Environment != domain.Test {
		return refusal
	}
	return nil
}

// Handle requires a test key and a USDC amount greater than 0, then has the pool service record
// the deposit. Under an Idempotency-Key the pool de-duplicates on a hash of caller and key;
// without one, every call is a deposit.
func (h SimulatePoolDepositHandler) Handle(ctx context.Context, cmd SimulatePoolDeposit) (domain.PoolDeposit, error) {
	if err := h.Permit(cmd.Principal); err != nil {
		return domain.PoolDeposit{}, err
	}
	if cmd.Amount == nil {
		return domain.PoolDeposit{}, validation.Invalid("amount", "is required")
	}
	a, err := money.Parse(*cmd.Amount)
	if err != nil || !a.IsPositive() {
		return domain.PoolDeposit{}, validation.Invalid("amount",
			`must be a USDC amount greater than 0 with at most 6 decimals, as a string ("100.00")`)
	}
	if money.CheckAmount(a) != nil {
		return domain.PoolDeposit{}, validation.Invalid("amount", domain.AboveMaxAmount)
	}
	return h.pool.SimulateDeposit(ctx, cmd.Principal.CompanyID, cmd.Principal.Environment, *cmd.Amount,
		depositCommandID(cmd.Caller, cmd.IdempotencyKey), cmd.RequestID)
}

// depositCommandID identifies a deposit for the pool service's own de-duplication: from the
// Idempotency-Key when there is one (a retry after a lost reply records nothing new, even when
// the first attempt's outcome was never stored), else nothing: every call is a new command. Never
// the request id: X-Request-Id is the caller's correlation id, which any caller may repeat, and a
// repeat must not silently answer with an earlier deposit (issue 16).
func depositCommandID(caller, idempotencyKey string) string {
	if idempotencyKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(caller + "\x00" + idempotencyKey))
	return "idem-" + hex.EncodeToString(sum[:16])
}
