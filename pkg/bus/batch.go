package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DeadLetterFunc stores a message that can never be applied in the dead-letter stream, with
// the reason. It returns only once the dead letter is stored. DeadLetterer.SendJetStream has
// this shape.
type DeadLetterFunc func(ctx context.Context, consumer string, msg jetstream.Msg, reason error) error

// BatchHandler is what a BatchConsumer drives: one service's use of a durable pull consumer.
type BatchHandler[T any] interface {
	// Screen decides, before anything is applied, what to do with each message of a fetched
	// batch: verdicts[i] is msgs[i]'s. It decodes and validates, and may look something up
	// once for the whole batch (a directory, a set of subscribers). An error leaves the whole
	// batch to be delivered again.
	Screen(ctx context.Context, msgs []jetstream.Msg) (verdicts []Verdict[T], err error)
	// Apply applies the items of the messages Screen kept, in their order, in one
	// transaction. When it fails, the consumer splits the batch (see BatchConsumer) so that
	// only the message at fault is dead-lettered or retried.
	Apply(ctx context.Context, items []T) error
}

// Prober is implemented by a BatchHandler that can tell whether its dependencies (its
// database) answer. A BatchConsumer asks after an Apply failed with an error that is not
// permanent: if they answer, the failure belongs to the messages, and the batch is split to
// find which; if they do not, the whole batch waits for them. A handler without Probe is taken
// to have its dependencies down on every such failure, the old behaviour: nothing is split or
// dead-lettered for a failure that is not permanent.
type Prober interface {
	Probe(ctx context.Context) error
}

// Verdict is what a BatchHandler decided for one message: apply its item, acknowledge it
// without applying anything (Skip), or dead-letter it (Reject).
type Verdict[T any] struct {
	item   T
	skip   bool
	reject error
}

// Apply is the verdict of a message whose item is to be applied.
func Apply[T any](item T) Verdict[T] { return Verdict[T]{item: item} }

// Skip is the verdict of a message that needs nothing (an event the consumer does not use).
func Skip[T any]() Verdict[T] { return Verdict[T]{skip: true} }

// Reject is the verdict of a message that can never be applied: it goes to the dead-letter
// stream with reason (nil reads as "rejected").
func Reject[T any](reason error) Verdict[T] {
	if reason == nil {
		reason = errors.New("rejected")
	}
	return Verdict[T]{reject: reason}
}

// BatchOptions tunes a BatchConsumer.
type BatchOptions struct {
	// BatchSize is the most messages fetched and applied at once (default 500, and never more
	// than the consumer's MaxAckPending, at which a fetch would stop and wait out MaxWait).
	BatchSize int
	// MaxWait is how long a fetch waits for a first message (default 1s).
	MaxWait time.Duration
	// DeadLetter stores the messages that can never be applied. Required.
	DeadLetter DeadLetterFunc
	// IsPermanent tells more errors of Apply that no retry can fix, beside those IsPermanent
	// knows (marked with Permanent, outside the contract, beyond the money limits, refused
	// input), which always are.
	IsPermanent func(error) bool
	// MaxFailures is how many times a message may fail alone with an error that is not
	// permanent (its dependencies answering) before it is dead-lettered as an incident
	// (ReasonExhausted); between failures it waits RetryBackoff, doubling (default 5, which
	// with the default backoff dead-letters it about 15 s after its first failure).
	MaxFailures int
	// RetryBackoff is the first wait before a message that failed alone is delivered again
	// (default 1s); each further failure doubles it, up to 30 s.
	RetryBackoff time.Duration
	// Hold, when set, is asked after every fetch whether the consumer may still handle what
	// it fetched; when it may not (a partition's lease was lost), the batch and what was
	// fetched after it go back to JetStream at once for whoever holds it now.
	Hold func() bool
	// FinishBatch, when positive, makes the handling of a fetched batch outlast the end of
	// Run's context, bounded by this long: a batch given up halfway would leave its effects
	// committed but unannounced, or its messages nak'd for a later redelivery, and the next
	// reader (another owner of the partition) would meanwhile see later messages first. (A
	// fetch needs no such care: what the Fetcher received and did not hand over, Close gives
	// back at once.)
	FinishBatch time.Duration
	// AfterApply, when set, runs after each successful Apply, before its messages are
	// acknowledged: to announce what was applied, or in tests to die in between.
	AfterApply func(ctx context.Context)
	Logger     *slog.Logger
	// Metrics, when set, counts the messages settled (bus_consumer_messages_total).
	Metrics *ConsumerMetrics
}

