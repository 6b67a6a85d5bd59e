package command

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/app"
	"github.com/payplat/platform/services/pool/domain"
)

// SimulateDeposit records a deposit in a test pool, as if a chain watcher had seen one.
type SimulateDeposit struct {
	CompanyID   string
	Environment string
	// Amount is a USDC amount greater than zero, as the request spells it ("100.00").
	Amount string
	// RequestID, when set, makes the command idempotent: a repeated request is the same
	// deposit.
	RequestID string
	// CorrelationID is recorded as the correlation id of the event; empty means RequestID.
	CorrelationID string
}

// SimulatedDeposit is the deposit recorded (by this request or, for a repeated one, the first)
// and the pool's balance after it.
type SimulatedDeposit struct {
	Transaction api.Transaction
	Balance     api.Balance
}

// SimulateDepositHandler handles SimulateDeposit.
type SimulateDepositHandler struct {
	repo app.Repository
	now  func() time.Time
}

// NewSimulateDepositHandler returns a handler that records deposits through repo.
func NewSimulateDepositHandler(repo app.Repository) SimulateDepositHandler {
	return SimulateDepositHandler{repo: repo, now: time.Now}
}

// Handle validates the command and records the deposit: domain.ErrTestModeOnly outside the
// test environment.
func (h SimulateDepositHandler) Handle(ctx context.Context, cmd SimulateDeposit) (SimulatedDeposit, error) {
	id, err := domain.NewID(cmd.CompanyID, cmd.Environment)
	if err != nil {
		return SimulatedDeposit{}, validation.Invalid("", err.Error())
	}
	if id.Environment != "test" {
		return SimulatedDeposit{}, domain.ErrTestModeOnly
	}
	amount, err := money.Parse(cmd.Amount)
	if err != nil || !amount.IsPositive() {
		return SimulatedDeposit{}, validation.Invalid("amount",
			"must be a USDC amount greater than zero with at most 6 decimals, e.g. \"100.00\"")
	}
	if money.CheckAmount(amount) != nil {
		return SimulatedDeposit{}, validation.Invalid("amount", "must be at most "+money.MaxAmount.String()+" USDC, the largest amount of one operation")
	}
	txHash := simulatedTxHash(id, cmd.RequestID)
	correlation := cmd.CorrelationID
	if correlation == "" {
		correlation = cmd.RequestID
	}
	f := domain.Fact{Type: domain.Deposit, Key: domain.DepositKey(txHash), Amount: amount, TxHash: txHash,
		Description: "Simulated deposit (test mode)", ConfirmedAt: h.now().UTC(),
		Cause: domain.Cause{CorrelationID: correlation}}
	t, b, err := h.repo.RecordFact(ctx, id, f)
	if err != nil {
		return SimulatedDeposit{}, err
	}
	return SimulatedDeposit{Transaction: t, Balance: b}, nil
}

// simulatedTxHash is the tx hash of a simulated deposit, a well-formed 32-byte hash like a real
// one: derived from the request id when there is one (a repeated request is the same deposit),
// random otherwise.
func simulatedTxHash(id domain.ID, requestID string) string {
	sum := make([]byte, 32)
	if requestID == "" {
		_, _ = rand.Read(sum)
	} else {
		h := sha256.Sum256([]byte(id.StreamID() + "\x00" + requestID))
		sum = h[:]
	}
	return "0x" + hex.EncodeToString(sum)
}
