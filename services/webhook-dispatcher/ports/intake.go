package ports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// Held is the set of partitions this dispatcher holds (app.Assigner), which its intakes read
// the event streams for.
type Held struct {
	n int
	// mu is held for reading by an intake while it applies a batch, and for writing by a change
	// of the set, which therefore waits for the batches being applied.
	mu      sync.RWMutex
	parts   map[int]bool
	gen     uint64
	changed chan struct{} // closed and replaced on every change
}

// NewHeld returns the empty set of n partitions.
func NewHeld(n int) *Held {
	return &Held{n: n, parts: map[int]bool{}, changed: make(chan struct{})}
}

// Consume holds partition p until ctx ends: the app.AssignerConfig.Consume of the dispatcher.
// It returns once no batch that read for p is being applied any more, so that what the
// partition's events enqueued is there for the Drain that follows. (The lease is checked by the
// transaction that applies a batch, domain.Advance.)
func (h *Held) Consume(ctx context.Context, p int, _ func() bool) {
	h.set(p, true)
	<-ctx.Done()
	h.set(p, false)
}

func (h *Held) set(p int, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if on {
		h.parts[p] = true
	} else {
		delete(h.parts, p)
	}
	h.gen++
	close(h.changed)
	h.changed = make(chan struct{})
}

// snapshot returns the partitions held, sorted, the set's generation, and a channel closed on
// its next change.
func (h *Held) snapshot() ([]int, uint64, <-chan struct{}) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Sorted(maps.Keys(h.parts)), h.gen, h.changed
}

// PositionStore reads the positions of the partitions (implemented by adapters.Partitions).
type PositionStore interface {
	Positions(ctx context.Context, stream string, partitions []int) (map[int]uint64, error)
	Rewind(ctx context.Context, stream string, created time.Time, last uint64) (int64, error)
}

// IntakeConfig configures an Intake.
type IntakeConfig struct {
	Stream     string // the event stream it reads
	JS         jetstream.JetStream
	Held       *Held
	Positions  PositionStore
	Dispatcher *app.Dispatcher
	DeadLetter *bus.DeadLetterer
	Member     string // this dispatcher's name among the partitions' lease holders
	Log        *slog.Logger
	Metrics    *bus.ConsumerMetrics
	// BatchSize bounds the messages applied at once (default 100).
	BatchSize int
	// Probe tells whether the database answers, after a batch's deliveries failed to be
	// created: if it does, the failure is one event's and the batch is created one event at a
	// time, so that only that event is retried and set aside (see createEach). Without it,
	// every failure is taken for an outage and the batch read again, as before.
	Probe func(ctx context.Context) error
	// MaxFailures is how many times one event's deliveries may fail to be created alone
	// before the event is dead-lettered (default bus.DefaultMaxFailures).
	MaxFailures int
}

// Intake reads one event stream for the partitions this dispatcher holds, with an ordered
// consumer (no acknowledgements, no state on the server), and turns the catalogue events of
// their companies into deliveries. Each batch's deliveries commit with the new position of every
// partition held (domain.Advance), under their leases; a crash, a lost lease or a failed batch
// reads again from the stored positions. A company's events are thus taken in stream order by
// the one dispatcher holding its partition, however many run.
//
// Every dispatcher reads each whole stream once, whatever the partitions it holds: the server
// sends every message to each of them, and each keeps its own companies' events.
type Intake struct {
	cfg  IntakeConfig
	name string // the metrics' consumer label
	log  *slog.Logger
	// backTo, once set by a read that found the stream behind it, is the last sequence the
	// stream holds, to which the next read moves back the positions above it.
	backTo *uint64
	// failures counts, by stream sequence, the events whose deliveries failed to be created
	// alone while the database answered (createEach).
	failures map[uint64]int
}

// NewIntake returns the Intake of cfg.Stream.
func NewIntake(cfg IntakeConfig) *Intake {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = bus.DefaultMaxFailures
	}
	name := durablePrefix + strings.ToLower(cfg.Stream)
	return &Intake{cfg: cfg, name: name, log: cfg.Log.With("intake", cfg.Stream), failures: map[uint64]int{}}
}

