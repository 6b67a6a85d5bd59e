package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
)

// Relay publishes a store's events to JetStream. Create it with New and call Run.
type Relay struct {
	store   *eventstore.Store
	js      jetstream.JetStream
	cfg     Config
	log     *slog.Logger
	metrics *metrics

	cp        Checkpoint
	lastMsgID string // Nats-Msg-Id of the stream's last message: the next publish expects it

	holder string      // this process in relay_leases
	lease  *leadership // while leading: the token that fences writes, and whether it still holds
}

// New returns a relay from store to the JetStream stream cfg.Stream.
func New(store *eventstore.Store, js jetstream.JetStream, cfg Config) (*Relay, error) {
	if cfg.Name == "" || cfg.Stream == "" {
		return nil, errors.New("relay: name and stream are required")
	}
	cfg.defaults()
	if err := cfg.Lease.check(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer, cfg.Name)
	if err != nil {
		return nil, err
	}
	return &Relay{store: store, js: js, cfg: cfg, log: cfg.Logger.With("relay", cfg.Name), metrics: m, holder: holderID()}, nil
}

// Run relays until ctx ends. It first waits to become the store's active relay (one replica
// at a time, holding the lease), and stops, and waits again, when it cannot renew its lease.
func (r *Relay) Run(ctx context.Context) error {
	for {
		err := r.lead(ctx)
		if ctx.Err() != nil {
			return nil
		}
		r.log.Warn("relay lost leadership or failed; retrying", "err", err)
		if !sleep(ctx, r.cfg.RetryBackoff) {
			return nil
		}
	}
}

// lead relays while holding the lease.
func (r *Relay) lead(ctx context.Context) error {
	l, err := acquireLeadership(ctx, r.store, r.cfg.Name, r.holder, r.cfg.Lease)
	if err != nil {
		return err
	}
	r.lease = l
	defer func() { l.release(); r.lease = nil }()
	r.metrics.leader.Set(1)
	defer r.metrics.leader.Set(0)
	r.log.Info("relay active", "lease_token", l.token)
	err = r.relay(l.ctx)
	if l.ctx.Err() != nil && ctx.Err() == nil {
		return context.Cause(l.ctx) // why the lease ended says more than "context canceled"
	}
	return err
}

// held tells whether the relay may publish: it holds a valid lease, or runs outside Run (tests
// drive rounds by hand).
func (r *Relay) held() bool { return r.lease == nil || r.lease.held() }

// token is the fencing token of the relay's lease (0 outside Run).
func (r *Relay) token() int64 {
	if r.lease == nil {
		return 0
	}
	return r.lease.token
}

// pipelineDepth is how many published batches may await their acknowledgements at once.
const pipelineDepth = 3

// inflight is a batch sent to JetStream whose acknowledgements are not all in yet.
type inflight struct {
	batch   []eventstore.Recorded
	futures []jetstream.PubAckFuture
	sendErr error
	started time.Time
}

// relay is the main loop of an active relay. Batches are pipelined: while the acknowledgements
// of up to pipelineDepth batches are outstanding the next one is read and sent, chained to the
// last message sent (Nats-Expected-Last-Msg-Id), so a failure anywhere refuses everything after
// it and the stream stays a prefix of the store. The checkpoint advances batch by batch, in
// order, as acknowledgements complete; any failure drains what is in flight and resynchronises
// from the stream.
func (r *Relay) relay(ctx context.Context) error {
	if err := r.resync(ctx); err != nil {
		return err
	}
	var queue []*inflight
	sentPos, prev := r.cp.Position, r.lastMsgID
	for {
		if len(queue) < pipelineDepth && (len(queue) == 0 || r.fullAndSent(queue[len(queue)-1])) {
			batch, err := r.store.ReadAll(ctx, r.store.DB(), sentPos, r.cfg.BatchSize)
			if err != nil {
				r.drain(ctx, queue)
				return err
			}
			if len(batch) > 0 {
				f := r.send(batch, prev)
				queue = append(queue, f)
				sentPos, prev = batch[len(batch)-1].Position, batch[len(batch)-1].ID.String()
				continue
			}
		}
		if len(queue) == 0 {
			if !sleep(ctx, r.cfg.PollInterval) {
				return ctx.Err()
			}
			continue
		}
		head := queue[0]
		queue = queue[1:]
		if err := r.complete(ctx, head); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.drain(ctx, queue)
			queue = nil
			r.metrics.failures.Inc()
			r.log.Warn("relay round failed; resynchronising from the stream", "err", err, "events", len(head.batch))
			if !sleep(ctx, r.cfg.RetryBackoff) {
				return ctx.Err()
			}
			if err := r.resync(ctx); err != nil {
				return err
			}
			sentPos, prev = r.cp.Position, r.lastMsgID
		}
	}
}

// fullAndSent tells whether more may be read behind f: f was a full batch (a short one means
// the relay has caught up) and was sent without error.
func (r *Relay) fullAndSent(f *inflight) bool {
	return f.sendErr == nil && len(f.batch) >= r.cfg.BatchSize
}

