package domain

import (
	"encoding/json"
	"errors"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	poolapi "github.com/payplat/platform/services/pool/api"
	pooldomain "github.com/payplat/platform/services/pool/domain"
)

// ErrPoolTestModeOnly means the operation exists only in the test environment and the caller used
// a live key (403 TEST_MODE_ONLY).
var ErrPoolTestModeOnly = errors.New("this operation is only available with test keys")

// PoolDefaultLowThreshold is the threshold of a pool whose company never set one: the pool
// service's own default, which a pool without events has.
var PoolDefaultLowThreshold = pooldomain.DefaultLowThreshold

// The gateway's API answers with what the pool service answers (SPEC §2.5, §2.6), so it speaks
// the pool's contract types rather than copies of them that could drift.
type (
	// PoolBalance is a company's treasury pool balance and settings (SPEC §2.5).
	PoolBalance = poolapi.Balance
	// PoolPayment is the payment reference of a DEBIT or CREDIT.
	PoolPayment = poolapi.Payment
)

// PoolTransactionTypes are the values of the type filter of the pool transactions list.
var PoolTransactionTypes = []string{"DEPOSIT", "DEBIT", "CREDIT", "WITHDRAWAL"}

// PoolTransaction is a pool movement (SPEC §2.6): the pool's poolapi.Transaction, with a JSON
// form of its own. It is a defined type rather than an alias because the pool service sends
// its times at the database's precision, while the gateway's API writes every time in its one
// format (UTC, milliseconds); moving MarshalJSON to the contract would change the pool's replies.
type PoolTransaction poolapi.Transaction

// MarshalJSON writes the transaction with its times in the API's one format (UTC, milliseconds).
func (t PoolTransaction) MarshalJSON() ([]byte, error) {
	var confirmed *string
	if t.ConfirmedAt != nil {
		s := events.FormatTime(*t.ConfirmedAt)
		confirmed = &s
	}
	// The outer fields, shallower, hide the embedded times; poolapi.Transaction has no
	// MarshalJSON of its own, so the rest keeps its fields and their order.
	return json.Marshal(struct {
		poolapi.Transaction
		CreatedAt   string  `json:"created_at"`
		ConfirmedAt *string `json:"confirmed_at"`
	}{poolapi.Transaction(t), events.FormatTime(t.CreatedAt), confirmed})
}

// PoolTransactionFilter selects a page of pool transactions, newest first.
type PoolTransactionFilter struct {
	// Type is one of PoolTransactionTypes, or "" for every type.
	Type   string
	Limit  int
	Offset int64
}

// PoolTransactionPage is a page of pool transactions and the number of transactions matching
// the filter.
type PoolTransactionPage struct {
	Transactions []PoolTransaction
	Total        int64
}

// PoolSettingsUpdate changes the pool settings; nil fields keep their value.
type PoolSettingsUpdate struct {
	LowThreshold     *money.Amount
	AutoTopUpEnabled *bool
}

// PoolDeposit is a recorded deposit and the balance after it.
type PoolDeposit struct {
	Transaction PoolTransaction `json:"transaction"`
	Balance     PoolBalance     `json:"balance"`
}

// ErrPoolServiceUnavailable means the pool service did not answer a command (503); nothing
// may have changed, and a retry with the same Idempotency-Key records the change once.
var ErrPoolServiceUnavailable = errors.New("the pool service is unavailable")
