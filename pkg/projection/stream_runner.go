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

// DeadLetterFunc sends a message that can never be applied to the dead-letter stream, with
// the reason. It must return only once the dead letter is stored.
type DeadLetterFunc func(ctx context.Context, consumer string, msg jetstream.Msg, reason error) error

// StreamRunner feeds a projector from a durable JetStream consumer (created up front by the
// bus). Each fetched batch is applied in one transaction that also records the applied event
// ids; only then are the messages acknowledged. A redelivered message is recognised by its
// event id and changes nothing; one that cannot be decoded, or that the projector refuses as
// permanent, goes to the dead-letter stream and never blocks the messages behind it.
type StreamRunner struct {
	db         *pgxpool.Pool
	consumer   jetstream.Consumer
	durable    string
	stream     string // the consumer's stream, whose rebuild watermark the runner honours
	projector  Projector
	deadLetter DeadLetterFunc
	batchSize  int
	maxWait    time.Duration
	log        *slog.Logger
	metrics    *bus.ConsumerMetrics
}

// StreamRunnerOptions configures a StreamRunner.
type StreamRunnerOptions struct {
	BatchSize  int
	MaxWait    time.Duration
	DeadLetter DeadLetterFunc
	Logger     *slog.Logger
	// Metrics, when set, counts the messages settled (bus_consumer_messages_total).
	Metrics *bus.ConsumerMetrics
}

