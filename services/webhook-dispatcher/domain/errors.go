package domain

import "errors"

// Errors of the webhook use cases. The request-reply port turns each into an error code the
// gateway maps to an HTTP status.
var (
	// ErrNotFound means the delivery or endpoint does not exist for this company and environment.
	ErrNotFound = errors.New("not found")
	// ErrInFlight means an attempt of the delivery is under way; try again once it ends.
	ErrInFlight = errors.New("an attempt of this delivery is in flight")
	// ErrBlockedAddress is the dial-time refusal of a private, loopback, link-local or other
	// non-public address (SSRF guard).
	ErrBlockedAddress = errors.New("blocked address")
)

// ValidationError reports an invalid input field, named as the client spelled it.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Invalid returns a ValidationError.
func Invalid(field, message string) error { return &ValidationError{Field: field, Message: message} }