// intakeRetry is how long an intake waits after a failed read; batchTimeout bounds the
// handling of one batch (its lookups, its dead letters and its insert), which the end of the
// dispatcher does not interrupt: its deliveries are enqueued once committed, before the
// partition may pass to another dispatcher.
const (
	intakeRetry  = time.Second
	batchTimeout = 5 * time.Second
)

// Run reads until ctx ends.
func (in *Intake) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := in.read(ctx); err != nil && ctx.Err() == nil {
			in.log.Warn("reading the event stream failed; reading again from the stored positions", "err", err)
			sleep(ctx, intakeRetry)
		}
	}
	return nil
}

// reading is the state of one read: the partitions it reads for, their positions, the set's
// generation they were taken at, the last sequence read, and when the positions were last
// stored (and whether the last batches moved them further without storing them).
type reading struct {
	parts   []int
	pos     map[int]uint64
	gen     uint64
	last    uint64
	stored  time.Time
	pending bool
}

// positionEvery is how often at most a read stores its positions after batches that created
// nothing and dead-lettered nothing (and when it waits for messages). Such a batch, read again
// after a crash or by the partition's next holder, creates nothing twice (only, as a later
// endpoint lookup would have, the deliveries of a company that enabled its endpoint meanwhile),
// while storing the position of every batch costs a transaction each: at a tenth of the full
// rate, a third of what the dispatcher spent. A batch that creates deliveries or dead-letters a
// message always stores its position with them.
const positionEvery = 500 * time.Millisecond

// read reads the stream from the least position of the partitions held until it must start
// again: a partition came whose position is behind what was read, or an error.
func (in *Intake) read(ctx context.Context) error {
	parts, gen, changed := in.cfg.Held.snapshot()
	if len(parts) == 0 {
		select {
		case <-ctx.Done():
		case <-changed:
		}
		return nil
	}
	created, err := in.rewind(ctx)
	if err != nil {
		return err
	}
	pos, err := in.cfg.Positions.Positions(ctx, in.cfg.Stream, parts)
	if err != nil {
		return err
	}
	r := &reading{parts: parts, pos: pos, gen: gen, last: slices.Min(slices.Collect(maps.Values(pos))), stored: time.Now()}
	rd, err := bus.ReadOrdered(ctx, in.cfg.JS, in.cfg.Stream, r.last, created,
		bus.OrderedOptions{BatchSize: in.cfg.BatchSize, Logger: in.log})
	if err != nil {
		return err
	}
	defer rd.Stop()
	for ctx.Err() == nil {
		msgs, err := rd.Next(ctx)
		var back *bus.WentBackError
		switch {
		case errors.As(err, &back):
			in.backTo = &back.Last
			return nil
		case errors.Is(err, bus.ErrStreamRecreated), errors.Is(err, bus.ErrReadAgain):
			return nil
		case err != nil:
			return err
		}
		again, err := in.apply(ctx, r, msgs)
		if err != nil || again {
			return err
		}
	}
	return nil
}

// rewind moves back the positions the stream no longer backs (adapters.Partitions.Rewind): it
// was created again by an operator, or, as the last read found (backTo), lost its last messages
// with a server, and the messages it takes next get those sequences again, and are new.
// (JetStream does the same for a durable consumer whose state is ahead of its stream.)
func (in *Intake) rewind(ctx context.Context) (time.Time, error) {
	created, lastSeq, err := bus.StreamCreated(ctx, in.cfg.JS, in.cfg.Stream)
	if err != nil {
		return time.Time{}, err
	}
	last := uint64(math.MaxInt64) // no position is above it
	if in.backTo != nil {
		last = *in.backTo
	}
	n, err := in.cfg.Positions.Rewind(ctx, in.cfg.Stream, created, last)
	if err != nil {
		return time.Time{}, err
	}
	in.backTo = nil
	if n > 0 {
		in.log.Error("the stream was created again, or went back behind the positions read: reading its new messages",
			"last_seq", lastSeq, "created", created, "partitions", n)
	}
	return created, nil
}