// BatchConsumer feeds a BatchHandler from a durable pull consumer: fetch what is available,
// screen it, apply it in one transaction, then settle: acknowledge what was applied or skipped,
// dead-letter what was rejected, one message at a time with its reason, and hand everything
// else back to JetStream for redelivery. Messages are acknowledged only after Apply returned,
// so a crash in between redelivers them; handlers make a second delivery change nothing (they
// record what they applied in the same transaction).
//
// One message never stops the others, whoever's it is. When a batch fails to apply, the
// consumer classifies the error:
//
//   - permanent (IsPermanent: outside the contract, beyond the money limits, a refused input, a
//     domain rule, a panic): the batch is split in halves, recursively, until the message at
//     fault is alone; it is dead-lettered with its reason and the rest applied;
//   - otherwise, it asks the handler whether its dependencies answer (Prober). If they do not,
//     the whole batch is handed back and waits for them (never dead-lettered: an outage is not
//     the messages' fault). If they do, the failure is the messages': the batch is split the
//     same way, and the message that fails alone is handed back with a backoff, counted, and
//     dead-lettered as an incident (ReasonExhausted) at its MaxFailures-th failure, so that
//     nothing is retried for ever.
//
// Splitting applies the halves in order, so a batch that fails for one message costs about
// 2·log2(size) extra transactions. Messages of a batch handed back are delivered again after a
// delay; meanwhile later messages go on, so handlers tolerate order changes (DESIGN.md §7).
type BatchConsumer[T any] struct {
	fetcher  *Fetcher
	durable  string
	h        BatchHandler[T]
	o        BatchOptions
	log      *slog.Logger
	progress *Progress
}

