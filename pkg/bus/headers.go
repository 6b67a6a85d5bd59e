package bus

import (
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
)

// NATS headers of event messages. The names agree with pkg/relay, so that a message published by
// the relay and one published by a Publisher look the same to consumers.
const (
	// HeaderContentType selects protobuf or protojson (events.ContentTypeProtobuf / JSON).
	HeaderContentType = "Content-Type"
	// HeaderEventType carries the event type, for example "payment.confirmed".
	HeaderEventType = "Payplat-Event-Type"
	// HeaderCorrelationID carries meta.correlation_id.
	HeaderCorrelationID = "Payplat-Correlation-Id"
	// HeaderCausationID carries meta.causation_id.
	HeaderCausationID = "Payplat-Causation-Id"
	// HeaderWatermillUUID is where the Watermill NATS marshaler keeps the message UUID; the
	// publisher in JetStream TrackMsgId mode copies it to Nats-Msg-Id.
	HeaderWatermillUUID = wmnats.WatermillUUIDHdr
)

// Headers added to a dead letter, besides the original headers.
const (
	// HeaderDLQReason is the error text (one line, truncated to MaxReasonLength bytes).
	HeaderDLQReason = "Dlq-Reason"
	// HeaderDLQReasonKind is ReasonKind of the error: undecodable, invalid, panic or
	// permanent.
	HeaderDLQReasonKind = "Dlq-Reason-Kind"
	// HeaderDLQOriginalSubject is the subject the message was consumed from.
	HeaderDLQOriginalSubject = "Dlq-Original-Subject"
	// HeaderDLQConsumer is the durable consumer that gave up on the message.
	HeaderDLQConsumer = "Dlq-Consumer"
	// HeaderDLQFailedAt is when it gave up, RFC 3339 in UTC.
	HeaderDLQFailedAt = "Dlq-Failed-At"
	// HeaderDLQOriginalMsgID is the original Nats-Msg-Id (or "<stream>:<sequence>" when the
	// message had none).
	HeaderDLQOriginalMsgID = "Dlq-Original-Msg-Id"
	// HeaderDLQOriginalStream is the stream the message was consumed from, for re-driving it.
	HeaderDLQOriginalStream = "Dlq-Original-Stream"
	// HeaderDLQOriginalSequence is the message's sequence in that stream.
	HeaderDLQOriginalSequence = "Dlq-Original-Sequence"
)