// apply applies a batch (msgs may be empty: then it only follows the set of partitions). It
// reports again when the read must start over from the stored positions.
func (in *Intake) apply(ctx context.Context, r *reading, msgs []jetstream.Msg) (again bool, err error) {
	in.cfg.Held.mu.RLock()
	defer in.cfg.Held.mu.RUnlock()
	if in.cfg.Held.gen != r.gen {
		if again, err := in.follow(ctx, r); err != nil || again {
			return again, err
		}
	}
	if len(msgs) == 0 {
		return false, in.store(ctx, r)
	}
	in.cfg.Metrics.Fetched(in.name, len(msgs), 0)
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	mine, seqs, last, err := in.pick(r, msgs)
	if err != nil {
		return false, err
	}
	verdicts, err := screen(hctx, in.cfg.Dispatcher, mine)
	if err != nil {
		return false, err
	}
	var news []domain.NewDelivery
	var from []int // the index in mine of each of news
	rejected := false
	for i, v := range verdicts {
		switch {
		case v.reject != nil:
			rejected = true
			if err := deadLetter(hctx, in.cfg.DeadLetter, mine[i], v.reject); err != nil {
				return false, fmt.Errorf("dead-lettering %s %d: %w", in.cfg.Stream, seqs[i], err)
			}
			in.log.Warn("message dead-lettered", "subject", mine[i].Subject(), "seq", seqs[i], "reason", v.reject)
			in.cfg.Metrics.Add(in.name, bus.OutcomeDeadLettered, 1)
		case v.news != nil:
			news = append(news, *v.news)
			from = append(from, i)
		}
	}
	for _, p := range r.parts {
		r.pos[p] = max(r.pos[p], last)
	}
	r.last, r.pending = last, true
	if len(news) == 0 && !rejected && time.Since(r.stored) < positionEvery {
		in.cfg.Metrics.Add(in.name, bus.OutcomeAcked, len(msgs))
		return false, nil
	}
	claims, err := in.cfg.Dispatcher.Create(hctx, news, domain.Advance{Member: in.cfg.Member, Stream: in.cfg.Stream,
		Partitions: r.parts, Seq: last})
	if err != nil && len(news) > 0 && !errors.Is(err, domain.ErrPartitionLost) && in.answering(hctx) {
		claims, err = in.createEach(hctx, r, news, from, mine, seqs, last, err)
	}
	if err != nil {
		return false, err
	}
	r.stored, r.pending = time.Now(), false
	in.cfg.Metrics.Add(in.name, bus.OutcomeAcked, len(msgs))
	in.enqueue(hctx, claims)
	return false, nil
}

// createEach creates the deliveries of a batch whose creation as a whole failed with err while
// the database answered: one event at a time, in stream order, each with the position of its
// message, so that one event that can never be stored (whatever the cause) does not stop every
// company's webhooks. An event whose creation fails alone is read again (the read starts over
// from the stored positions, which include the events created before it) up to MaxFailures
// times, then dead-lettered with the reason; an error that is permanent (bus.IsPermanent)
// dead-letters it at once. It returns an error, with what was created committed, when the read
// must start over.
func (in *Intake) createEach(ctx context.Context, r *reading, news []domain.NewDelivery, from []int,
	mine []jetstream.Msg, seqs []uint64, last uint64, err error) ([]domain.Claim, error) {
	in.log.Warn("creating a batch's deliveries failed while the database answers; creating them one event at a time",
		"events", len(news), "err", err)
	var claims []domain.Claim
	for j, n := range news {
		i := from[j]
		c, err := in.cfg.Dispatcher.Create(ctx, []domain.NewDelivery{n}, domain.Advance{Member: in.cfg.Member,
			Stream: in.cfg.Stream, Partitions: r.parts, Seq: seqs[i]})
		if err == nil {
			delete(in.failures, seqs[i])
			claims = append(claims, c...)
			continue
		}
		if errors.Is(err, domain.ErrPartitionLost) || !in.answering(ctx) {
			in.enqueue(ctx, claims)
			return nil, err
		}
		in.failures[seqs[i]]++
		failures := in.failures[seqs[i]]
		if !bus.IsPermanent(err) && failures < in.cfg.MaxFailures {
			in.enqueue(ctx, claims)
			return nil, fmt.Errorf("creating the deliveries of %s %d (failure %d of %d): %w",
				in.cfg.Stream, seqs[i], failures, in.cfg.MaxFailures, err)
		}
		reason := err
		if !bus.IsPermanent(err) {
			reason = bus.Exhausted(failures, err)
		}
		if err := deadLetter(ctx, in.cfg.DeadLetter, mine[i], reason); err != nil {
			in.enqueue(ctx, claims)
			return nil, fmt.Errorf("dead-lettering %s %d: %w", in.cfg.Stream, seqs[i], err)
		}
		delete(in.failures, seqs[i])
		in.log.Warn("message dead-lettered", "subject", mine[i].Subject(), "seq", seqs[i], "reason", reason)
		in.cfg.Metrics.Add(in.name, bus.OutcomeDeadLettered, 1)
	}
	// The positions past the last event (messages that made no delivery).
	c, err := in.cfg.Dispatcher.Create(ctx, nil, domain.Advance{Member: in.cfg.Member, Stream: in.cfg.Stream,
		Partitions: r.parts, Seq: last})
	return append(claims, c...), err
}

