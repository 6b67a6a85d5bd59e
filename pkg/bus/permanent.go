package bus

import (
	"errors"
	"fmt"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
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

// Exhausted is the reason a message that failed alone failures times, while its dependencies
// answered, is dead-lettered with: err, the last failure, is not known to be permanent, but
// the message is set aside as an incident for an operator rather than retried for ever.
func Exhausted(failures int, err error) error {
	return fmt.Errorf("%w: failed %d times while its dependencies answered: %w", ErrExhausted, failures, err)
}

// IsPermanent reports whether err can never succeed on retry: it was marked with Permanent,
// it wraps events.ErrUndecodable or events.ErrInvalid (a message outside the contract), it is
// beyond the platform's money limits or an arithmetic overflow (money.IsLimit), or it is a
// refused input (*validation.Error: a domain's rules refused what the message asks).
func IsPermanent(err error) bool {
	var invalid *validation.Error
	return errors.Is(err, ErrPermanent) ||
		errors.Is(err, ErrExhausted) ||
		errors.Is(err, events.ErrUndecodable) ||
		errors.Is(err, events.ErrInvalid) ||
		money.IsLimit(err) ||
		errors.As(err, &invalid)
}

// Reason kinds: the reason_kind label of bus_dead_letters_total and the Dlq-Reason-Kind header.
const (
	ReasonUndecodable = "undecodable"
	ReasonInvalid     = "invalid"
	ReasonPanic       = "panic"
	// ReasonLimit: beyond the platform's money limits (money.MaxAmount, money.MaxBalance).
	ReasonLimit = "limit"
	// ReasonExhausted: failed alone MaxFailures times while its dependencies answered.
	ReasonExhausted = "exhausted"
	ReasonPermanent = "permanent"
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
	case money.IsLimit(err):
		return ReasonLimit
	case errors.Is(err, ErrExhausted):
		return ReasonExhausted
	default:
		return ReasonPermanent
	}
}
