package ports

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/events"
)

// DefaultPartitions is the number of partitions unless WEBHOOK_PARTITIONS says otherwise.
const DefaultPartitions = 8

// PartitionOf is the partition of a company among n: FNV-1a of its id, modulo n (the
// partition() of NATS subject transforms, which the copy stream of earlier versions used, so
// a company keeps its partition across the upgrade).
func PartitionOf(company string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(company))
	return int(h.Sum32() % uint32(n))
}

// Sources are the event streams with catalogue events: the streams the intakes read.
func Sources() []events.Stream {
	var out []events.Stream
	for _, st := range events.Streams() {
		if filters, _ := catalogueFilters(st.Family); len(filters) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// SourceNames are the names of Sources.
func SourceNames() []string {
	var out []string
	for _, st := range Sources() {
		out = append(out, st.Name)
	}
	return out
}

// RetiredCopy is the stream earlier versions of the dispatcher read instead of the event
// streams: a copy of the catalogue events, webhooks.<partition>.<original subject>, with a
// durable consumer per partition. StartPositions starts the intakes where those consumers had
// got to, and RetireCopy deletes it.
const RetiredCopy = "WEBHOOK_EVENTS"

// streamSourceHeader is the header in which JetStream records where a sourced message comes from.
const streamSourceHeader = "Nats-Stream-Source"

// copyPrefix starts the subjects of RetiredCopy.
const copyPrefix = "webhooks."

// Start is where the intake of partition p starts in stream at the first start of this
// version (the position below its first event to read).
type Start func(stream string, p int) uint64

// StartPositions returns where the intakes of n partitions start in each source stream when the
// partitions have no position yet:
//   - after an upgrade from the copy stream (RetiredCopy), after what each partition's consumer
//     of the copy had acknowledged (the copies above its acknowledgement floor are read again
//     from the source, which creates nothing twice: deliveries are unique per endpoint and
//     event); when the copy had another number of partitions, every partition starts at the
//     least of those positions;
//   - after an upgrade from the first versions, after what their durable consumer of the stream
//     had acknowledged;
//   - on a new installation, at the start of each stream.
func StartPositions(ctx context.Context, js jetstream.JetStream, n int, log *slog.Logger) (Start, error) {
	cp, err := js.Stream(ctx, RetiredCopy)
	switch {
	case err == nil:
		pos, err := copyPositions(ctx, js, cp, n)
		if err != nil {
			return nil, err
		}
		log.Info("starting where the partitions of the copy stream had got to", "stream", RetiredCopy, "positions", pos)
		return func(stream string, p int) uint64 { return pos[stream][p] }, nil
	case !errors.Is(err, jetstream.ErrStreamNotFound):
		return nil, fmt.Errorf("looking up %s: %w", RetiredCopy, err)
	}
	floors := map[string]uint64{}
	for _, st := range Sources() {
		if floor, ok := legacyAckFloor(ctx, js, st); ok {
			floors[st.Name] = floor
		}
	}
	return func(stream string, _ int) uint64 { return floors[stream] }, nil
}

// copyPositions returns, for each source stream and each of n partitions, the position below the
// first copy of the stream the partition's consumer of the copy had not acknowledged.
func copyPositions(ctx context.Context, js jetstream.JetStream, cp jetstream.Stream, n int) (map[string][]uint64, error) {
	floors, err := copyAckFloors(ctx, cp)
	if err != nil {
		return nil, err
	}
	out := map[string][]uint64{}
	for _, st := range Sources() {
		// Above every copy of st, or at st's end when the copy holds none (none came within its
		// retention).
		var above uint64
		m, err := cp.GetLastMsgForSubject(ctx, copyPrefix+"*."+st.Family+".>")
		switch {
		case err == nil:
			if above, err = sourceSeq(m); err != nil {
				return nil, err
			}
		case errors.Is(err, jetstream.ErrMsgNotFound):
			s, err := js.Stream(ctx, st.Name)
			if err != nil {
				return nil, fmt.Errorf("looking up %s: %w", st.Name, err)
			}
			above = s.CachedInfo().State.LastSeq
		default:
			return nil, fmt.Errorf("reading %s: %w", RetiredCopy, err)
		}
		pos := make([]uint64, len(floors))
		for p, floor := range floors {
			m, err := cp.GetMsg(ctx, floor+1, jetstream.WithGetMsgSubject(fmt.Sprintf("%s%d.%s.>", copyPrefix, p, st.Family)))
			switch {
			case err == nil:
				seq, err := sourceSeq(m)
				if err != nil {
					return nil, err
				}
				pos[p] = seq - 1
			case errors.Is(err, jetstream.ErrMsgNotFound):
				pos[p] = above
			default:
				return nil, fmt.Errorf("reading %s: %w", RetiredCopy, err)
			}
		}
		if len(pos) != n {
			least := above
			if len(pos) > 0 {
				least = min(least, slices.Min(pos))
			}
			pos = slices.Repeat([]uint64{least}, n)
		}
		out[st.Name] = pos
	}
	return out, nil
}

// copyAckFloors are the acknowledgement floors of the copy stream's partition consumers,
// indexed by partition: every copy of the partition at or below it was taken. Partitions
// without a consumer have none (a floor of 0).
func copyAckFloors(ctx context.Context, cp jetstream.Stream) ([]uint64, error) {
	var floors []uint64
	lister := cp.ListConsumers(ctx)
	for info := range lister.Info() {
		p, err := strconv.Atoi(strings.TrimPrefix(info.Name, durablePrefix+"p"))
		if err != nil || p < 0 || !strings.HasPrefix(info.Name, durablePrefix+"p") {
			continue
		}
		for len(floors) <= p {
			floors = append(floors, 0)
		}
		floors[p] = info.AckFloor.Stream
	}
	if err := lister.Err(); err != nil {
		return nil, fmt.Errorf("listing the consumers of %s: %w", RetiredCopy, err)
	}
	return floors, nil
}

// sourceSeq is the sequence in its source stream of a copy: the second field of its
// Nats-Stream-Source header ("<stream> <sequence> <filter> <transform>").
func sourceSeq(m *jetstream.RawStreamMsg) (uint64, error) {
	fields := strings.Fields(m.Header.Get(streamSourceHeader))
	if len(fields) < 2 {
		return 0, fmt.Errorf("copy %d of %s has no source sequence", m.Sequence, RetiredCopy)
	}
	seq, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("copy %d of %s: source %q", m.Sequence, RetiredCopy, m.Header.Get(streamSourceHeader))
	}
	return seq, nil
}

// legacyAckFloor returns the stream sequence up to which the dispatcher's durable consumer of st
// from before the copy stream had acknowledged everything.
func legacyAckFloor(ctx context.Context, js jetstream.JetStream, st events.Stream) (uint64, bool) {
	c, err := js.Consumer(ctx, st.Name, durablePrefix+st.Family)
	if err != nil {
		return 0, false
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, false
	}
	return info.AckFloor.Stream, true
}

// RetireCopy deletes what earlier versions read: the copy stream with its consumers, and the
// durable consumers on the event streams. It runs once the partitions have their positions.
// Dispatchers of the earlier version still running meanwhile (a rolling upgrade) find the copy
// gone and wait; what they created before is not created again.
func RetireCopy(ctx context.Context, js jetstream.JetStream) error {
	if err := js.DeleteStream(ctx, RetiredCopy); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting %s: %w", RetiredCopy, err)
	}
	for _, st := range events.Streams() {
		if err := js.DeleteConsumer(ctx, st.Name, durablePrefix+st.Family); err != nil &&
			!errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("deleting consumer %s of %s: %w", durablePrefix+st.Family, st.Name, err)
		}
	}
	return nil
}
