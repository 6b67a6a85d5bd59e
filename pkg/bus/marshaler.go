package bus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
)

// Marshaler is Watermill's NATS header marshaler (the message UUID in a header, metadata as
// headers, payload as the body) made safe for a bus that people also publish to by hand:
//
//   - a message without the Watermill UUID header (for example from `nats pub`) takes its UUID
//     from Nats-Msg-Id, or a generated one;
//   - a header with several values is joined with ", " instead of failing, because a message
//     that fails to unmarshal is never acknowledged and would come back forever;
//   - the subject, Nats-Msg-Id, stream, stream sequence and delivery count are added to the
//     metadata (MetadataSubject and friends), and Payplat-Correlation-Id becomes Watermill's
//     correlation id.
//
// Unmarshal never returns an error.
type Marshaler struct{}

var _ wmnats.MarshalerUnmarshaler = Marshaler{}

// Marshal encodes msg as Watermill's NATSMarshaler does.
func (Marshaler) Marshal(topic string, msg *message.Message) (*nats.Msg, error) {
	var inner wmnats.NATSMarshaler
	nm, err := inner.Marshal(topic, msg)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	return nm, nil
}

// Unmarshal decodes a NATS message into a Watermill message; see Marshaler.
func (Marshaler) Unmarshal(nm *nats.Msg) (*message.Message, error) {
	var inner wmnats.NATSMarshaler
	msg, err := inner.Unmarshal(&nats.Msg{Subject: nm.Subject, Data: nm.Data, Header: singleValued(nm.Header)})
	if err != nil {
		// Unreachable with single-valued headers; kept so that a library change cannot panic.
		return nil, fmt.Errorf("unmarshal message on %s: %w", nm.Subject, err)
	}
	msgID := nm.Header.Get(nats.MsgIdHdr)
	if msg.UUID == "" {
		msg.UUID = msgID
	}
	if msg.UUID == "" {
		msg.UUID = watermill.NewUUID()
	}
	msg.Metadata.Set(MetadataSubject, nm.Subject)
	setIfNotEmpty(msg.Metadata, MetadataMsgID, msgID)
	setIfNotEmpty(msg.Metadata, MetadataCorrelationID, nm.Header.Get(HeaderCorrelationID))
	if md, err := nm.Metadata(); err == nil {
		msg.Metadata.Set(MetadataStream, md.Stream)
		msg.Metadata.Set(MetadataStreamSequence, strconv.FormatUint(md.Sequence.Stream, 10))
		msg.Metadata.Set(MetadataDelivered, strconv.FormatUint(md.NumDelivered, 10))
	}
	return msg, nil
}

// singleValued returns a copy of h with every multi-valued header joined into one value.
func singleValued(h nats.Header) nats.Header {
	out := make(nats.Header, len(h))
	for k, vs := range h {
		if len(vs) > 0 {
			out[k] = []string{strings.Join(vs, ", ")}
		}
	}
	return out
}

func setIfNotEmpty(md message.Metadata, key, value string) {
	if value != "" {
		md.Set(key, value)
	}
}
