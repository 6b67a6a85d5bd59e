package domain

import (
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
)

// Event is an event of the merchant aggregate.
type Event interface{ merchantEvent() }

// Created: a merchant was created with its wallet. It starts ACTIVE with a zero balance.
type Created struct {
	MerchantID uuid.UUID
	Profile
	At time.Time
}

// StatusChanged: the merchant's status changed from From to To by Actor.
type StatusChanged struct {
	MerchantID uuid.UUID
	From, To   Status
	Actor      Actor
	Reason     string
	At         time.Time
}

// LedgerEntryRecorded: an entry of the merchant's ledger, with the balances the aggregate
// decided.
type LedgerEntryRecorded struct {
	EntryID       uuid.UUID
	MerchantID    uuid.UUID
	Type          EntryType
	Amount        money.Amount
	BalanceBefore money.Amount
	BalanceAfter  money.Amount
	PaymentID     string
	TxHash        string
	Status        string
	Description   string
	At            time.Time
}

func (Created) merchantEvent()             {}
func (StatusChanged) merchantEvent()       {}
func (LedgerEntryRecorded) merchantEvent() {}

// SourceKey identifies the fact behind an entry, so that each payment and each on-chain
// transaction is recorded once whatever the redeliveries.
func (e LedgerEntryRecorded) SourceKey() string { return SourceKey(e.Type, e.PaymentID, e.TxHash) }
