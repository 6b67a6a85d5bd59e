package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/events"
)

// Dead-letter stream and subjects: a dead letter of consumer C is published on
// "deadletter.C" (DeadLetterSubject).
const (
	DeadLetterStream        = events.DeadLetterStream
	DeadLetterSubjectPrefix = "deadletter."
)

// Defaults of ProvisionOptions.
const (
	DefaultReplicas        = 1
	DefaultDuplicateWindow = 2 * time.Minute
	// DefaultDeadLetterMaxAge is how long the dead-letter stream keeps a message: 30 days to
	// inspect and re-drive it (payplat-ctl dlq), after which JetStream deletes it.
	DefaultDeadLetterMaxAge = 30 * 24 * time.Hour
)

// ProvisionOptions tunes the streams that Provision creates.
type ProvisionOptions struct {
	// Replicas is the number of copies of each stream: 1 in development, 3 on the production
	// cluster. Zero means DefaultReplicas.
	Replicas int
	// DuplicateWindow is how long JetStream remembers a Nats-Msg-Id to drop a re-published
	// message. Zero means DefaultDuplicateWindow (JetStream's own default).
	DuplicateWindow time.Duration
	// DeadLetterMaxAge is how long the dead-letter stream keeps a message (DEADLETTER_MAX_AGE),
	// so that it does not grow for ever. Zero means DefaultDeadLetterMaxAge. Every
	// service provisions the streams: give them all the same value.
	DeadLetterMaxAge time.Duration
}

func (o ProvisionOptions) withDefaults() ProvisionOptions {
	if o.Replicas <= 0 {
		o.Replicas = DefaultReplicas
	}
	if o.DuplicateWindow <= 0 {
		o.DuplicateWindow = DefaultDuplicateWindow
	}
	if o.DeadLetterMaxAge <= 0 {
		o.DeadLetterMaxAge = DefaultDeadLetterMaxAge
	}
	return o
}

// DeadLetterSubject is the subject of the dead letters of a durable consumer.
func DeadLetterSubject(consumer string) string {
	return DeadLetterSubjectPrefix + consumer
}

// Streams returns the configuration of every stream of the bus (DESIGN.md §3): one per event
// family, in the order of events.Streams, then DEADLETTER. All are file-backed with limits
// retention. Event streams have no age or size limit: they are the log of their family and must
// stay replayable, so they are never work-queue or interest streams. The dead-letter stream
// keeps a message for DeadLetterMaxAge.
func Streams(opts ProvisionOptions) []jetstream.StreamConfig {
	opts = opts.withDefaults()
	var out []jetstream.StreamConfig
	for _, s := range events.Streams() {
		out = append(out, streamConfig(s.Name, s.Subjects, "Events of the "+s.Family+" family", opts))
	}
	dlq := streamConfig(DeadLetterStream, events.DeadLetterSubjects,
		"Messages a consumer could never process, with the reason", opts)
	dlq.MaxAge = opts.DeadLetterMaxAge
	return append(out, dlq)
}

func streamConfig(name, subjects, description string, opts ProvisionOptions) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        name,
		Description: description,
		Subjects:    []string{subjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Replicas:    opts.Replicas,
		Duplicates:  opts.DuplicateWindow,
	}
}

// StreamNames lists the names of every stream of Streams, dead-letter stream included.
func StreamNames() []string {
	var names []string
	for _, c := range Streams(ProvisionOptions{}) {
		names = append(names, c.Name)
	}
	return names
}

// Provision creates every stream of Streams, or updates it to the configuration when it
// exists. It is idempotent, and several services may run it at the same time.
func Provision(ctx context.Context, js jetstream.JetStream, opts ProvisionOptions) error {
	for _, cfg := range Streams(opts) {
		if err := upsertStream(ctx, js, cfg); err != nil {
			return fmt.Errorf("provisioning stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// upsertStream creates the stream, or updates it when its configuration differs. A stream that
// already has the configuration is left alone: every service provisions at start, and an
// update that changes nothing still rewrites the stream's store configuration on the server
// while other services create their consumers on it. Two services creating the same stream at
// once is settled by looking again.
func upsertStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	for attempt := 0; ; attempt++ {
		s, err := js.Stream(ctx, cfg.Name)
		switch {
		case err == nil:
			if sameStreamConfig(s.CachedInfo().Config, cfg) {
				return nil
			}
			_, err = js.UpdateStream(ctx, cfg)
			return err
		case !errors.Is(err, jetstream.ErrStreamNotFound):
			return err
		}
		_, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) && attempt < 3 {
			continue
		}
		return err
	}
}

// sameStreamConfig compares the settings Provision manages.
func sameStreamConfig(a, b jetstream.StreamConfig) bool {
	return a.Description == b.Description && slices.Equal(a.Subjects, b.Subjects) && a.Storage == b.Storage &&
		a.Retention == b.Retention && a.Discard == b.Discard && a.Replicas == b.Replicas && a.Duplicates == b.Duplicates &&
		a.MaxAge == b.MaxAge
}