// NewBatchConsumer returns the BatchConsumer of the durable pull consumer c, named durable
// (the name dead letters and metrics carry).
func NewBatchConsumer[T any](c jetstream.Consumer, durable string, h BatchHandler[T], o BatchOptions) (*BatchConsumer[T], error) {
	if o.DeadLetter == nil {
		return nil, fmt.Errorf("consumer %s: a dead-letter function is required", durable)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if info := c.CachedInfo(); info != nil && info.Config.MaxAckPending > 0 && o.BatchSize > info.Config.MaxAckPending {
		o.BatchSize = info.Config.MaxAckPending
	}
	if o.MaxWait <= 0 {
		o.MaxWait = time.Second
	}
	if o.IsPermanent == nil {
		o.IsPermanent = IsPermanent
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = DefaultMaxFailures
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = nakDelay
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	progress := o.Metrics.Progress(durable)
	if progress == nil {
		progress = newProgress(durable, nil)
	}
	return &BatchConsumer[T]{fetcher: &Fetcher{Consumer: c, Max: o.BatchSize, MaxWait: o.MaxWait},
		durable: durable, h: h, o: o, log: o.Logger.With("consumer", durable), progress: progress}, nil
}

// DefaultMaxFailures is BatchOptions.MaxFailures' default.
const DefaultMaxFailures = 5

// maxRetryBackoff bounds the wait before a message that failed alone is delivered again.
const maxRetryBackoff = 30 * time.Second

// Progress returns the consumer's progress (shared with the other consumers of its durable in
// the process when BatchOptions.Metrics is set): its readiness check is Progress().Stalled.
func (c *BatchConsumer[T]) Progress() *Progress { return c.progress }

// retryDelay is how long Run waits after a failed batch before fetching again (its messages
// come back after NakDelay).
const retryDelay = time.Second

// nakDelay is how long JetStream waits before delivering again a message handed back after a
// failure: long enough not to spin on a dependency that is down.
const nakDelay = time.Second

// Run fetches and handles batches until ctx ends, then hands back to JetStream the messages
// fetched ahead (Close).
func (c *BatchConsumer[T]) Run(ctx context.Context) error {
	defer c.Close()
	for ctx.Err() == nil {
		if _, err := c.Step(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("batch failed; its messages will be delivered again", "err", err)
			t := time.NewTimer(retryDelay)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	return nil
}

// Step takes the messages available (waiting up to MaxWait for a first one; Fetcher) and
// handles them; it returns how many messages it took off the consumer. One goroutine at a time
// calls Run or Step.
func (c *BatchConsumer[T]) Step(ctx context.Context) (int, error) {
	hctx := ctx
	msgs, err := c.fetcher.Fetch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	c.o.Metrics.Fetched(c.durable, len(msgs), c.progress.fetched(deliveries(msgs)))
	if c.o.Hold != nil && !c.o.Hold() {
		for _, m := range msgs {
			_ = m.Nak()
		}
		c.o.Metrics.Add(c.durable, OutcomeNacked, len(msgs))
		c.Close() // and what was fetched after them
		return len(msgs), nil
	}
	if c.o.FinishBatch > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), c.o.FinishBatch)
		defer cancel()
	}
	return len(msgs), c.handle(hctx, msgs)
}

// Close hands back to JetStream the messages fetched ahead and not yet taken by a Step
// (Fetcher.Close). Run does it when it returns; a caller of Step does it when it is done.
func (c *BatchConsumer[T]) Close() { c.fetcher.Close() }

// kept is a message Screen kept, with its item.
type kept[T any] struct {
	msg  jetstream.Msg
	item T
}

func (c *BatchConsumer[T]) handle(ctx context.Context, msgs []jetstream.Msg) error {
	verdicts, err := c.screen(ctx, msgs)
	if err != nil {
		c.nak(msgs)
		return err
	}
	var todo []kept[T]
	for i, v := range verdicts {
		switch {
		case v.reject != nil:
			if err := c.reject(ctx, msgs[i], v.reject); err != nil {
				c.nak(append(messagesOf(todo), msgs[i+1:]...))
				return err
			}
		case v.skip:
			_ = msgs[i].Ack()
			c.o.Metrics.Add(c.durable, OutcomeAcked, 1)
			c.progress.settled(deliveries(msgs[i : i+1]))
		default:
			todo = append(todo, kept[T]{msg: msgs[i], item: v.item})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	err = c.apply(ctx, todo)
	switch {
	case err == nil:
		c.ack(todo)
		return nil
	case !c.permanent(err) && !c.answering(ctx):
		// The dependencies are down: every message waits for them, none is at fault.
		c.nak(messagesOf(todo))
		return err
	}
	return c.split(ctx, todo, err)
}

// split applies todo, whose Apply as a whole failed with err, in halves, recursively, so that
// only the messages at fault are dead-lettered or retried and the others are applied. It
// returns an error, having handed back what it did not settle, only when the dependencies
// stopped answering or a dead letter could not be stored.
func (c *BatchConsumer[T]) split(ctx context.Context, todo []kept[T], err error) error {
	if len(todo) == 1 {
		return c.failedAlone(ctx, todo[0], err)
	}
	mid := len(todo) / 2
	for i, half := range [][]kept[T]{todo[:mid], todo[mid:]} {
		err := c.apply(ctx, half)
		if err == nil {
			c.ack(half)
			continue
		}
		if !c.permanent(err) && !c.answering(ctx) {
			c.nak(messagesOf(todo[i*mid:]))
			return err
		}
		if err := c.split(ctx, half, err); err != nil {
			if i == 0 {
				c.nak(messagesOf(todo[mid:]))
			}
			return err
		}
	}
	return nil
}

// failedAlone settles the message of k, whose Apply alone failed with err: dead-lettered when
// err is permanent; else, while the dependencies answer, handed back with a backoff and
// counted, and dead-lettered as an incident at its MaxFailures-th failure.
func (c *BatchConsumer[T]) failedAlone(ctx context.Context, k kept[T], err error) error {
	if c.permanent(err) {
		return c.reject(ctx, k.msg, err)
	}
	if !c.answering(ctx) {
		c.nak([]jetstream.Msg{k.msg})
		return err
	}
	d, _ := deliveryOf(k.msg)
	n := c.progress.failedAlone(d, err)
	if n >= c.o.MaxFailures {
		return c.reject(ctx, k.msg, Exhausted(n, err))
	}
	delay := min(c.o.RetryBackoff<<(n-1), maxRetryBackoff)
	c.log.Warn("message failed alone while its dependencies answer; retrying it with backoff",
		"subject", k.msg.Subject(), "stream_seq", d.streamSeq, "failures", n, "of", c.o.MaxFailures,
		"retry_in", delay, "err", err)
	c.o.Metrics.Add(c.durable, OutcomeNacked, 1)
	c.o.Metrics.Retried(c.durable)
	_ = k.msg.NakWithDelay(delay)
	return nil
}

// answering reports whether the handler's dependencies answer (Prober); a handler that cannot
// tell is taken not to.
func (c *BatchConsumer[T]) answering(ctx context.Context) bool {
	p, ok := c.h.(Prober)
	if !ok {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return p.Probe(pctx) == nil
}

// probeTimeout bounds a Prober's answer.
const probeTimeout = 5 * time.Second

// permanent tells an error no retry can fix: one IsPermanent knows (a panic is marked
// Permanent), or one the options' IsPermanent knows.
func (c *BatchConsumer[T]) permanent(err error) bool {
	return IsPermanent(err) || c.o.IsPermanent(err)
}

// screen asks the handler for the batch's verdicts. If the handler panics, each message is
// screened alone and the one that panics is rejected.
func (c *BatchConsumer[T]) screen(ctx context.Context, msgs []jetstream.Msg) ([]Verdict[T], error) {
	verdicts, err := c.screenSafely(ctx, msgs)
	if errors.Is(err, ErrHandlerPanicked) {
		if len(msgs) == 1 {
			return []Verdict[T]{Reject[T](err)}, nil
		}
		verdicts = make([]Verdict[T], 0, len(msgs))
		for i := range msgs {
			v, err := c.screen(ctx, msgs[i:i+1])
			if err != nil {
				return nil, err
			}
			verdicts = append(verdicts, v...)
		}
		return verdicts, nil
	}
	if err == nil && len(verdicts) != len(msgs) {
		return nil, fmt.Errorf("consumer %s: %d verdicts for %d messages", c.durable, len(verdicts), len(msgs))
	}
	return verdicts, err
}

func (c *BatchConsumer[T]) screenSafely(ctx context.Context, msgs []jetstream.Msg) (verdicts []Verdict[T], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: screening: %v", ErrHandlerPanicked, p)
		}
	}()
	return c.h.Screen(ctx, msgs)
}

// apply applies the items of todo; a panic is a permanent error.
func (c *BatchConsumer[T]) apply(ctx context.Context, todo []kept[T]) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanent(fmt.Errorf("%w: applying: %v", ErrHandlerPanicked, p))
		}
	}()
	items := make([]T, len(todo))
	for i, k := range todo {
		items[i] = k.item
	}
	if err := c.h.Apply(ctx, items); err != nil {
		if errors.Is(err, ErrHandlerPanicked) {
			return Permanent(err)
		}
		return err
	}
	if c.o.AfterApply != nil {
		c.o.AfterApply(ctx)
	}
	return nil
}