// NewStreamRunner returns a runner applying the messages of consumer (durable name durable)
// to p's tables in db.
func NewStreamRunner(db *pgxpool.Pool, consumer jetstream.Consumer, durable string, p Projector, o StreamRunnerOptions) (*StreamRunner, error) {
	if o.DeadLetter == nil {
		return nil, errors.New("projection: a dead-letter function is required")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.MaxWait <= 0 {
		o.MaxWait = time.Second
	}
	// A fetch larger than the consumer's MaxAckPending would stop at that bound and wait out
	// MaxWait every time.
	if info := consumer.CachedInfo(); info != nil && info.Config.MaxAckPending > 0 && o.BatchSize > info.Config.MaxAckPending {
		o.BatchSize = info.Config.MaxAckPending
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var stream string
	if info := consumer.CachedInfo(); info != nil {
		stream = info.Stream
	}
	if stream == "" {
		return nil, errors.New("projection: the consumer's stream is unknown")
	}
	return &StreamRunner{db: db, consumer: consumer, durable: durable, stream: stream, projector: p, deadLetter: o.DeadLetter,
		batchSize: o.BatchSize, maxWait: o.MaxWait, log: o.Logger.With("projection", p.Name()), metrics: o.Metrics}, nil
}

// Run fetches and applies batches until ctx ends.
func (r *StreamRunner) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if _, err := r.Step(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("projection batch failed; messages will be redelivered", "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	return nil
}

// Step takes the messages available (waiting up to MaxWait for a first one) and applies them;
// it returns the number of messages it took off the consumer.
func (r *StreamRunner) Step(ctx context.Context) (int, error) {
	msgs, err := bus.FetchAvailable(ctx, r.consumer, r.batchSize, r.maxWait)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	return len(msgs), r.handle(ctx, msgs)
}

type pending struct {
	msg jetstream.Msg
	ev  Event
}

func (r *StreamRunner) handle(ctx context.Context, msgs []jetstream.Msg) error {
	good := make([]pending, 0, len(msgs))
	for _, m := range msgs {
		ev, err := decodeMsg(m)
		if err != nil {
			if err := r.reject(ctx, m, err); err != nil {
				return err
			}
			continue
		}
		good = append(good, pending{msg: m, ev: ev})
	}
	if len(good) == 0 {
		return nil
	}
	err := r.commit(ctx, good)
	if err == nil {
		r.ack(good)
		return nil
	}
	if !errors.Is(err, ErrPermanent) {
		r.nak(good)
		return err
	}
	// One event of the batch can never be applied: apply one by one, so that only it goes to
	// dead letter.
	for i, p := range good {
		err := r.commit(ctx, good[i:i+1])
		switch {
		case err == nil:
			r.ack(good[i : i+1])
		case errors.Is(err, ErrPermanent):
			if err := r.reject(ctx, p.msg, err); err != nil {
				r.nak(good[i+1:])
				return err
			}
		default:
			r.nak(good[i:])
			return err
		}
	}
	return nil
}

// SkipObserver is implemented by a projector that wants to hear of the events a StreamRunner
// skipped because they had been applied before: redelivered ones, and those a rebuild applied
// in its swap (it records them as applied so that the live consumer skips them). It is called
// after the batch's transaction committed. A projector that announces what it applied (for
// read-your-writes waiters) announces these too: nobody else will.
type SkipObserver interface {
	Skipped(evs []Event)
}

// commit applies the not-yet-applied events of the batch in one transaction.
func (r *StreamRunner) commit(ctx context.Context, batch []pending) error {
	var skipped []Event
	err := pgx.BeginFunc(ctx, r.db, func(tx pgx.Tx) error {
		if l, ok := r.projector.(Locker); ok {
			evs := make([]Event, len(batch))
			for i, p := range batch {
				evs[i] = p.ev
			}
			if err := l.Lock(ctx, tx, evs); err != nil {
				return err
			}
		}
		fresh, err := r.markApplied(ctx, tx, batch)
		if err != nil {
			return err
		}
		skipped = skippedOf(batch, fresh)
		return applyAll(ctx, tx, r.projector, fresh)
	})
	if o, ok := r.projector.(SkipObserver); ok && err == nil && len(skipped) > 0 {
		o.Skipped(skipped)
	}
	return err
}

// skippedOf returns the events of batch that are not in fresh, in batch order.
func skippedOf(batch []pending, fresh []Event) []Event {
	if len(fresh) == len(batch) {
		return nil
	}
	applied := make(map[uuid.UUID]bool, len(fresh))
	for _, ev := range fresh {
		applied[ev.ID] = true
	}
	var out []Event
	for _, p := range batch {
		if !applied[p.ev.ID] {
			out = append(out, p.ev)
		}
	}
	return out
}

func (r *StreamRunner) ack(batch []pending) {
	r.metrics.Add(r.durable, bus.OutcomeAcked, len(batch))
	for _, p := range batch {
		if err := p.msg.Ack(); err != nil {
			// The effect is committed; a redelivery will be recognised and skipped.
			r.log.Warn("ack failed after commit", "event_id", p.ev.ID, "err", err)
		}
	}
}

func (r *StreamRunner) nak(batch []pending) {
	r.metrics.Add(r.durable, bus.OutcomeNacked, len(batch))
	for _, p := range batch {
		_ = p.msg.NakWithDelay(time.Second)
	}
}

// markApplied records the batch's event ids and returns the events not applied before, in
// batch order. Events at or below the stream's watermark were applied by a rebuild (its swap
// recorded how far it read instead of every id): they are recorded too, and skipped. The
// watermark is read by a second statement after the insert, which waits for a swap in
// progress (it holds projection_applied): under READ COMMITTED that statement sees the
// watermark the swap committed.
func (r *StreamRunner) markApplied(ctx context.Context, tx pgx.Tx, batch []pending) ([]Event, error) {
	ids := make([]uuid.UUID, len(batch))
	seqs := make([]int64, len(batch))
	for i, p := range batch {
		ids[i], seqs[i] = p.ev.ID, int64(p.ev.StreamSeq)
	}
	var (
		fresh     = map[uuid.UUID]bool{}
		watermark int64
	)
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO projection_applied (projection, event_id, stream_seq)
        SELECT $1, id, seq FROM unnest($2::uuid[], $3::bigint[]) AS t(id, seq)
        ON CONFLICT DO NOTHING RETURNING event_id`, r.projector.Name(), ids, seqs).Query(func(rows pgx.Rows) error {
		var id uuid.UUID
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			fresh[id] = true
			return nil
		})
		return err
	})
	b.Queue(watermarkQuery, r.projector.Name(), r.stream).QueryRow(func(row pgx.Row) error {
		return row.Scan(&watermark)
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("recording applied events: %w", err)
	}
	out := make([]Event, 0, len(fresh))
	for _, p := range batch {
		if fresh[p.ev.ID] {
			if int64(p.ev.StreamSeq) > watermark {
				out = append(out, p.ev)
			}
			delete(fresh, p.ev.ID) // the same event twice in one batch applies once
		}
	}
	return out, nil
}

func (r *StreamRunner) reject(ctx context.Context, m jetstream.Msg, reason error) error {
	if err := r.deadLetter(ctx, r.durable, m, reason); err != nil {
		_ = m.NakWithDelay(time.Second)
		return fmt.Errorf("dead-lettering %s: %w", m.Subject(), err)
	}
	r.log.Warn("message dead-lettered", "subject", m.Subject(), "reason", reason)
	r.metrics.Add(r.durable, bus.OutcomeDeadLettered, 1)
	return m.Ack()
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
