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
//   - One relay at a time per store, and never stalled for long: the active replica holds a
//     lease in PostgreSQL (relay_leases: holder, fencing token, expiry on the database's clock),
//     renews it every Lease.Renew and stops publishing a quarter of Lease.Duration before it
//     would expire. A standby takes it over, with the next token, once it has expired (a leader
//     frozen or cut off), or at once when the holder's session is gone (a leader killed: the
//     session advisory lock named after its token is free). The token fences the old leader:
//     a takeover writes it into the checkpoint row and every checkpoint write requires it
//     (besides the compare-and-swap on the old position), and whatever the old leader had sent
//     before it froze is admitted by JetStream only if the chain says it is exactly the next
//     event. Every message carries the token (Payplat-Relay-Token).
package relay
