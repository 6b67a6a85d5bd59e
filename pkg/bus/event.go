package bus

import (
	"context"
	"fmt"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/logx"
)

// Event is a decoded, validated event as a handler receives it.
type Event struct {
	// Msg is the event, for example a *paymentv1.PaymentConfirmed.
	Msg proto.Message
	// Spec describes its type.
	Spec events.Spec
	// Subject is the NATS subject it was published on.
	Subject string
	// Raw is the Watermill message, with the headers as metadata (see Marshaler).
	Raw *message.Message
}

// EventHandler adapts a typed handler for Router.AddConsumer. Each message is decoded with
// events.Decode by its subject and Content-Type; one that cannot be decoded or fails
// validation is dead-lettered at once, without retries. fn receives the context of the
// attempt, which ends at the Router's HandlerTimeout and carries the event id, company and
// correlation id for pkg/logx; its errors are retried unless marked Permanent.
func EventHandler(fn func(ctx context.Context, ev Event) error) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ev, err := DecodeEvent(msg)
		if err != nil {
			return Permanent(err)
		}
		return fn(eventContext(msg.Context(), ev), ev)
	}
}

// eventContext tags ctx for logging (pkg/logx) with the event, its company and its
// correlation id as the request id.
func eventContext(ctx context.Context, ev Event) context.Context {
	m := events.Meta(ev.Msg)
	ctx = logx.WithEvent(ctx, m.GetEventId())
	ctx = logx.WithCompany(ctx, m.GetCompanyId())
	return logx.WithRequestID(ctx, m.GetCorrelationId())
}

// DecodeEvent decodes and validates the event of a subscribed message. Its errors wrap
// events.ErrUndecodable or events.ErrInvalid.
func DecodeEvent(msg *message.Message) (Event, error) {
	subject := msg.Metadata.Get(MetadataSubject)
	ev, spec, err := events.Decode(subject, metadataValue(msg.Metadata, HeaderContentType), msg.Payload)
	if err != nil {
		return Event{}, fmt.Errorf("decoding message %s on %q: %w", msg.UUID, subject, err)
	}
	return Event{Msg: ev, Spec: spec, Subject: subject, Raw: msg}, nil
}

// metadataValue looks key up exactly, then ignoring case: NATS headers are case-sensitive,
// and hand-written ones are not always spelled canonically.
func metadataValue(md message.Metadata, key string) string {
	if v, ok := md[key]; ok {
		return v
	}
	for k, v := range md {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}
