package domain

import (
	"errors"

	"github.com/payplat/platform/pkg/validation"
)

// Sentinel errors of the pool domain.
var (
	// ErrInvalidAmount reports a movement amount that is not strictly positive, or a threshold
	// that is negative.
	ErrInvalidAmount = errors.New("invalid amount")
	// ErrAmountOutOfRange reports a movement that would take the balance outside the range of
	// micro-USDC an int64 holds. No retry can fix it.
	ErrAmountOutOfRange = errors.New("amount out of range")
	// ErrTestModeOnly reports an operation allowed only in the test environment.
	ErrTestModeOnly = errors.New("only available in the test environment")
	// ErrInvalidPool reports a company id or environment that cannot name a pool.
	ErrInvalidPool = errors.New("invalid pool id")
)

// ValidationError reports an input that cannot be accepted (the services share one, so that
// every port maps it alike); Field names it as the client spelled it.
type ValidationError = validation.Error

// Invalid returns a *ValidationError saying why the value of field was refused.
func Invalid(field, message string) error { return validation.Invalid(field, message) }
