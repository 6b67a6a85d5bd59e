package bus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of ConsumerSpec.
const (
	// DefaultPullMaxAckPending is the MaxAckPending of a consumer unless its spec sets one. A
	// pull consumer's client asks for the batches it can take, so nothing waits in a buffer;
	// the bound must exceed the batch a BatchConsumer fetches, or each fetch stops at the
	// bound and waits out its timeout.
	DefaultPullMaxAckPending = 1024
	// DefaultPullAckWait is the AckWait of a consumer unless its spec sets one. A
	// BatchConsumer applies a fetched batch in one short transaction and acknowledges it (or
	// hands it back on a failure), so only a process that died or froze holding a batch
	// leaves it unacknowledged: its messages wait this long for another worker or the
	// restarted process. A batch that truly takes longer is delivered again meanwhile, and the
	// handlers' de-duplication (applied event ids, source keys) makes the second delivery
	// change nothing.
	DefaultPullAckWait = 15 * time.Second
)

// ConsumerSpec describes a durable JetStream pull consumer that a service creates up front
// (EnsurePullConsumer) and reads with a BatchConsumer. All instances of a service share it, so
// each message is handled by one instance.
type ConsumerSpec struct {
	// Stream is the stream to consume, for example "PAYMENTS". Required.
	Stream string
	// Durable is the consumer name, for example "pool-payments". Required; it is also the
	// dead-letter subject suffix (deadletter.<durable>).
	Durable string
	// FilterSubjects narrows the stream's subjects, for example "payment.*.*.confirmed".
	// Empty means every message of the stream.
	FilterSubjects []string
	// AckWait is how long JetStream waits for an acknowledgement before redelivering; zero
	// means DefaultPullAckWait. When BackOff is set, JetStream uses BackOff[0] instead.
	AckWait time.Duration
	// MaxDeliver is how many times a message is delivered at most; zero or negative means
	// unlimited, which the platform's consumers use: a transient failure (a dependency down)
	// is retried until it clears.
	MaxDeliver int
	// MaxAckPending bounds the unacknowledged messages; zero means DefaultPullMaxAckPending.
	MaxAckPending int
	// BackOff, when set, is the acknowledgement deadline of each delivery in turn (the last
	// one repeats); JetStream waits that long before redelivering a message that was
	// neither acknowledged nor rejected.
	BackOff []time.Duration
}

func (s ConsumerSpec) withDefaults() ConsumerSpec {
	switch {
	case len(s.BackOff) > 0:
		s.AckWait = s.BackOff[0]
	case s.AckWait <= 0:
		s.AckWait = DefaultPullAckWait
	}
	if s.MaxDeliver <= 0 {
		s.MaxDeliver = -1
	}
	if s.MaxAckPending <= 0 {
		s.MaxAckPending = DefaultPullMaxAckPending
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

// EnsurePullConsumer creates the durable pull consumer of spec, or updates it to spec when it
// exists: explicit acknowledgement, delivery of the whole stream from the start. It is
// idempotent, and the consumer outlives every process that reads it.
//
// A durable's deliver policy and its push or pull kind cannot change in place: to rebuild,
// use a new durable name.
func EnsurePullConsumer(ctx context.Context, js jetstream.JetStream, spec ConsumerSpec) (jetstream.Consumer, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	c, err := js.CreateOrUpdateConsumer(ctx, spec.Stream, spec.config())
	if err != nil {
		return nil, fmt.Errorf("ensuring pull consumer %s on %s: %w", spec.Durable, spec.Stream, err)
	}
	return c, nil
}
