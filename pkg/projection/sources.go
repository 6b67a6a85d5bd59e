package projection

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
)

// StoreSource is the event store of the projection's own service.
type StoreSource struct {
	Store *eventstore.Store
}

// Count returns the number of events in the store.
func (s StoreSource) Count(ctx context.Context) (int64, error) {
	return s.Store.Count(ctx, s.Store.DB())
}

// Open starts reading the store from its first event.
func (s StoreSource) Open(context.Context) (SourceReader, error) {
	return &storeReader{store: s.Store}, nil
}

type storeReader struct {
	store *eventstore.Store
	pos   eventstore.Position
	// next is the version of each stream to deliver next (absent: 1); held are events read
	// ahead of a predecessor of their stream, by stream, in version order.
	next map[string]int64
	held map[string][]Event
	// names interns stream ids and subjects: a store holds few streams with many events.
	names interner
}

// Next reads gap-safely: nothing can commit later behind what it returns. The store's order,
// (transaction id, position), is not always the version order of a stream: a transaction that
// took its id before waiting on the stream's lock appends after one with a larger id. Each
// stream's events are therefore delivered in version order, an event that comes before its
// predecessor being held back until the predecessor has been read.
func (r *storeReader) Next(ctx context.Context, max int) ([]Event, error) {
	for {
		evs := make([]Event, 0, max)
		n, last, err := r.store.ScanAll(ctx, r.store.DB(), r.pos, max, func(rec *eventstore.RawRecord) error {
			ev, err := r.decode(rec)
			evs = append(evs, ev)
			return err
		})
		if err != nil || n == 0 {
			return nil, err
		}
		r.pos = last
		if out := r.inVersionOrder(evs); len(out) > 0 {
			return out, nil
		}
	}
}

// decode decodes an event read back from the store for a rebuild. It does not validate it
// again, as decodeRecorded does for the live runner: it was validated when appended, and
// checking every field of every event again (regular expressions, decimal parsing) would be a
// large part of a rebuild's work. The projector still parses what it uses.
func (r *storeReader) decode(rec *eventstore.RawRecord) (Event, error) {
	spec, ok := events.Lookup(string(rec.Type))
	if !ok {
		return Event{}, fmt.Errorf("event %s at %s: unknown type %q", rec.ID, rec.Position, rec.Type)
	}
	msg := spec.New()
	// Unmarshal copies what it keeps out of the buffer, which the next row reuses.
	if err := events.Unmarshal(rec.Payload, msg); err != nil {
		return Event{}, fmt.Errorf("event %s at %s: %w", rec.ID, rec.Position, err)
	}
	return Event{ID: rec.ID, Type: spec.Type, Subject: r.names.get(rec.Subject), Msg: msg, OccurredAt: rec.OccurredAt,
		Position: rec.Position, StreamID: r.names.get(rec.StreamID), Version: rec.Version}, nil
}

// interner hands out one string per distinct value, up to a bound.
type interner map[string]string

func (in *interner) get(b []byte) string {
	if s, ok := (*in)[string(b)]; ok {
		return s
	}
	s := string(b)
	if *in == nil || len(*in) >= 1<<16 {
		*in = make(interner, 1024)
	}
	(*in)[s] = s
	return s
}

// inVersionOrder returns the events of evs, and the held ones they complete, that follow
// their stream's last delivered event; it holds back the others.
func (r *storeReader) inVersionOrder(evs []Event) []Event {
	if r.next == nil {
		r.next, r.held = map[string]int64{}, map[string][]Event{}
	}
	out := make([]Event, 0, len(evs))
	for _, ev := range evs {
		want := max(r.next[ev.StreamID], 1)
		if ev.Version > want {
			h := append(r.held[ev.StreamID], ev)
			sort.Slice(h, func(i, j int) bool { return h[i].Version < h[j].Version })
			r.held[ev.StreamID] = h
			continue
		}
		out = append(out, ev)
		want = max(want, ev.Version+1)
		h := r.held[ev.StreamID]
		for len(h) > 0 && h[0].Version <= want {
			out = append(out, h[0])
			want = max(want, h[0].Version+1)
			h = h[1:]
		}
		if len(h) == 0 {
			delete(r.held, ev.StreamID)
		} else {
			r.held[ev.StreamID] = h
		}
		r.next[ev.StreamID] = want
	}
	return out
}

// Lock takes nothing: Finish locks the store, after the live tables. Appenders write their
// service's read tables (the pool's balances row, the merchant's row, locked FOR UPDATE or
// inserted) before they append to the store, and a swap that held the store while waiting
// for the read tables would deadlock with every append in flight.
func (r *storeReader) Lock(context.Context, pgx.Tx) error { return nil }

