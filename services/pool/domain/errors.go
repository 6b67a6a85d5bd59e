package domain

import (
	"errors"
)

// Sentinel errors of the pool domain.
var (
	// ErrInvalidAmount reports a movement amount that is not strictly positive, or a threshold
	// that is negative.
	ErrInvalidAmount = errors.New("invalid amount")
	// ErrAmountOutOfRange reports a movement or a threshold beyond the platform's limits: an
	// amount above money.MaxAmount, or a balance that would pass ±money.MaxBalance (it wraps
	// the money error that says which). No retry can fix it.
	ErrAmountOutOfRange = errors.New("amount out of range")
	// ErrTestModeOnly reports an operation allowed only in the test environment.
	ErrTestModeOnly = errors.New("only available in the test environment")
	// ErrInvalidPool reports a company id or environment that cannot name a pool.
	ErrInvalidPool = errors.New("invalid pool id")
)
