// Package ports holds the pool service's inputs: the consumer of treasury and payment facts
// from the bus, and the NATS request-reply commands.
package ports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
)

// ConsumerOptions tunes a Consumer.
type ConsumerOptions struct {
	// BatchSize is the most messages fetched and recorded in one transaction (default 1000).
	BatchSize int
	// MaxWait is how long a fetch waits for a first message (default 1s).
	MaxWait time.Duration
	// DeadLetter stores a message that can never be recorded. Required.
	DeadLetter projection.DeadLetterFunc
	Logger     *slog.Logger
	// AfterCommit, when set, runs after a batch is committed and before it is acknowledged
	// (tests use it to crash the consumer in between).
	AfterCommit func(ctx context.Context)
	// Metrics, when set, counts the messages settled (bus_consumer_messages_total).
	Metrics *bus.ConsumerMetrics
}

// Consumer records the facts of a durable pull consumer on their pools. Each fetch is grouped
// by pool and recorded in one transaction: per pool, one append with one expected version for
// the movements of all its messages. Only after the commit are the messages acknowledged; a
// redelivered message finds its key recorded and changes nothing. A message that cannot be
// decoded, is invalid, names an unknown company or can never be recorded goes to the
// dead-letter stream; a transient failure leaves the batch to be redelivered, and so does a
// companies table the pool cannot read (adapters.ErrCompaniesNotVisible): the guard fails closed.
type Consumer struct {
	repo      *adapters.Repository
	companies *adapters.CompanyDirectory
	consumer  jetstream.Consumer
	durable   string
	opts      ConsumerOptions
	log       *slog.Logger
}

