package domain

import "errors"

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

// ValidationError reports a command input that cannot be accepted: the field at fault ("" for
// the request as a whole) and a message for people.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Message }

// Invalid returns the validation error of field with message.
func Invalid(field, message string) error { return &ValidationError{Field: field, Message: message} }
