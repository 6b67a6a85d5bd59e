// Package events is the Go side of the event contract of proto-events (DESIGN.md §3): the
// registry of event types, the NATS subject scheme, the wire encoding (protobuf, or protojson
// for hand-published messages) and the validation every consumer applies before acting on an
// event.
//
// Subjects are <family>.<env>.<company_id>.<event> and event types <family>.<event>, for
// example subject "payment.test.acme.confirmed" carries type "payment.confirmed", a
// *paymentv1.PaymentConfirmed. Every event message has the common metadata block as field 1
// (meta); its company_id and environment must agree with the subject.
//
// A consumer decodes with Decode, which picks the message type from the subject, reads
// protobuf or protojson according to the Content-Type header and validates the result. Errors
// wrap ErrUndecodable (the bytes cannot be turned into a known event) or ErrInvalid (the event
// breaks a rule of the contract); both mean the message belongs in the dead-letter stream, not
// in a retry loop.
package events
