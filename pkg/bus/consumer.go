package bus

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of ConsumerSpec.
const (
	// DefaultAckWait is how long JetStream waits for an acknowledgement before redelivering.
	// It must exceed the Router's AckTimeout (see doc.go).
	DefaultAckWait = 60 * time.Second
	// DefaultMaxAckPending bounds the messages in flight per consumer (all instances together).
	// Small, because messages waiting in a client's buffer already count against AckWait.
	DefaultMaxAckPending = 32
	// DefaultPullMaxAckPending is the MaxAckPending of pull consumers (EnsurePullConsumer)
	// unless the spec sets one. A pull consumer's client asks for the batches it can take, so
	// nothing waits in a buffer; the bound must exceed the batch a runner fetches, or each
	// fetch stops at the bound and waits out its timeout.
	DefaultPullMaxAckPending = 1024
	// DefaultPullAckWait is the AckWait of pull consumers (EnsurePullConsumer) unless the spec
	// sets one. Their runners apply a fetched batch in one short transaction and acknowledge it
	// (or nak it on a failure), so only a runner that died or froze holding a batch leaves it
	// unacknowledged: its messages wait this long for another worker or the restarted process.
	// A batch that truly takes longer is delivered again meanwhile, and the consumers' de-
	// duplication (applied event ids, source keys) makes the second delivery change nothing.
	DefaultPullAckWait = 15 * time.Second
)

// ConsumerSpec describes a durable JetStream consumer that a service creates up front and a
// Router binds to. All instances of a service share it (a queue group named after the
// durable), so each message is handled by one instance.
type ConsumerSpec struct {
	// Stream is the stream to consume, for example "PAYMENTS". Required.
	Stream string
	// Durable is the consumer name, for example "pool-payments". Required; it is also the
	// queue group and the dead-letter subject suffix (deadletter.<durable>).
	Durable string
	// FilterSubjects narrows the stream's subjects, for example "payment.*.*.confirmed".
	// Empty means every message of the stream.
	FilterSubjects []string
	// AckWait is how long JetStream waits for an acknowledgement before redelivering; zero
	// means DefaultAckWait. When BackOff is set, JetStream uses BackOff[0] instead.
	AckWait time.Duration
	// MaxDeliver is how many times a message is delivered at most; zero or negative means
	// unlimited. With a limit, a message still failing on its last delivery is dead-lettered
	// (ErrDeliveriesExhausted), because JetStream would otherwise just stop sending it.
	MaxDeliver int
	// MaxAckPending bounds the unacknowledged messages; zero means DefaultMaxAckPending.
	MaxAckPending int
	// BackOff, when set, is the acknowledgement deadline of each delivery in turn (the last
	// one repeats); JetStream waits that long before redelivering a message that was
	// neither acknowledged nor rejected, and the Router waits the same after a transient
	// failure (see doc.go).
	BackOff []time.Duration
}

func (s ConsumerSpec) withDefaults() ConsumerSpec {
	switch {
	case len(s.BackOff) > 0:
		s.AckWait = s.BackOff[0]
	case s.AckWait <= 0:
		s.AckWait = DefaultAckWait
	}
	if s.MaxDeliver <= 0 {
		s.MaxDeliver = -1
	}
	if s.MaxAckPending <= 0 {
		s.MaxAckPending = DefaultMaxAckPending
	}
	return s
}

func (s ConsumerSpec) validate() error {
	if s.Stream == "" || s.Durable == "" {
		return fmt.Errorf("%w: stream and durable are required (got %q, %q)", ErrInvalidSpec, s.Stream, s.Durable)
	}
	if strings.ContainsAny(s.Durable, ".*> \t\r\n/\\") {
		return fmt.Errorf("%w: durable %q must not contain '.', '*', '>', '/', '\\' or whitespace", ErrInvalidSpec, s.Durable)
	}
	for _, d := range s.BackOff {
		if d <= 0 {
			return fmt.Errorf("%w: %s: backoff %v is not positive", ErrInvalidSpec, s.Durable, s.BackOff)
		}
	}
	if s.MaxDeliver > 0 && len(s.BackOff) > s.MaxDeliver {
		return fmt.Errorf("%w: %s: %d backoff steps exceed max deliver %d", ErrInvalidSpec, s.Durable, len(s.BackOff), s.MaxDeliver)
	}
	return nil
}

// minAckDeadline is the shortest time JetStream gives any delivery of the consumer before it
// redelivers (the spec must have its defaults applied).
func (s ConsumerSpec) minAckDeadline() time.Duration {
	if len(s.BackOff) > 0 {
		return slices.Min(s.BackOff)
	}
	return s.AckWait
}

// deliverSubject is where JetStream pushes the consumer's messages. It is outside every
// stream's subjects, so deliveries are never captured as new events.
func (s ConsumerSpec) deliverSubject() string {
	return "_bus.deliver." + s.Stream + "." + s.Durable
}

func (s ConsumerSpec) config() jetstream.ConsumerConfig {
	cfg := jetstream.ConsumerConfig{
		Durable:       s.Durable,
		Description:   "bus consumer " + s.Durable,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.AckWait,
		MaxDeliver:    s.MaxDeliver,
		MaxAckPending: s.MaxAckPending,
		BackOff:       s.BackOff,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	}
	if len(s.FilterSubjects) == 1 {
		cfg.FilterSubject = s.FilterSubjects[0]
	} else {
		cfg.FilterSubjects = s.FilterSubjects
	}
	return cfg
}

// EnsureConsumer creates the durable push consumer of spec that a Router binds to, or updates
// it to spec when it exists: explicit acknowledgement, delivery of the whole stream from the
// start, a deliver group named after the durable. It is idempotent. The consumer outlives
// every subscriber: closing a Router never deletes it.
//
// A durable's deliver policy and its push or pull kind cannot change in place: to rebuild,
// use a new durable name.
func EnsureConsumer(ctx context.Context, js jetstream.JetStream, spec ConsumerSpec) error {
	if err := spec.validate(); err != nil {
		return err
	}
	spec = spec.withDefaults()
	cfg := spec.config()
	cfg.DeliverSubject = spec.deliverSubject()
	cfg.DeliverGroup = spec.Durable
	if _, err := js.CreateOrUpdatePushConsumer(ctx, spec.Stream, cfg); err != nil {
		return fmt.Errorf("ensuring consumer %s on %s: %w", spec.Durable, spec.Stream, err)
	}
	return nil
}

// EnsurePullConsumer is EnsureConsumer for a pull consumer, for code that fetches batches
// itself (for example a projection runner) instead of using a Router.
func EnsurePullConsumer(ctx context.Context, js jetstream.JetStream, spec ConsumerSpec) (jetstream.Consumer, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.MaxAckPending <= 0 {
		spec.MaxAckPending = DefaultPullMaxAckPending
	}
	if spec.AckWait <= 0 && len(spec.BackOff) == 0 {
		spec.AckWait = DefaultPullAckWait
	}
	spec = spec.withDefaults()
	c, err := js.CreateOrUpdateConsumer(ctx, spec.Stream, spec.config())
	if err != nil {
		return nil, fmt.Errorf("ensuring pull consumer %s on %s: %w", spec.Durable, spec.Stream, err)
	}
	return c, nil
}
