// Package bus is the NATS JetStream event bus of the platform (DESIGN.md §3 and §7):
//
//   - Streams and Provision: one file-backed, limits-retention stream per event family plus
//     DEADLETTER, created or updated idempotently by every service at start.
//   - ConsumerSpec and EnsurePullConsumer: durable pull consumers created up front, shared by
//     every replica of a service.
//   - BatchConsumer: the consumer loop of the durable consumers. It fetches what is available
//     through one long-lived pull subscription (Fetcher), lets a BatchHandler screen the batch (decode, validate, look things up
//     once per batch) and apply it in one transaction, then settles: acknowledges what was
//     applied or skipped, dead-letters one by one, with the reason, what can never be
//     applied, and hands the rest back to JetStream for redelivery. A poison message, a
//     permanent error or a panic dead-letters the message that caused it and never blocks the
//     messages behind it: a batch that fails is split until the message at fault is alone; one
//     that fails alone while the handler's database answers (Prober) is retried with backoff
//     and dead-lettered as an incident after MaxFailures; an outage dead-letters nothing.
//   - Progress: each consumer's progress (pending, failing, oldest unapplied message, last
//     settled), behind its gauges and its readiness check (Stalled).
//   - OrderedReader: the other way to read a stream, for a reader whose position lives in
//     PostgreSQL with what the messages caused (the webhook dispatcher's intakes): an ordered
//     consumer (no acknowledgements, no state on the server) read in batches from a sequence,
//     that notices a consumer lost with its server, a stream created again and a stream that
//     lost its last messages, and says when to read again from the stored position.
//   - DeadLetterer: stores dead letters on deadletter.<durable> with Dlq-* headers, for
//     payplat-ctl dlq to list, show, re-drive and purge.
//   - Publisher and NewEventMessage: events published through Watermill's NATS publisher
//     (watermill-nats/v2) with Nats-Msg-Id = Watermill UUID = meta.event_id, so JetStream drops
//     a re-published event.
//
// # Why the consumers are not Watermill handlers
//
// Watermill's router hands a handler one message at a time and settles each on its own. The
// platform's consumers apply a batch in one PostgreSQL transaction (one commit, one lock round
// for the pools and merchants it touches, one insert of the applied event ids), which is where
// their throughput comes from, and they need the whole batch to screen it (one company or
// endpoint lookup per batch). The publisher side has no such need, so it stays on Watermill.
// docs/ARCHITECTURE.md says the same for newcomers.
package bus
