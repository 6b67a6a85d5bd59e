package domain

import (
	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
)

// EntryType is the type of a ledger entry (SPEC §2.4; the list is open).
type EntryType string

// Ledger entry types.
const (
	EntryPayment    EntryType = "PAYMENT"
	EntryDeposit    EntryType = "DEPOSIT"
	EntryWithdrawal EntryType = "WITHDRAWAL"
)

// EntryCompleted is the status of entries recorded from confirmed facts.
const EntryCompleted = "COMPLETED"

// NewEntry is a ledger entry to record.
type NewEntry struct {
	ID          uuid.UUID
	Type        EntryType
	Amount      money.Amount
	PaymentID   string
	TxHash      string
	Description string
}

func (e NewEntry) validate() error {
	switch {
	case e.ID == uuid.Nil:
		return validation.Invalid("entry_id", "is required")
	case e.Type == EntryPayment && e.PaymentID == "":
		return validation.Invalid("payment_id", "is required for a PAYMENT entry")
	case e.Type != EntryPayment && e.TxHash == "":
		return validation.Invalid("tx_hash", "is required for a wallet entry")
	case e.Type == EntryWithdrawal && !e.Amount.IsNegative():
		return validation.Invalid("amount", "a withdrawal must be negative")
	case e.Type != EntryWithdrawal && !e.Amount.IsPositive():
		return validation.Invalid("amount", "must be positive")
	}
	return nil
}

// SourceKey is the key of the fact behind an entry: the payment id of a PAYMENT, the
// transaction hash of a wallet DEPOSIT or WITHDRAWAL.
func SourceKey(t EntryType, paymentID, txHash string) string {
	if t == EntryPayment {
		return "payment:" + paymentID
	}
	return string(t) + ":" + txHash
}
