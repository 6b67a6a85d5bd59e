package bus

import "errors"

var (
	// ErrPermanent is matched (errors.Is) by every error wrapped with Permanent: the message can
	// never be processed and goes to the dead-letter stream instead of being retried.
	ErrPermanent = errors.New("permanent failure")

	// ErrHandlerPanicked is wrapped when a batch handler panics; a panic is a permanent
	// failure of the message that caused it.
	ErrHandlerPanicked = errors.New("handler panicked")

	// ErrExhausted is wrapped (Exhausted) when a message that kept failing alone, while its
	// consumer's dependencies answered, is dead-lettered as an incident.
	ErrExhausted = errors.New("retries exhausted")

	// ErrInvalidSpec is wrapped when a ConsumerSpec is incomplete or inconsistent.
	ErrInvalidSpec = errors.New("invalid consumer spec")

	// ErrNoEventID is wrapped when an event to publish has no meta.event_id.
	ErrNoEventID = errors.New("event has no event id")
)
