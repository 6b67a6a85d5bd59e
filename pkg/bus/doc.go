// Package bus is the NATS JetStream event bus of the platform (DESIGN.md §3 and §7), built on
// Watermill and watermill-nats/v2:
//
//   - Streams and Provision: one file-backed, limits-retention stream per event family plus
//     DEADLETTER, created or updated idempotently by every service at start.
//   - ConsumerSpec and EnsureConsumer: durable push consumers created up front (the library's
//     own durables are deleted when a subscriber drains, which breaks rolling restarts).
//   - Publisher and NewEventMessage: events published with Nats-Msg-Id = Watermill UUID =
//     meta.event_id, so JetStream drops a re-published event.
//   - Router: Watermill's router on subscribers bound to those durables, with typed handlers
//     (EventHandler), in-process retries of transient errors, and dead-lettering of permanent
//     ones (undecodable or invalid events, Permanent errors, panics, exhausted MaxDeliver)
//     so that a poison message never blocks the messages behind it.
//
// # Middleware
//
// Outermost first: CorrelationID; settle (ack on success, dead letter then ack on a permanent
// error, nack otherwise; metrics); Recoverer (a panic is permanent); exhausted (a transient
// failure on the last delivery MaxDeliver allows is permanent); Retry; Timeout per attempt.
// Watermill's PoisonQueueWithFilter is not used as such: settle plays its role because the
// dead letter needs the error (for its reason kind) and a de-duplicating Nats-Msg-Id.
//
// # Timing
//
// A message must be settled before the subscriber stops waiting for it, and the subscriber
// must stop waiting before JetStream redelivers it elsewhere:
//
//	retry budget  <  RouterConfig.AckTimeout  <  ConsumerSpec.AckWait (and every BackOff step)
//
// The defaults:
//
//	HandlerTimeout     5s per attempt, 4 attempts (MaxRetries 3)
//	retry waits        100ms, 200ms, 400ms (x2, capped at 1s, +10% jitter): at most 0.77s
//	DeadLetterTimeout  5s
//	retry budget       4 x 5s + 0.77s + 5s = 25.77s
//	AckTimeout         30s  (Watermill's default; 4s above the budget)
//	AckWait            60s  (30s of margin for the ack round trip and for messages waiting in
//	                         the client's buffer: JetStream's clock starts at delivery, and up
//	                         to MaxAckPending 32 messages can be delivered ahead of handling)
//
// AddConsumer refuses a configuration that breaks the rule (ErrTimingBudget). After its
// retries, a transient failure is NAKed with a delay equal to AckWait, so JetStream brings
// the message back when it would have after an ack timeout: after AckWait, or after the
// BackOff step of that delivery. MaxDeliver is unlimited by default: a transient failure
// (a dependency down) is retried until it clears, and only a finite MaxDeliver turns it into
// a dead letter.
package bus