// NewConsumer returns a consumer of the durable pull consumer c (named durable).
func NewConsumer(repo *adapters.Repository, c jetstream.Consumer, durable string, o ConsumerOptions) (*Consumer, error) {
	if o.DeadLetter == nil {
		return nil, errors.New("pool consumer: a dead-letter function is required")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.MaxWait <= 0 {
		o.MaxWait = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Consumer{repo: repo, companies: adapters.NewCompanyDirectory(), consumer: c, durable: durable,
		opts: o, log: o.Logger.With("consumer", durable)}, nil
}

// Run fetches and records batches until ctx ends.
func (c *Consumer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if _, err := c.Step(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("pool batch failed; its messages will be redelivered", "err", err)
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

// Step takes the messages available (waiting up to MaxWait for a first one) and records them;
// it returns how many messages it took.
func (c *Consumer) Step(ctx context.Context) (int, error) {
	msgs, err := bus.FetchAvailable(ctx, c.consumer, c.opts.BatchSize, c.opts.MaxWait)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return len(msgs), c.handle(ctx, msgs)
}

// item is a message with the fact it carries.
type item struct {
	msg  jetstream.Msg
	pool domain.ID
	fact domain.Fact
}

func (c *Consumer) handle(ctx context.Context, msgs []jetstream.Msg) error {
	items := make([]item, 0, len(msgs))
	for _, m := range msgs {
		it, err := decode(m)
		if err != nil {
			if err := c.reject(ctx, m, err); err != nil {
				c.nakAll(items)
				return err
			}
			continue
		}
		items = append(items, it)
	}
	items, err := c.dropUnknownCompanies(ctx, items)
	if err != nil || len(items) == 0 {
		return err
	}
	err = c.commit(ctx, items)
	if err == nil {
		c.settle(ctx, items)
		return nil
	}
	if !isPermanent(err) {
		c.nakAll(items)
		return err
	}
	// A message of the batch can never be recorded: record one by one, so that only it goes
	// to the dead-letter stream.
	for i, it := range items {
		err := c.commit(ctx, items[i:i+1])
		switch {
		case err == nil:
			c.settle(ctx, items[i:i+1])
		case isPermanent(err):
			if err := c.reject(ctx, it.msg, err); err != nil {
				c.nakAll(items[i+1:])
				return err
			}
		default:
			c.nakAll(items[i:])
			return err
		}
	}
	return nil
}

func decode(m jetstream.Msg) (item, error) {
	msg, _, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		return item{}, err
	}
	id, f, err := factOf(msg)
	if err != nil {
		return item{}, err
	}
	return item{msg: m, pool: id, fact: f}, nil
}

func (c *Consumer) dropUnknownCompanies(ctx context.Context, items []item) ([]item, error) {
	var ids []string
	seen := map[string]bool{}
	for _, it := range items {
		if !seen[it.pool.CompanyID] {
			seen[it.pool.CompanyID] = true
			ids = append(ids, it.pool.CompanyID)
		}
	}
	unknown, err := c.companies.Unknown(ctx, c.repo.DB(), ids)
	if err != nil {
		c.nakAll(items)
		return nil, err
	}
	if len(unknown) == 0 {
		return items, nil
	}
	kept := items[:0:0]
	for i, it := range items {
		if !unknown[it.pool.CompanyID] {
			kept = append(kept, it)
			continue
		}
		if err := c.reject(ctx, it.msg, fmt.Errorf("unknown company %q", it.pool.CompanyID)); err != nil {
			c.nakAll(append(kept, items[i+1:]...))
			return nil, err
		}
	}
	return kept, nil
}

// commit records the items in one transaction, grouped by pool in a fixed order (so that two
// consumers locking the same pools cannot deadlock).
func (c *Consumer) commit(ctx context.Context, items []item) error {
	groups := map[domain.ID][]domain.Fact{}
	var pools []domain.ID
	for _, it := range items {
		if _, ok := groups[it.pool]; !ok {
			pools = append(pools, it.pool)
		}
		groups[it.pool] = append(groups[it.pool], it.fact)
	}
	sort.Slice(pools, func(i, j int) bool { return pools[i].StreamID() < pools[j].StreamID() })
	return pgx.BeginFunc(ctx, c.repo.DB(), func(tx pgx.Tx) error {
		if err := c.repo.LockPools(ctx, tx, pools...); err != nil {
			return err
		}
		for _, id := range pools {
			if _, err := c.repo.RecordFacts(ctx, tx, id, groups[id]); err != nil {
				return err
			}
		}
		return nil
	})
}

// settle acknowledges committed items. An acknowledgement lost here only makes JetStream
// redeliver a message whose key is recorded.
func (c *Consumer) settle(ctx context.Context, items []item) {
	if c.opts.AfterCommit != nil {
		c.opts.AfterCommit(ctx)
	}
	c.opts.Metrics.Add(c.durable, bus.OutcomeAcked, len(items))
	var failed int
	var last error
	for _, it := range items {
		if err := it.msg.Ack(); err != nil {
			failed, last = failed+1, err
		}
	}
	if failed > 0 {
		c.log.Warn("acks failed after commit; the messages will be redelivered and skipped",
			"failed", failed, "of", len(items), "err", last)
	}
}

func (c *Consumer) reject(ctx context.Context, m jetstream.Msg, reason error) error {
	if err := c.opts.DeadLetter(ctx, c.durable, m, reason); err != nil {
		_ = m.NakWithDelay(time.Second)
		return fmt.Errorf("dead-lettering %s: %w", m.Subject(), err)
	}
	c.log.Warn("message dead-lettered", "subject", m.Subject(), "reason", reason)
	c.opts.Metrics.Add(c.durable, bus.OutcomeDeadLettered, 1)
	return m.Ack()
}

func (c *Consumer) nakAll(items []item) {
	c.opts.Metrics.Add(c.durable, bus.OutcomeNacked, len(items))
	for _, it := range items {
		_ = it.msg.NakWithDelay(time.Second)
	}
}

// isPermanent reports an error no retry can fix: the fact is outside what a pool can record.
func isPermanent(err error) bool {
	return errors.Is(err, domain.ErrInvalidAmount) || errors.Is(err, domain.ErrAmountOutOfRange) ||
		errors.Is(err, domain.ErrInvalidPool) || errors.Is(err, eventstore.ErrInvalidEvent) ||
		errors.Is(err, events.ErrInvalid) || errors.Is(err, events.ErrUndecodable)
}
