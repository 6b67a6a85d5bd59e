package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

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
}

// Next reads gap-safely: nothing can commit later behind what it returns.
func (r *storeReader) Next(ctx context.Context, max int) ([]Event, error) {
	recs, err := r.store.ReadAll(ctx, r.store.DB(), r.pos, max)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	evs, err := decodeRecorded(recs)
	if err != nil {
		return nil, err
	}
	r.pos = recs[len(recs)-1].Position
	return evs, nil
}

// Lock keeps appenders out of the store until the swap commits (appends in flight finish
// first), so that the events Finish reads are all there will be up to the swap.
func (r *storeReader) Lock(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `LOCK TABLE events IN EXCLUSIVE MODE`)
	return err
}

// Finish applies the rest of the store and moves a store-fed projection's checkpoint (if it
// has one) past it.
func (r *storeReader) Finish(ctx context.Context, tx pgx.Tx, projection string, apply func([]Event) error) error {
	pos := r.pos
	for {
		recs, err := r.store.ReadVisible(ctx, tx, pos, 5000)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		evs, err := decodeRecorded(recs)
		if err != nil {
			return err
		}
		if err := apply(evs); err != nil {
			return err
		}
		pos = recs[len(recs)-1].Position
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
	// Subjects filters the stream; empty means all of it.
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

// Open creates an ordered consumer from the stream's first message.
func (s StreamSource) Open(ctx context.Context) (SourceReader, error) {
	end, err := s.lastSeq(ctx)
	if err != nil {
		return nil, err
	}
	cons, err := s.JS.OrderedConsumer(ctx, s.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: s.Subjects, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", s.Stream, err)
	}
	return &streamReader{src: s, cons: cons, end: end}, nil
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

type streamReader struct {
	src  StreamSource
	cons jetstream.Consumer
	end  uint64 // the stream's last sequence when opened
	seen uint64 // the last sequence read
	ids  []uuid.UUID
	seqs []int64
	tail []Event // events read by Finish, kept to be applied again if the swap is retried
}

func (r *streamReader) Next(ctx context.Context, max int) ([]Event, error) {
	if r.seen >= r.end {
		return nil, nil
	}
	return r.fetch(ctx, max, r.end)
}

// fetch reads up to max messages, stopping once the sequence until is reached.
func (r *streamReader) fetch(ctx context.Context, max int, until uint64) ([]Event, error) {
	var out []Event
	for r.seen < until && len(out) < max {
		batch, err := r.cons.Fetch(max-len(out), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			r.seen = md.Sequence.Stream
			ev, err := decodeMsg(m)
			if err != nil {
				continue // dead-lettered by the live consumer: not part of the projection
			}
			out = append(out, ev)
			r.ids = append(r.ids, ev.ID)
			r.seqs = append(r.seqs, int64(ev.StreamSeq))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			return nil, err
		}
		if got == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// Nothing came: when nothing matching the filter is left either, the messages up
			// to until are not ours.
			pending, err := r.pending(ctx)
			if err != nil {
				return nil, err
			}
			if pending == 0 {
				r.seen = until
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

func (r *streamReader) Lock(context.Context, pgx.Tx) error { return nil }

// Finish reads the stream up to its last message now (the live tables are locked, so the
// live consumer cannot apply anything past what is read here before the swap), applies it,
// and records every rebuilt event as applied so that the live consumer skips them.
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
	return markAppliedIDs(ctx, tx, projection, r.ids, r.seqs)
}

func (r *streamReader) Close() {}
