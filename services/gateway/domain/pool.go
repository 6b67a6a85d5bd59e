package domain

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	pooldomain "github.com/payplat/platform/services/pool/domain"
)

// ErrPoolTestModeOnly means the operation exists only in the test environment and the caller used
// a live key (403 TEST_MODE_ONLY).
var ErrPoolTestModeOnly = errors.New("this operation is only available with test keys")

// PoolDefaultLowThreshold is the threshold of a pool whose company never set one: the pool
// service's own default, which a pool without events has.
var PoolDefaultLowThreshold = pooldomain.DefaultLowThreshold

// PoolBalance is a company's treasury pool balance and settings (SPEC §2.5). The pool service's
// reply (pool api.Balance) converts to it field for field.
type PoolBalance struct {
	Balance              money.Amount `json:"balance"`
	Currency             string       `json:"currency"`
	LowThreshold         money.Amount `json:"low_threshold"`
	IsLow                bool         `json:"is_low"`
	RemainingBeforeAlert money.Amount `json:"remaining_before_alert"`
	AutoTopUpEnabled     bool         `json:"auto_top_up_enabled"`
}

// NewPoolBalance derives is_low and remaining_before_alert = max(balance − threshold, 0).
func NewPoolBalance(balance, threshold money.Amount, autoTopUp bool) PoolBalance {
	b := PoolBalance{Balance: balance, Currency: "USDC", LowThreshold: threshold,
		IsLow: balance.Cmp(threshold) < 0, AutoTopUpEnabled: autoTopUp}
	if rem, err := balance.Sub(threshold); err == nil && rem.IsPositive() {
		b.RemainingBeforeAlert = rem
	}
	return b
}

// PoolTransactionTypes are the values of the type filter of the pool transactions list.
var PoolTransactionTypes = []string{"DEPOSIT", "DEBIT", "CREDIT", "WITHDRAWAL"}

// PoolPayment is the payment reference of a DEBIT or CREDIT.
type PoolPayment struct {
	PaymentID    string       `json:"payment_id"`
	Amount       money.Amount `json:"amount"`
	MerchantName string       `json:"merchant_name"`
}

// PoolTransaction is a pool movement (SPEC §2.6).
type PoolTransaction struct {
	ID            string       `json:"id"`
	Type          string       `json:"type"`
	Amount        money.Amount `json:"amount"`
	BalanceBefore money.Amount `json:"balance_before"`
	BalanceAfter  money.Amount `json:"balance_after"`
	Status        string       `json:"status"`
	TxHash        string       `json:"tx_hash"`
	Description   string       `json:"description"`
	Payment       *PoolPayment `json:"payment,omitempty"`
	CreatedAt     time.Time    `json:"created_at"`
	ConfirmedAt   *time.Time   `json:"confirmed_at"`
}

// MarshalJSON writes the transaction with its times in the API's one format (UTC, milliseconds).
func (t PoolTransaction) MarshalJSON() ([]byte, error) {
	type fields PoolTransaction // without this method
	var confirmed *string
	if t.ConfirmedAt != nil {
		s := events.FormatTime(*t.ConfirmedAt)
		confirmed = &s
	}
	return json.Marshal(struct {
		fields
		CreatedAt   string  `json:"created_at"`
		ConfirmedAt *string `json:"confirmed_at"`
	}{fields(t), events.FormatTime(t.CreatedAt), confirmed})
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
