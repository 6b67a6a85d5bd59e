package ports

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
)

// EventsStream is the dispatcher's own stream: a copy of every catalogue event (sourced from
// PAYMENTS, POOL, DEVICES and SESSION_KEYS), its subject prefixed with the partition of its
// company, webhooks.<partition>.<original subject>. Each partition has a durable consumer, and
// each partition is consumed by one dispatcher at a time (app.Assigner), so a company's events
// are taken in order by one process however many run, while the partitions spread over them.
// It keeps the copies for EventsMaxAge (limits retention): the event streams remain the log. An
// interest-retention stream, which would drop each copy once its consumer acknowledged it,
// cannot be used: nats-server 2.15 drops copies arriving from sources under it before their
// partition's filtered consumer gets them.
const EventsStream = "WEBHOOK_EVENTS"

// EventsMaxAge is how long EventsStream keeps a copy: a dispatcher stopped for longer misses
// the events older than that (the delivery log cannot be rebuilt from them then).
const EventsMaxAge = 7 * 24 * time.Hour

// eventsPrefix starts the subjects of EventsStream.
const eventsPrefix = "webhooks."

// DefaultPartitions is the number of partitions unless WEBHOOK_PARTITIONS says otherwise.
const DefaultPartitions = 8

// EventsStreamConfig is the configuration of EventsStream with n partitions and the given
// replica count. The partition of an event is NATS's partition() of its company id, the
// subject's third token.
func EventsStreamConfig(n, replicas int) jetstream.StreamConfig {
	var sources []*jetstream.StreamSource
	for _, st := range events.Streams() {
		filters, _ := catalogueFilters(st.Family)
		if len(filters) == 0 {
			continue
		}
		src := &jetstream.StreamSource{Name: st.Name}
		for _, f := range filters {
			// family.env.company.event -> webhooks.<partition(company)>.family.env.company.event
			parts := strings.Split(f, ".")
			dest := fmt.Sprintf("%s{{partition(%d,2)}}.%s.{{wildcard(1)}}.{{wildcard(2)}}.%s", eventsPrefix, n, parts[0], parts[3])
			src.SubjectTransforms = append(src.SubjectTransforms, jetstream.SubjectTransformConfig{Source: f, Destination: dest})
		}
		sources = append(sources, src)
	}
	return jetstream.StreamConfig{
		Name:        EventsStream,
		Description: fmt.Sprintf("The catalogue events, by company partition (%d), for the webhook dispatchers", n),
		Sources:     sources,
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      EventsMaxAge,
		Replicas:    replicas,
	}
}

// ErrPartitionsChanged means EventsStream exists with another number of partitions: the
// partition of a company cannot change under running dispatchers.
var ErrPartitionsChanged = errors.New("WEBHOOK_PARTITIONS differs from the partitions of the existing " + EventsStream +
	" stream: stop every dispatcher, delete the stream (nats stream rm " + EventsStream + "), and start them with the new value")

// EnsureEventsStream creates EventsStream and the durable consumer of each of its n partitions
// unless they exist, and checks that an existing stream has n partitions. The consumers are
// created before the stream starts copying, so that none starts after the first copies. It
// retires the durable consumers the dispatcher had on the event streams before it had its own
// stream: the copy of each stream starts where that consumer had got to, and the consumer is
// deleted once the copy exists.
func EnsureEventsStream(ctx context.Context, js jetstream.JetStream, n, replicas int) error {
	cfg := EventsStreamConfig(n, replicas)
	s, err := js.Stream(ctx, EventsStream)
	switch {
	case err == nil:
		if got := s.CachedInfo().Config; len(got.Sources) > 0 &&
			got.Sources[0].SubjectTransforms[0].Destination != cfg.Sources[0].SubjectTransforms[0].Destination {
			return ErrPartitionsChanged
		}
	case errors.Is(err, jetstream.ErrStreamNotFound):
		bare := cfg
		bare.Sources = nil
		if _, err := js.CreateStream(ctx, bare); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("creating stream %s: %w", EventsStream, err)
		}
	default:
		return err
	}
	for p := range n {
		if _, err := bus.EnsurePullConsumer(ctx, js, PartitionConsumer(p)); err != nil {
			return err
		}
	}
	if s != nil && len(s.CachedInfo().Config.Sources) > 0 {
		return nil
	}
	for _, src := range cfg.Sources {
		if floor, ok := legacyAckFloor(ctx, js, src.Name); ok {
			src.OptStartSeq = floor + 1
		}
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("starting the copy into %s: %w", EventsStream, err)
	}
	for _, st := range events.Streams() {
		_ = js.DeleteConsumer(ctx, st.Name, durablePrefix+st.Family)
	}
	return nil
}

// legacyAckFloor returns the stream sequence up to which the dispatcher's pre-partition durable
// consumer of stream had acknowledged everything.
func legacyAckFloor(ctx context.Context, js jetstream.JetStream, stream string) (uint64, bool) {
	for _, st := range events.Streams() {
		if st.Name != stream {
			continue
		}
		c, err := js.Consumer(ctx, stream, durablePrefix+st.Family)
		if err != nil {
			return 0, false
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, false
		}
		return info.AckFloor.Stream, true
	}
	return 0, false
}

// PartitionConsumer is the durable consumer of partition p.
func PartitionConsumer(p int) bus.ConsumerSpec {
	return bus.ConsumerSpec{Stream: EventsStream, Durable: durablePrefix + "p" + strconv.Itoa(p),
		FilterSubjects: []string{eventsPrefix + strconv.Itoa(p) + ".>"}, AckWait: ackWait}
}

// OriginalSubject is the subject an event of EventsStream was published on.
func OriginalSubject(subject string) string {
	rest, ok := strings.CutPrefix(subject, eventsPrefix)
	if !ok {
		return subject
	}
	_, orig, _ := strings.Cut(rest, ".")
	return orig
}

// PartitionOf is the partition of a subject of EventsStream, -1 for another subject.
func PartitionOf(subject string) int {
	rest, ok := strings.CutPrefix(subject, eventsPrefix)
	if !ok {
		return -1
	}
	p, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(p)
	if err != nil {
		return -1
	}
	return n
}
