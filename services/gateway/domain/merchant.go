package domain

import (
	"errors"
	"time"
)

// Errors of the merchant endpoints (the merchant service's command API codes). The merchant
// ports map them to HTTP in the error table of ports/errors.go.
var (
	// ErrDuplicateResource: the company already has a merchant with the email (400).
	ErrDuplicateResource = errors.New("a merchant with this email already exists")
	// ErrMerchantStatusLocked: the merchant is FROZEN, BLACKLISTED or SUSPENDED (403).
	ErrMerchantStatusLocked = errors.New("merchant status is locked by the platform")
	// ErrWalletProviderUnavailable: no wallet could be provisioned; nothing was created (503).
	ErrWalletProviderUnavailable = errors.New("wallet provider unavailable")
	// ErrMerchantServiceUnavailable: the merchant service did not answer (503).
	ErrMerchantServiceUnavailable = errors.New("merchant service unavailable")
)

// MerchantSummary is a merchant as the list shows it (SPEC §2.1).
type MerchantSummary struct {
	ID            string
	Name          string
	Email         string
	WalletAddress string
	Balance       string
	CreatedAt     time.Time
}

// MerchantCreated is a merchant as its creation returns it (SPEC §2.2).
type MerchantCreated struct {
	MerchantSummary
	WalletUserID string
	Environment  string
}

// MerchantStatusResult is the result of a status update (SPEC §2.3).
type MerchantStatusResult struct {
	ID        string
	Name      string
	Status    string
	UpdatedAt time.Time
}

// MerchantLedgerEntry is one entry of a merchant's ledger (SPEC §2.4).
type MerchantLedgerEntry struct {
	ID            string
	Type          string
	Amount        string
	BalanceBefore string
	BalanceAfter  string
	PaymentID     string
	Status        string
	Description   string
	CreatedAt     time.Time
}

// MerchantLedger is a page of a merchant's ledger, newest first, with the total count.
type MerchantLedger struct {
	MerchantID   string
	MerchantName string
	TotalCount   int
	Entries      []MerchantLedgerEntry
}