// enqueue hands claims created before a failure to their partitions' lanes.
func (in *Intake) enqueue(ctx context.Context, claims []domain.Claim) {
	byPartition := map[int][]domain.Claim{}
	for _, c := range claims {
		p := PartitionOf(c.CompanyID, in.cfg.Held.n)
		byPartition[p] = append(byPartition[p], c)
	}
	for p, cs := range byPartition {
		in.cfg.Dispatcher.EnqueueFrom(ctx, p, cs)
	}
}

// answering reports whether the database answers (IntakeConfig.Probe); without a probe, no.
func (in *Intake) answering(ctx context.Context) bool {
	if in.cfg.Probe == nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return in.cfg.Probe(pctx) == nil
}

// store stores the positions the read has moved without storing them, if any.
func (in *Intake) store(ctx context.Context, r *reading) error {
	if !r.pending {
		return nil
	}
	if _, err := in.cfg.Dispatcher.Create(ctx, nil, domain.Advance{Member: in.cfg.Member, Stream: in.cfg.Stream,
		Partitions: r.parts, Seq: r.last}); err != nil {
		return err
	}
	r.stored, r.pending = time.Now(), false
	return nil
}

// follow takes the partitions held now (the caller holds Held.mu for reading). A partition
// given up is simply no longer read for; one taken is read for from its stored position, which
// needs the read to start over when that position is behind what was read.
func (in *Intake) follow(ctx context.Context, r *reading) (again bool, err error) {
	parts := slices.Sorted(maps.Keys(in.cfg.Held.parts))
	if len(parts) == 0 {
		return true, nil
	}
	pos, err := in.cfg.Positions.Positions(ctx, in.cfg.Stream, parts)
	if err != nil {
		return false, err
	}
	for _, p := range parts {
		if pos[p] < r.last {
			return true, nil
		}
	}
	r.parts, r.pos, r.gen = parts, pos, in.cfg.Held.gen
	return false, nil
}

// pick keeps the messages of msgs that are events of the partitions read for and above their
// positions, with their stream sequences, and returns the batch's last sequence.
func (in *Intake) pick(r *reading, msgs []jetstream.Msg) (mine []jetstream.Msg, seqs []uint64, last uint64, err error) {
	for _, m := range msgs {
		md, err := m.Metadata()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("reading %s: %w", in.cfg.Stream, err)
		}
		seq := md.Sequence.Stream
		last = max(last, seq)
		company := companyOf(m.Subject())
		if company == "" {
			// A malformed subject: screening rejects it, in the partition that reads a
			// company-less subject (the first one), so that exactly one dispatcher does.
			if !slices.Contains(r.parts, 0) || seq <= r.pos[0] {
				continue
			}
		} else if p := PartitionOf(company, in.cfg.Held.n); !slices.Contains(r.parts, p) || seq <= r.pos[p] {
			continue
		}
		mine, seqs = append(mine, m), append(seqs, seq)
	}
	return mine, seqs, last, nil
}

// companyOf is the company token of an event subject (family.env.company.type), "" for a
// subject of another shape.
func companyOf(subject string) string {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 || parts[2] == "" {
		return ""
	}
	return parts[2]
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// IntakesFor returns an Intake of each source stream with cfg (its Stream set).
func IntakesFor(cfg IntakeConfig) []*Intake {
	var out []*Intake
	for _, st := range Sources() {
		c := cfg
		c.Stream = st.Name
		out = append(out, NewIntake(c))
	}
	return out
}