// Finish applies the rest of the store and moves a store-fed projection's checkpoint (if it
// has one) past it.
func (r *storeReader) Finish(ctx context.Context, tx pgx.Tx, projection string, apply func([]Event) error) error {
	pos := r.pos
	// A retried swap reads again from r.pos: leave the ordering state as Next left it.
	next, held := maps.Clone(r.next), make(map[string][]Event, len(r.held))
	for k, h := range r.held {
		held[k] = slices.Clone(h)
	}
	defer func() { r.next, r.held = next, held }()
	// Keep appenders out of the store until the swap commits (appends in flight finish
	// first), so that the events read here are all there will be up to the swap.
	if _, err := tx.Exec(ctx, `LOCK TABLE events IN EXCLUSIVE MODE`); err != nil {
		return err
	}
	for {
		var evs []Event
		n, last, err := r.store.ScanVisible(ctx, tx, pos, 5000, func(rec *eventstore.RawRecord) error {
			ev, err := r.decode(rec)
			evs = append(evs, ev)
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if evs := r.inVersionOrder(evs); len(evs) > 0 {
			if err := apply(evs); err != nil {
				return err
			}
		}
		pos = last
	}
	for stream, h := range r.held {
		return fmt.Errorf("stream %s: version %d is missing before version %d", stream, r.next[stream], h[0].Version)
	}
	_, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3, updated_at = now()
        WHERE name = $1 AND (tx_id, position) < ($2::text::xid8, $3::bigint)`,
		projection, fmt.Sprint(pos.TxID), pos.Pos)
	return err
}

func (r *storeReader) Close() {}

// StreamSource is a JetStream stream, read with an ordered consumer (no durable state is
// touched on the server).
type StreamSource struct {
	JS     jetstream.JetStream
	Stream string
	// Subjects filters the stream; empty means all of it. It must take in every subject the
	// live consumer takes: the swap records the stream sequence it read up to, and the live
	// consumer skips every event at or below it.
	Subjects []string
}

// Count returns the number of messages in the stream.
func (s StreamSource) Count(ctx context.Context) (int64, error) {
	st, err := s.JS.Stream(ctx, s.Stream)
	if err != nil {
		return 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return int64(info.State.Msgs), nil
}

// Open starts reading the stream from its first message.
func (s StreamSource) Open(ctx context.Context) (SourceReader, error) {
	end, err := s.lastSeq(ctx)
	if err != nil {
		return nil, err
	}
	r := &streamReader{src: s, end: end}
	if err := r.openConsumer(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (s StreamSource) lastSeq(ctx context.Context) (uint64, error) {
	st, err := s.JS.Stream(ctx, s.Stream)
	if err != nil {
		return 0, fmt.Errorf("opening stream %s: %w", s.Stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// streamReader reads the stream with an ordered consumer (no durable state on the server; it
// recreates its consumer after any gap). The bulk of the stream, up to its last message when
// opened, streams through one pull iterator that keeps about a batch of messages in flight;
// the tail read inside the swap is fetched by a new ordered consumer starting after the last
// message read (an ordered consumer that has iterated cannot fetch).
type streamReader struct {
	src  StreamSource
	cons jetstream.Consumer
	it   jetstream.MessagesContext // the bulk read's iterator, until it reaches end
	end  uint64                    // the stream's last sequence when opened
	seen uint64                    // the last sequence read
	tail []Event                   // events read by Finish, kept to be applied again if the swap is retried
	// fetching is set once cons is the consumer Finish fetches with.
	fetching bool
}

// openConsumer (re)creates the reader's ordered consumer, starting after the last message
// read, and deletes the previous one.
func (r *streamReader) openConsumer(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: r.src.Subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	if r.seen > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, r.seen+1
	}
	cons, err := r.src.JS.OrderedConsumer(ctx, r.src.Stream, cfg)
	if err != nil {
		return fmt.Errorf("reading stream %s: %w", r.src.Stream, err)
	}
	r.stopIterating()
	r.deleteConsumer()
	r.cons = cons
	return nil
}

// readWait is how long the reader waits for a message before asking the server whether any
// is left for it.
const readWait = 2 * time.Second

func (r *streamReader) Next(ctx context.Context, max int) ([]Event, error) {
	if r.seen >= r.end {
		r.stopIterating()
		return nil, nil
	}
	if r.it == nil {
		it, err := r.cons.Messages(jetstream.PullMaxMessages(max))
		if err != nil {
			return nil, fmt.Errorf("reading stream %s: %w", r.src.Stream, err)
		}
		r.it = it
	}
	out := make([]Event, 0, max)
	for r.seen < r.end && len(out) < max {
		n := len(out)
		var err error
		if out, err = r.iterate(ctx, out, max); err != nil {
			return nil, err
		}
		if len(out) > n {
			break // a batch, or the part of it that came within readWait
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := r.noneLeft(ctx, r.end); err != nil {
			return nil, err
		}
	}
	if r.seen >= r.end {
		// Nothing runs in the background while the rebuild indexes.
		r.stopIterating()
	}
	return out, nil
}

// iterate appends to out the events of the messages that come within readWait, until out
// holds max or the stream's end is read. It waits with one deadline, not a timer per message
// (NextMaxWait makes one per call).
func (r *streamReader) iterate(ctx context.Context, out []Event, max int) ([]Event, error) {
	wait, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	for r.seen < r.end && len(out) < max {
		m, err := r.it.Next(jetstream.NextContext(wait))
		if err != nil && wait.Err() != nil {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading stream %s: %w", r.src.Stream, err)
		}
		ev, ok, err := r.take(m)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, ev)
		}
	}
	return out, nil
}

// take records m as read and returns its event, or false for a message the live consumer
// dead-lettered (it is not part of the projection). A message without a stream sequence
// cannot come from a consumer: it fails the read rather than be skipped unseen.
func (r *streamReader) take(m jetstream.Msg) (Event, bool, error) {
	seq, err := streamSeq(m)
	if err != nil {
		return Event{}, false, fmt.Errorf("reading stream %s: a message without a stream sequence: %w", r.src.Stream, err)
	}
	r.seen = seq
	ev, err := decodeAt(m, seq)
	return ev, err == nil, nil
}

// noneLeft is called when nothing came for a while: when nothing matching the filter is left
// either, the messages up to until are not ours.
func (r *streamReader) noneLeft(ctx context.Context, until uint64) error {
	pending, err := r.pending(ctx)
	if err != nil {
		return err
	}
	if pending == 0 {
		r.seen = max(r.seen, until)
	}
	return nil
}

func (r *streamReader) stopIterating() {
	if r.it != nil {
		r.it.Stop()
		r.it = nil
	}
}

// fetch reads up to max messages with Fetch, stopping once the sequence until is reached.
func (r *streamReader) fetch(ctx context.Context, max int, until uint64) ([]Event, error) {
	if !r.fetching {
		if err := r.openConsumer(ctx); err != nil {
			return nil, err
		}
		r.fetching = true
	}
	var out []Event
	for r.seen < until && len(out) < max {
		// Ask for no more than the sequences left up to until: the fetch then returns as soon
		// as they have arrived instead of waiting out its time-out for a batch that cannot fill
		// (in Finish that wait would be spent holding the live tables' lock).
		n := max - len(out)
		if left := until - r.seen; left < uint64(n) {
			n = int(left)
		}
		batch, err := r.cons.Fetch(n, jetstream.FetchMaxWait(readWait))
		if err != nil {
			return nil, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			ev, ok, err := r.take(m)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, ev)
			}
		}
		if err := batch.Error(); err != nil && !bus.IsFetchTimeout(err) {
			return nil, err
		}
		if got == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err := r.noneLeft(ctx, until); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (r *streamReader) pending(ctx context.Context) (uint64, error) {
	info, err := r.cons.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.NumPending, nil
}

// Lock takes projection_applied before the live tables, in the order the live consumer takes
// them (StreamRunner records an event id there first, then writes the read tables): a consumer
// transaction in flight finishes first and the next one waits for the swap. In the other order
// the swap, holding the read tables, would wait on the ids the consumer had just recorded while
// the consumer waited on the read tables: a deadlock on every attempt while events flow.
func (r *streamReader) Lock(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `LOCK TABLE projection_applied IN EXCLUSIVE MODE`)
	return err
}

// Finish reads the stream up to its last message now (the live tables are locked, so the
// live consumer cannot apply anything past what is read here before the swap), applies it,
// and records the stream sequence it read up to as the projection's watermark: the live
// consumer skips every event at or below it, which the rebuilt tables hold. One row, instead
// of the id of every rebuilt event (a million rows written while the live tables are locked,
// for a long stream); and nothing is recorded unless the swap commits, so a rebuild that fails
// leaves the live consumer as it was.
func (r *streamReader) Finish(ctx context.Context, tx pgx.Tx, projection string, apply func([]Event) error) error {
	end, err := r.src.lastSeq(ctx)
	if err != nil {
		return err
	}
	for r.seen < end {
		evs, err := r.fetch(ctx, 5000, end)
		if err != nil {
			return err
		}
		r.tail = append(r.tail, evs...)
	}
	if len(r.tail) > 0 {
		if err := apply(r.tail); err != nil {
			return err
		}
	}
	return setWatermark(ctx, tx, projection, r.src.Stream, max(end, r.seen))
}

// Close deletes the ordered consumer on the server: left there, it would linger for its
// inactive threshold and show in `streams` as a consumer with pending messages.
func (r *streamReader) Close() {
	r.stopIterating()
	r.deleteConsumer()
}

func (r *streamReader) deleteConsumer() {
	if r.cons == nil {
		return
	}
	info := r.cons.CachedInfo()
	r.cons = nil
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.src.JS.DeleteConsumer(ctx, r.src.Stream, info.Name)
}
