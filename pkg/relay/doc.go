// Package relay moves events from a service's event store to its JetStream stream: the
// transactional outbox, without a dual write.
//
// Guarantees, and how they are kept:
//
//   - Nothing skipped: the relay tails the store in gap-safe order (eventstore.ReadAll).
//   - Order: every publish carries Nats-Expected-Last-Msg-Id = the id of the message before it,
//     so JetStream stores the relay's messages as an unbroken chain. If one publish of an
//     asynchronous batch fails, every later one fails too, and what the stream holds is always
//     a prefix of the store's order.
//   - Nothing doubled: Nats-Msg-Id = event id (JetStream de-duplicates within its window), and
//     after any failure or restart the relay resynchronises from the stream itself: it finds
//     its own last stored message (headers carry the store position) and continues after it,
//     whatever the duplicate window.
//   - One relay at a time per store: a PostgreSQL advisory lock elects the active replica; the
//     checkpoint is advanced with compare-and-swap as a second fence.
package relay
