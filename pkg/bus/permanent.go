package bus

import (
	"errors"

	"github.com/payplat/platform/pkg/events"
)

// permanentError marks an error that no retry can fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// Permanent marks err as permanent: a BatchConsumer does not retry it and moves the message to
// the dead-letter stream. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err can never succeed on retry: it was marked with Permanent,
// or it wraps events.ErrUndecodable or events.ErrInvalid (a message outside the contract).
func IsPermanent(err error) bool {
	return errors.Is(err, ErrPermanent) ||
		errors.Is(err, events.ErrUndecodable) ||
		errors.Is(err, events.ErrInvalid)
}

// Reason kinds: the reason_kind label of bus_dead_letters_total and the Dlq-Reason-Kind header.
const (
	ReasonUndecodable = "undecodable"
	ReasonInvalid     = "invalid"
	ReasonPanic       = "panic"
	ReasonPermanent   = "permanent"
)

// ReasonKind classifies why a message is dead-lettered, with a small fixed set of values
// suitable as a metric label.
func ReasonKind(err error) string {
	switch {
	case errors.Is(err, events.ErrUndecodable):
		return ReasonUndecodable
	case errors.Is(err, events.ErrInvalid):
		return ReasonInvalid
	case errors.Is(err, ErrHandlerPanicked):
		return ReasonPanic
	default:
		return ReasonPermanent
	}
}
