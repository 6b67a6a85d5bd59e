package events

import (
	"errors"
	"fmt"
)

var (
	// ErrUndecodable is wrapped by every error of a message that cannot be turned into a known
	// event: unknown subject or type, unsupported content type, malformed bytes.
	ErrUndecodable = errors.New("undecodable event")

	// ErrUnknownType is wrapped when a subject, type or message is not part of the contract.
	// Decode wraps it together with ErrUndecodable.
	ErrUnknownType = errors.New("unknown event type")

	// ErrBadSubject is wrapped by ParseSubject and SubjectFor when a subject does not follow
	// <family>.<env>.<company_id>.<event>.
	ErrBadSubject = errors.New("bad event subject")

	// ErrInvalid is wrapped by every validation failure; the error is a *ValidationError that
	// names the event type and the field.
	ErrInvalid = errors.New("invalid")
)

// ValidationError reports the first rule of the contract an event breaks. It wraps ErrInvalid
// and reads like `invalid payment.confirmed: amount: "12.1234567" has more than 6 decimals`.
type ValidationError struct {
	// Type is the event type, for example "payment.confirmed".
	Type string
	// Field is the offending field in protobuf (snake_case) naming; metadata fields are
	// prefixed with "meta.", for example "meta.event_id".
	Field string
	// Reason says what is wrong with the field.
	Reason string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", ErrInvalid, e.Type, e.Field, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

func invalid(eventType, field, format string, args ...any) *ValidationError {
	return &ValidationError{Type: eventType, Field: field, Reason: fmt.Sprintf(format, args...)}
}
