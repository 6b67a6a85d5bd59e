package bus

import "errors"

var (
	// ErrPermanent is matched (errors.Is) by every error wrapped with Permanent: the message can
	// never be processed and goes to the dead-letter stream instead of being retried.
	ErrPermanent = errors.New("permanent failure")

	// ErrDeliveriesExhausted is wrapped when a message still fails on its last delivery allowed
	// by the consumer's MaxDeliver; it is dead-lettered rather than silently dropped by JetStream.
	ErrDeliveriesExhausted = errors.New("deliveries exhausted")

	// ErrHandlerPanicked is wrapped when a handler panics; a panic is a permanent failure.
	ErrHandlerPanicked = errors.New("handler panicked")

	// ErrInvalidSpec is wrapped when a ConsumerSpec is incomplete or inconsistent.
	ErrInvalidSpec = errors.New("invalid consumer spec")

	// ErrTimingBudget is wrapped when the timeouts break the rule
	// router retry time < subscriber ack timeout < server AckWait (see doc.go).
	ErrTimingBudget = errors.New("timing budget violated")

	// ErrNoEventID is wrapped when an event to publish has no meta.event_id.
	ErrNoEventID = errors.New("event has no event id")

	// ErrDuplicateConsumer is wrapped when a Router is given the same stream and durable twice.
	ErrDuplicateConsumer = errors.New("consumer added twice")

	// ErrRouterStarted is returned when a consumer is added to a Router that already runs,
	// or when a Router is run twice.
	ErrRouterStarted = errors.New("router already started")

	// ErrRouterClosed is returned when a closed Router is run or given a consumer.
	ErrRouterClosed = errors.New("router closed")
)
