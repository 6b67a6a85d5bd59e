// Package api is the pool service's command API over NATS request-reply (a nats.go micro
// service named "pool", queue group "pool"): the subjects, the JSON requests and replies, the
// error codes, and a client. The gateway maps the codes to HTTP (DESIGN §5).
//
// The subjects live under "svc.pool." rather than "pool.", because the POOL JetStream stream
// captures "pool.>": a request there would be stored as an event. pkg/natsauth grants them as
// "svc.pool.>".
package api

import (
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/services/pool/domain"
)

// Service identity in `nats micro ls`.
const (
	ServiceName = "pool"
	QueueGroup  = "pool"
	// SubjectPrefix is the prefix of every endpoint's subject.
	SubjectPrefix = "svc.pool"
)

// Endpoints: each one's name in `nats micro info pool` and its subject.
const (
	EndpointUpdateSettings  = "update_settings"
	SubjectUpdateSettings   = SubjectPrefix + ".settings.update"
	EndpointSimulateDeposit = "simulate_deposit"
	SubjectSimulateDeposit  = SubjectPrefix + ".deposits.simulate"
)

// Error codes of replies, with the HTTP status the gateway answers them with in parentheses.
const (
	CodeValidation   = "VALIDATION_ERROR" // 400
	CodeTestModeOnly = "TEST_MODE_ONLY"   // 403
	CodeInternal     = "INTERNAL"         // 500
	// CodeUnavailable (503): the command did not finish within the service's deadline (the
	// pool's lock held by a long batch, the database slow) or the database could not be
	// reached; nothing was recorded, and a retry is safe.
	CodeUnavailable = "UNAVAILABLE"
	// CodeServiceUnavailable is set by the Client, never sent: no pool service answered in time.
	CodeServiceUnavailable = natsx.CodeUnavailable
)

// Timeout bounds every request of the Client. The service bounds each command below it, so
// that the caller gets the pool's answer rather than a timeout of its own.
const Timeout = 10 * time.Second

// UpdateSettingsRequest changes the settings of the pool of a company and environment; a
// field left out (null) keeps its value. The reply is the Balance after the change.
type UpdateSettingsRequest struct {
	CompanyID        string  `json:"company_id"`
	Environment      string  `json:"environment"`
	LowThreshold     *string `json:"low_threshold,omitempty"`
	AutoTopUpEnabled *bool   `json:"auto_top_up_enabled,omitempty"`
	// RequestID is the caller's request id, recorded as the correlation id of the event.
	RequestID string `json:"request_id,omitempty"`
}

// SimulateDepositRequest records a deposit in a test pool, as if a chain watcher had seen one.
type SimulateDepositRequest struct {
	CompanyID   string `json:"company_id"`
	Environment string `json:"environment"`
	Amount      string `json:"amount"`
	// RequestID, when set, makes the command idempotent: the synthesized tx hash derives from
	// it, so a repeated request records one deposit and answers with it. The gateway sets it only
	// under an Idempotency-Key (from the caller and the key), never from a caller's X-Request-Id,
	// which is a correlation id anyone may repeat.
	RequestID string `json:"request_id,omitempty"`
	// CorrelationID is recorded as the correlation id of the event (the gateway's request id);
	// empty means RequestID.
	CorrelationID string `json:"correlation_id,omitempty"`
}

// Balance is the pool balance of SPEC §2.5.
type Balance struct {
	Balance              money.Amount `json:"balance"`
	Currency             string       `json:"currency"`
	LowThreshold         money.Amount `json:"low_threshold"`
	IsLow                bool         `json:"is_low"`
	RemainingBeforeAlert money.Amount `json:"remaining_before_alert"`
	AutoTopUpEnabled     bool         `json:"auto_top_up_enabled"`
}

// NewBalance is the Balance of a pool holding balance with the given settings: is_low and
// remaining_before_alert = max(balance − threshold, 0) follow from them, so every reader of a
// pool (the service, the gateway reading its tables) answers them alike.
func NewBalance(balance, lowThreshold money.Amount, autoTopUp bool) Balance {
	b := Balance{Balance: balance, Currency: domain.Currency, LowThreshold: lowThreshold,
		IsLow: balance.Cmp(lowThreshold) < 0, AutoTopUpEnabled: autoTopUp}
	if rem, err := balance.Sub(lowThreshold); err == nil && rem.IsPositive() {
		b.RemainingBeforeAlert = rem
	}
	return b
}

// Payment is the payment reference of a DEBIT or CREDIT.
type Payment struct {
	PaymentID    string       `json:"payment_id"`
	Amount       money.Amount `json:"amount"`
	MerchantName string       `json:"merchant_name"`
}

// Transaction is a pool transaction of SPEC §2.6.
type Transaction struct {
	ID            uuid.UUID    `json:"id"`
	Type          string       `json:"type"`
	Amount        money.Amount `json:"amount"`
	BalanceBefore money.Amount `json:"balance_before"`
	BalanceAfter  money.Amount `json:"balance_after"`
	Status        string       `json:"status"`
	TxHash        string       `json:"tx_hash"`
	Description   string       `json:"description"`
	Payment       *Payment     `json:"payment,omitempty"`
	CreatedAt     time.Time    `json:"created_at"`
	ConfirmedAt   *time.Time   `json:"confirmed_at"`
}

// SimulateDepositReply is the recorded deposit and the pool balance after it.
type SimulateDepositReply struct {
	Transaction Transaction `json:"transaction"`
	Balance     Balance     `json:"balance"`
}

// Error is an error reply: its code, a message for people, and the offending field of a
// VALIDATION_ERROR. Every service's API answers errors in this one shape.
type Error = natsx.Error