// complete waits for the acknowledgements of f and advances the checkpoint past it.
func (r *Relay) complete(ctx context.Context, f *inflight) error {
	lastSeq, err := r.awaitAcks(ctx, f.futures)
	if f.sendErr != nil {
		return f.sendErr
	}
	if err != nil {
		return err
	}
	batch := f.batch
	next := Checkpoint{Position: batch[len(batch)-1].Position, StreamSeq: lastSeq}
	if err := saveCheckpoint(ctx, r.store.DB(), r.cfg.Name, r.token(), r.cp, next); err != nil {
		return err
	}
	r.cp = next
	r.lastMsgID = batch[len(batch)-1].ID.String()
	r.metrics.relayed.Add(float64(len(batch)))
	r.metrics.roundSeconds.Observe(time.Since(f.started).Seconds())
	r.metrics.lag.Set(time.Since(batch[len(batch)-1].RecordedAt).Seconds())
	return nil
}

// drain waits for every outstanding acknowledgement of queue (up to AckTimeout each batch),
// so that none lands after the resynchronisation has read the stream.
func (r *Relay) drain(ctx context.Context, queue []*inflight) {
	for _, f := range queue {
		_, _ = r.awaitAcks(ctx, f.futures)
	}
}

// round publishes one batch and advances the checkpoint past it.
func (r *Relay) round(ctx context.Context, batch []eventstore.Recorded) error {
	return r.complete(ctx, r.send(batch, r.lastMsgID))
}

// publish sends the batch as one chain after the last relayed message and waits for every
// acknowledgement. It returns the stream sequence of the last message.
func (r *Relay) publish(ctx context.Context, batch []eventstore.Recorded) (uint64, error) {
	f := r.send(batch, r.lastMsgID)
	lastSeq, ackErr := r.awaitAcks(ctx, f.futures)
	if f.sendErr != nil {
		return 0, f.sendErr
	}
	return lastSeq, ackErr
}

// send publishes batch asynchronously, each message expecting its predecessor (prev for the
// first) as the stream's last message id. It stops at the first message it cannot send, and
// before any message once the lease is no longer known to be valid: a leader that wakes from a
// freeze sends nothing more. (What it had handed to the connection before the freeze may still
// reach the server after a takeover; the chain admits it only if it is exactly what the stream
// lacks next, so the stream stays a prefix of the store.)
func (r *Relay) send(batch []eventstore.Recorded, prev string) *inflight {
	f := &inflight{batch: batch, futures: make([]jetstream.PubAckFuture, 0, len(batch)), started: time.Now()}
	for _, e := range batch {
		if !r.held() {
			f.sendErr = errLeaseExpired
			break
		}
		opts := []jetstream.PublishOpt{jetstream.WithMsgID(e.ID.String()), jetstream.WithExpectStream(r.cfg.Stream)}
		if prev != "" {
			opts = append(opts, jetstream.WithExpectLastMsgID(prev))
		}
		pf, err := r.js.PublishMsgAsync(r.message(e), opts...)
		if err != nil {
			f.sendErr = fmt.Errorf("publishing %s: %w", e.ID, err)
			break
		}
		f.futures = append(f.futures, pf)
		prev = e.ID.String()
	}
	return f
}

func (r *Relay) awaitAcks(ctx context.Context, futures []jetstream.PubAckFuture) (uint64, error) {
	timeout := time.NewTimer(r.cfg.AckTimeout)
	defer timeout.Stop()
	var (
		firstErr error
		lastSeq  uint64
	)
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			lastSeq = ack.Sequence
		case err := <-f.Err():
			if firstErr == nil {
				firstErr = fmt.Errorf("publish of %s refused: %w", f.Msg().Header.Get(nats.MsgIdHdr), err)
			}
		case <-timeout.C:
			return 0, errors.New("timed out waiting for publish acknowledgements")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return lastSeq, firstErr
}

func (r *Relay) message(e eventstore.Recorded) *nats.Msg {
	m := nats.NewMsg(e.Subject)
	m.Data = e.Payload
	m.Header.Set("Content-Type", contentTypeProtobuf)
	m.Header.Set(HeaderWatermillUUID, e.ID.String())
	m.Header.Set(HeaderEventType, e.Type)
	m.Header.Set(HeaderStreamID, e.StreamID)
	m.Header.Set(HeaderStreamVersion, strconv.FormatInt(e.Version, 10))
	m.Header.Set(HeaderPosition, e.Position.String())
	m.Header.Set(HeaderRelay, r.cfg.Name)
	if t := r.token(); t > 0 {
		m.Header.Set(HeaderRelayToken, strconv.FormatInt(t, 10))
	}
	if e.CorrelationID != "" {
		m.Header.Set(HeaderCorrelationID, e.CorrelationID)
	}
	if e.CausationID != "" {
		m.Header.Set(HeaderCausationID, e.CausationID)
	}
	return m
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
