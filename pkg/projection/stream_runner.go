package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
)

// DeadLetterFunc stores a message that can never be applied in the dead-letter stream.
type DeadLetterFunc = bus.DeadLetterFunc

// StreamRunner feeds a projector from a durable JetStream consumer (created up front by the
// bus), through a bus.BatchConsumer. Each fetched batch is applied in one transaction that also
// records the applied event ids; only then are the messages acknowledged. A redelivered message
// is recognised by its event id and changes nothing; one that cannot be decoded, or that the
// projector refuses as permanent (ErrPermanent), goes to the dead-letter stream and never
// blocks the messages behind it.
type StreamRunner struct {
	*bus.BatchConsumer[Event]
}

// StreamRunnerOptions configures a StreamRunner.
type StreamRunnerOptions struct {
	BatchSize  int
	MaxWait    time.Duration
	DeadLetter DeadLetterFunc
	Logger     *slog.Logger
	// Metrics, when set, counts the messages settled (bus_consumer_messages_total).
	Metrics *bus.ConsumerMetrics
	// AfterApply, when set, runs after each committed batch, before its acknowledgements.
	AfterApply func(ctx context.Context)
}

// NewStreamRunner returns a runner applying the messages of consumer (durable name durable)
// to p's tables in db.
func NewStreamRunner(db *pgxpool.Pool, consumer jetstream.Consumer, durable string, p Projector, o StreamRunnerOptions) (*StreamRunner, error) {
	var stream string
	if info := consumer.CachedInfo(); info != nil {
		stream = info.Stream
	}
	if stream == "" {
		return nil, errors.New("projection: the consumer's stream is unknown")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	h := &streamHandler{db: db, stream: stream, projector: p}
	c, err := bus.NewBatchConsumer[Event](consumer, durable, h, bus.BatchOptions{
		BatchSize: o.BatchSize, MaxWait: o.MaxWait, DeadLetter: o.DeadLetter, Metrics: o.Metrics,
		AfterApply: o.AfterApply, Logger: o.Logger.With("projection", p.Name()),
		IsPermanent: func(err error) bool { return errors.Is(err, ErrPermanent) },
	})
	if err != nil {
		return nil, fmt.Errorf("projection %s: %w", p.Name(), err)
	}
	return &StreamRunner{c}, nil
}

// streamHandler is the bus.BatchHandler of a StreamRunner.
type streamHandler struct {
	db        *pgxpool.Pool
	stream    string // the consumer's stream, whose rebuild watermark the runner honours
	projector Projector
}

// Probe implements bus.Prober: the projection's database answers.
func (h *streamHandler) Probe(ctx context.Context) error { return h.db.Ping(ctx) }

// Screen decodes each message into an Event; one that cannot be decoded is rejected.
func (h *streamHandler) Screen(_ context.Context, msgs []jetstream.Msg) ([]bus.Verdict[Event], error) {
	out := make([]bus.Verdict[Event], len(msgs))
	for i, m := range msgs {
		ev, err := decodeMsg(m)
		if err != nil {
			out[i] = bus.Reject[Event](err)
			continue
		}
		out[i] = bus.Apply(ev)
	}
	return out, nil
}

// SkipObserver is implemented by a projector that wants to hear of the events a StreamRunner
// skipped because they had been applied before: redelivered ones, and those a rebuild applied
// in its swap (it records them as applied so that the live consumer skips them). It is called
// after the batch's transaction committed. A projector that announces what it applied (for
// read-your-writes waiters) announces these too: nobody else will.
type SkipObserver interface {
	Skipped(evs []Event)
}

// Apply applies the not-yet-applied events of the batch in one transaction.
func (h *streamHandler) Apply(ctx context.Context, batch []Event) error {
	var skipped []Event
	err := pgx.BeginFunc(ctx, h.db, func(tx pgx.Tx) error {
		if l, ok := h.projector.(Locker); ok {
			if err := l.Lock(ctx, tx, batch); err != nil {
				return err
			}
		}
		fresh, err := h.markApplied(ctx, tx, batch)
		if err != nil {
			return err
		}
		skipped = skippedOf(batch, fresh)
		return applyAll(ctx, tx, h.projector, fresh)
	})
	if o, ok := h.projector.(SkipObserver); ok && err == nil && len(skipped) > 0 {
		o.Skipped(skipped)
	}
	return err
}

// skippedOf returns the events of batch that are not in fresh, in batch order.
func skippedOf(batch []Event, fresh []Event) []Event {
	if len(fresh) == len(batch) {
		return nil
	}
	applied := make(map[uuid.UUID]bool, len(fresh))
	for _, ev := range fresh {
		applied[ev.ID] = true
	}
	var out []Event
	for _, ev := range batch {
		if !applied[ev.ID] {
			out = append(out, ev)
		}
	}
	return out
}

// markApplied records the batch's event ids and returns the events not applied before, in
// batch order. Events at or below the stream's watermark were applied by a rebuild (its swap
// recorded how far it read instead of every id): they are recorded too, and skipped. The
// watermark is read by a second statement after the insert, which waits for a swap in
// progress (it holds projection_applied): under READ COMMITTED that statement sees the
// watermark the swap committed.
func (h *streamHandler) markApplied(ctx context.Context, tx pgx.Tx, batch []Event) ([]Event, error) {
	ids := make([]uuid.UUID, len(batch))
	seqs := make([]int64, len(batch))
	for i, ev := range batch {
		ids[i], seqs[i] = ev.ID, int64(ev.StreamSeq)
	}
	var (
		fresh     = map[uuid.UUID]bool{}
		watermark int64
	)
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO projection_applied (projection, event_id, stream_seq)
        SELECT $1, id, seq FROM unnest($2::uuid[], $3::bigint[]) AS t(id, seq)
        ON CONFLICT DO NOTHING RETURNING event_id`, h.projector.Name(), ids, seqs).Query(func(rows pgx.Rows) error {
		var id uuid.UUID
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			fresh[id] = true
			return nil
		})
		return err
	})
	b.Queue(watermarkQuery, h.projector.Name(), h.stream).QueryRow(func(row pgx.Row) error {
		return row.Scan(&watermark)
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("recording applied events: %w", err)
	}
	out := make([]Event, 0, len(fresh))
	for _, ev := range batch {
		if fresh[ev.ID] {
			if int64(ev.StreamSeq) > watermark {
				out = append(out, ev)
			}
			delete(fresh, ev.ID) // the same event twice in one batch applies once
		}
	}
	return out, nil
}

func decodeMsg(m jetstream.Msg) (Event, error) {
	seq, err := streamSeq(m)
	if err != nil {
		return Event{}, fmt.Errorf("%w: not a JetStream message: %v", events.ErrUndecodable, err)
	}
	return decodeAt(m, seq)
}

// streamSeq returns the stream sequence of a message from a JetStream consumer, read from its
// reply subject: $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>,
// or with <domain>.<account hash> after $JS.ACK. and a last token added (the current form). It
// allocates nothing, where Metadata allocates and parses every token; a reply it does not know
// is left to Metadata.
func streamSeq(m jetstream.Msg) (uint64, error) {
	reply := m.Reply()
	if rest, ok := strings.CutPrefix(reply, "$JS.ACK."); ok {
		tokens := strings.Count(rest, ".") + 3
		at := -1 // the stream sequence's token in rest
		switch {
		case tokens == 9:
			at = 3
		case tokens >= 11:
			at = 5
		}
		for ; at > 0; at-- {
			_, rest, _ = strings.Cut(rest, ".")
		}
		if at == 0 {
			token, _, _ := strings.Cut(rest, ".")
			if seq, err := strconv.ParseUint(token, 10, 64); err == nil {
				return seq, nil
			}
		}
	}
	md, err := m.Metadata()
	if err != nil {
		return 0, err
	}
	return md.Sequence.Stream, nil
}

// decodeAt decodes m, whose stream sequence the caller has read from its metadata.
func decodeAt(m jetstream.Msg, streamSeq uint64) (Event, error) {
	// nats.go gives every message a payload of its own: the event may keep pointing into it.
	msg, spec, err := events.DecodeOwned(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		return Event{}, err
	}
	meta := events.Meta(msg)
	id, err := uuid.Parse(meta.GetEventId())
	if err != nil {
		return Event{}, fmt.Errorf("%w: event id %q", events.ErrInvalid, meta.GetEventId())
	}
	return Event{ID: id, Type: spec.Type, Subject: m.Subject(), Msg: msg,
		OccurredAt: meta.GetOccurredAt().AsTime(), StreamSeq: streamSeq}, nil
}
