package domain

import (
	"errors"
)

// Sentinel errors of the merchant domain. The NATS port maps each to an error code of the
// command API (api.Code*) in one place.
var (
	// ErrNotFound: no such merchant for this company and environment.
	ErrNotFound = errors.New("merchant not found")
	// ErrDuplicateEmail: the company already has a merchant with this email in the environment.
	ErrDuplicateEmail = errors.New("a merchant with this email already exists")
	// ErrStatusLocked: the company asked to change a FROZEN, BLACKLISTED or SUSPENDED merchant.
	ErrStatusLocked = errors.New("merchant status is locked by the platform")
	// ErrWalletUnavailable: the wallet provider could not provision a wallet.
	ErrWalletUnavailable = errors.New("wallet provider unavailable")
	// ErrDuplicateEntry: a ledger entry with the same source (payment id, tx hash, withdrawal
	// id) is already recorded.
	ErrDuplicateEntry = errors.New("ledger entry already recorded")
	// ErrLimit: a ledger entry beyond the platform's limits (an amount above money.MaxAmount, or
	// a balance that would pass ±money.MaxBalance; it wraps the money error that says which).
	// No retry can fix it.
	ErrLimit = errors.New("ledger entry beyond the platform's limits")
)
