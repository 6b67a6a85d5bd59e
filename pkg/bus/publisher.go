package bus

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
)

// DefaultPublishTimeout bounds a publish whose context has no deadline.
const DefaultPublishTimeout = 5 * time.Second

// NewEventMessage turns an event into the Watermill message published for it and the topic
// (NATS subject) to publish it on. The message UUID is meta.event_id, so that the publisher's
// TrackMsgId makes it the Nats-Msg-Id and JetStream drops a re-published copy; the payload is
// deterministic protobuf; the metadata (NATS headers) carries Content-Type, the event type and
// the correlation and causation ids. An event that breaks the contract is refused.
func NewEventMessage(msg proto.Message) (string, *message.Message, error) {
	topic, err := events.SubjectFor(msg)
	if err != nil {
		return "", nil, fmt.Errorf("event subject: %w", err)
	}
	meta := events.Meta(msg)
	if meta.GetEventId() == "" {
		return "", nil, fmt.Errorf("%w: %s", ErrNoEventID, topic)
	}
	if err := events.Validate(msg); err != nil {
		return "", nil, fmt.Errorf("event %s: %w", meta.GetEventId(), err)
	}
	payload, err := events.Marshal(msg)
	if err != nil {
		return "", nil, fmt.Errorf("event %s: %w", meta.GetEventId(), err)
	}
	spec, _ := events.ForMessage(msg)
	wm := message.NewMessage(meta.GetEventId(), payload)
	wm.Metadata.Set(HeaderContentType, events.ContentTypeProtobuf)
	wm.Metadata.Set(HeaderEventType, spec.Type)
	setIfNotEmpty(wm.Metadata, HeaderCorrelationID, meta.GetCorrelationId())
	setIfNotEmpty(wm.Metadata, HeaderCausationID, meta.GetCausationId())
	return topic, wm, nil
}

// PublisherOptions tunes a Publisher.
type PublisherOptions struct {
	// Logger receives Watermill's logs; nil means slog.Default().
	Logger *slog.Logger
	// Timeout bounds a publish whose context has no deadline; zero means
	// DefaultPublishTimeout.
	Timeout time.Duration
}

// Publisher publishes events to JetStream through Watermill's NATS publisher in JetStream
// mode with TrackMsgId: each message waits for the stream's acknowledgement, and its
// Nats-Msg-Id is the event id.
type Publisher struct {
	nc      *nats.Conn
	logger  watermill.LoggerAdapter
	timeout time.Duration
}

// NewPublisher returns a Publisher on nc. The connection stays the caller's: closing it is
// the caller's job, and the Publisher has no Close.
func NewPublisher(nc *nats.Conn, opts PublisherOptions) (*Publisher, error) {
	if nc == nil {
		return nil, fmt.Errorf("new publisher: nil NATS connection")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultPublishTimeout
	}
	return &Publisher{nc: nc, logger: watermillLogger(opts.Logger), timeout: opts.Timeout}, nil
}

// PublishEvent publishes events in order, each on its subject (events.SubjectFor). Every event
// is checked first, so an invalid one publishes nothing; a failure in the middle leaves the
// events before it published, and publishing all again is safe (de-duplicated by event id
// within the stream's duplicate window).
func (p *Publisher) PublishEvent(ctx context.Context, msgs ...proto.Message) error {
	topics := make([]string, len(msgs))
	wms := make([]*message.Message, len(msgs))
	for i, m := range msgs {
		topic, wm, err := NewEventMessage(m)
		if err != nil {
			return fmt.Errorf("publish event: %w", err)
		}
		topics[i], wms[i] = topic, wm
	}
	for i := range wms {
		if err := p.Publish(ctx, topics[i], wms[i]); err != nil {
			return err
		}
	}
	return nil
}

// Publish publishes Watermill messages on topic (a NATS subject), waiting for JetStream's
// acknowledgement of each. Their UUID becomes their Nats-Msg-Id.
func (p *Publisher) Publish(ctx context.Context, topic string, msgs ...*message.Message) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	// Watermill's Publish takes no context; a publisher per call is cheap (no I/O) and carries
	// ctx to every JetStream publish through its publish options.
	pub, err := wmnats.NewPublisherWithNatsConn(p.nc, wmnats.PublisherPublishConfig{
		Marshaler:         &wmnats.NATSMarshaler{},
		SubjectCalculator: wmnats.DefaultSubjectCalculator,
		JetStream: wmnats.JetStreamConfig{
			TrackMsgId:     true,
			PublishOptions: []nats.PubOpt{nats.Context(ctx)},
		},
	}, p.logger)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", topic, err)
	}
	if err := pub.Publish(topic, msgs...); err != nil {
		return fmt.Errorf("publish to %s: %w", topic, err)
	}
	return nil
}

// watermillLogger adapts a slog logger for Watermill, whose Info messages (handler started,
// subscriber closed, ...) are Debug for this platform.
func watermillLogger(l *slog.Logger) watermill.LoggerAdapter {
	if l == nil {
		l = slog.Default()
	}
	return watermill.NewSlogLoggerWithLevelMapping(l, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
}

func setIfNotEmpty(md message.Metadata, key, value string) {
	if value != "" {
		md.Set(key, value)
	}
}
