package domain

import (
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
)

// MovementType is the type of a pool transaction (SPEC §2.6).
type MovementType string

// Movement types.
const (
	Deposit    MovementType = "DEPOSIT"
	Debit      MovementType = "DEBIT"
	Credit     MovementType = "CREDIT"
	Withdrawal MovementType = "WITHDRAWAL"
)

// MovementTypes lists every movement type.
var MovementTypes = []MovementType{Deposit, Debit, Credit, Withdrawal}

// ParseMovementType returns the movement type named s.
func ParseMovementType(s string) (MovementType, bool) {
	for _, t := range MovementTypes {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

// sign is +1 for money coming into the pool and -1 for money leaving it.
func (t MovementType) sign() int {
	if t == Debit || t == Withdrawal {
		return -1
	}
	return 1
}

// Status is the status of a pool transaction.
type Status string

// Statuses. Every input the pool consumes is an on-chain fact already final, so the movements
// it records are CONFIRMED; PENDING exists in the contract for movements recorded before
// finality.
const (
	Pending   Status = "PENDING"
	Confirmed Status = "CONFIRMED"
)

// PaymentRef is the payment a DEBIT pays or a CREDIT refunds.
type PaymentRef struct {
	PaymentID    string
	MerchantID   string
	MerchantName string
	// Amount is the payment's amount, positive.
	Amount money.Amount
}

// Cause is the input event a change stems from, for the metadata of the events it produces.
type Cause struct {
	EventID       string
	CorrelationID string
}

// Fact is an input that moves money in or out of the pool: a treasury deposit, withdrawal or
// refund, or a confirmed payment.
type Fact struct {
	Type MovementType
	// Key makes the fact idempotent within its pool: one movement per key, whatever the
	// redeliveries (see Key helpers).
	Key string
	// Amount is the magnitude moved, strictly positive; the movement's amount carries the sign.
	Amount money.Amount
	TxHash string
	// Description replaces the default description (DefaultDescription) of a deposit, debit or
	// credit, whose events carry it; a withdrawal always has the default one, which its event
	// (a webhook event with the fields of SPEC 6.4) lets a projection derive.
	Description  string
	Payment      *PaymentRef
	WithdrawalID string
	ToAddress    string
	ConfirmedAt  time.Time
	Cause        Cause
}

// PoolFact is a fact with the pool it happened to.
type PoolFact struct {
	Pool ID
	Fact Fact
}

// DepositKey is the idempotency key of a deposit: one DEPOSIT per tx hash.
func DepositKey(txHash string) string { return "deposit:" + txHash }

// WithdrawalKey is the idempotency key of a withdrawal: one WITHDRAWAL per withdrawal id.
func WithdrawalKey(withdrawalID string) string { return "withdrawal:" + withdrawalID }

// DebitKey is the idempotency key of a payment debit: one DEBIT per payment id.
func DebitKey(paymentID string) string { return "debit:" + paymentID }

// CreditKey is the idempotency key of a refund: one CREDIT per payment id (a payment is
// refunded at most once).
func CreditKey(paymentID string) string { return "credit:" + paymentID }

// KeyOf is the idempotency key of a movement of type t, from the fields its event carries:
// what DepositKey, WithdrawalKey, DebitKey and CreditKey give the pool's inputs.
func KeyOf(t MovementType, txHash, withdrawalID, paymentID string) string {
	switch t {
	case Deposit:
		return DepositKey(txHash)
	case Withdrawal:
		return WithdrawalKey(withdrawalID)
	case Debit:
		return DebitKey(paymentID)
	default:
		return CreditKey(paymentID)
	}
}

// Movement is a recorded pool transaction: a change of the balance with its snapshots.
type Movement struct {
	ID            uuid.UUID
	Type          MovementType
	Key           string
	Amount        money.Amount
	BalanceBefore money.Amount
	BalanceAfter  money.Amount
	Status        Status
	TxHash        string
	Description   string
	Payment       *PaymentRef
	WithdrawalID  string
	ToAddress     string
	CreatedAt     time.Time
	ConfirmedAt   time.Time
	Cause         Cause
}

// SettingsChanged is a change of the pool settings.
type SettingsChanged struct {
	Settings Settings
	At       time.Time
	Cause    Cause
}

// LowBalance is the crossing of the low threshold from at-or-above to below.
type LowBalance struct {
	Balance   money.Amount
	Threshold money.Amount
	At        time.Time
	Cause     Cause
}

// Change is one event of the pool: a *Movement, a *SettingsChanged or a *LowBalance.
type Change interface{ isChange() }

func (*Movement) isChange()        {}
func (*SettingsChanged) isChange() {}
func (*LowBalance) isChange()      {}