// ack acknowledges applied messages. An acknowledgement lost here only makes JetStream deliver
// again a message whose effect the handler has recorded.
func (c *BatchConsumer[T]) ack(todo []kept[T]) {
	c.o.Metrics.Add(c.durable, OutcomeAcked, len(todo))
	c.progress.settled(deliveries(messagesOf(todo)))
	var failed int
	var last error
	for _, k := range todo {
		if err := k.msg.Ack(); err != nil {
			failed, last = failed+1, err
		}
	}
	if failed > 0 {
		c.log.Warn("acks failed after apply; the messages will be delivered again and change nothing",
			"failed", failed, "of", len(todo), "err", last)
	}
}

func (c *BatchConsumer[T]) nak(msgs []jetstream.Msg) {
	c.o.Metrics.Add(c.durable, OutcomeNacked, len(msgs))
	for _, m := range msgs {
		_ = m.NakWithDelay(nakDelay)
	}
}

// reject dead-letters m and acknowledges it; if the dead letter cannot be stored, m goes back
// to JetStream and the error is returned.
func (c *BatchConsumer[T]) reject(ctx context.Context, m jetstream.Msg, reason error) error {
	if err := c.o.DeadLetter(ctx, c.durable, m, reason); err != nil {
		_ = m.NakWithDelay(nakDelay)
		c.o.Metrics.Add(c.durable, OutcomeNacked, 1)
		return fmt.Errorf("dead-lettering %s: %w", m.Subject(), err)
	}
	c.log.Warn("message dead-lettered", "subject", m.Subject(), "reason", reason)
	c.o.Metrics.Add(c.durable, OutcomeDeadLettered, 1)
	c.progress.settled(deliveries([]jetstream.Msg{m}))
	return m.Ack()
}

// deliveries reads the deliveries of msgs (those that are not JetStream deliveries are left
// out).
func deliveries(msgs []jetstream.Msg) []delivery {
	out := make([]delivery, 0, len(msgs))
	for _, m := range msgs {
		if d, ok := deliveryOf(m); ok {
			out = append(out, d)
		}
	}
	return out
}

func messagesOf[T any](todo []kept[T]) []jetstream.Msg {
	msgs := make([]jetstream.Msg, len(todo))
	for i, k := range todo {
		msgs[i] = k.msg
	}
	return msgs
}
