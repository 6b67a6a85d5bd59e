// Package ports holds the pool service's inputs: the consumer of treasury and payment facts
// from the bus, and the NATS request-reply commands.
package ports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/app/command"
	"github.com/payplat/platform/services/pool/domain"
)

// ConsumerOptions tunes a Consumer.
type ConsumerOptions struct {
	// BatchSize is the most messages fetched and recorded in one transaction (default 1000).
	BatchSize int
	// MaxWait is how long a fetch waits for a first message (default 1s).
	MaxWait time.Duration
	// DeadLetter stores a message that can never be recorded. Required.
	DeadLetter bus.DeadLetterFunc
	Logger     *slog.Logger
	// AfterCommit, when set, runs after a batch is committed and before it is acknowledged
	// (tests use it to crash the consumer in between).
	AfterCommit func(ctx context.Context)
	// Metrics, when set, counts the messages settled (bus_consumer_messages_total).
	Metrics *bus.ConsumerMetrics
}

// Consumer records the facts of a durable pull consumer on their pools, through a
// bus.BatchConsumer. Each fetch is grouped by pool and recorded in one transaction: per pool,
// one append with one expected version for the movements of all its messages. Only after the
// commit are the messages acknowledged; a redelivered message finds its key recorded and
// changes nothing. A message that cannot be decoded, is invalid, names an unknown company or
// can never be recorded goes to the dead-letter stream; a transient failure leaves the batch to
// be redelivered, and so does a companies table the pool cannot read
// (adapters.ErrCompaniesNotVisible): the guard fails closed.
type Consumer struct {
	*bus.BatchConsumer[item]
}

// NewConsumer returns a consumer of the durable pull consumer c (named durable).
func NewConsumer(repo *adapters.Repository, c jetstream.Consumer, durable string, o ConsumerOptions) (*Consumer, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	h := &factHandler{repo: repo, record: command.NewRecordFactsHandler(repo), companies: adapters.NewCompanyDirectory()}
	bc, err := bus.NewBatchConsumer[item](c, durable, h, bus.BatchOptions{BatchSize: o.BatchSize, MaxWait: o.MaxWait,
		DeadLetter: o.DeadLetter, IsPermanent: isPermanent, AfterApply: o.AfterCommit, Logger: o.Logger, Metrics: o.Metrics})
	if err != nil {
		return nil, fmt.Errorf("pool consumer: %w", err)
	}
	return &Consumer{bc}, nil
}

// item is the fact a message carries, with its pool.
type item = domain.PoolFact

// factHandler is the bus.BatchHandler of a Consumer.
type factHandler struct {
	repo      *adapters.Repository
	record    command.RecordFactsHandler
	companies *adapters.CompanyDirectory
}

// Screen decodes each message into its fact and rejects those of a company the platform does
// not know (looked up once per batch).
func (h *factHandler) Screen(ctx context.Context, msgs []jetstream.Msg) ([]bus.Verdict[item], error) {
	out := make([]bus.Verdict[item], len(msgs))
	decoded := make([]*item, len(msgs))
	var ids []string
	seen := map[string]bool{}
	for i, m := range msgs {
		it, err := decode(m)
		if err != nil {
			out[i] = bus.Reject[item](err)
			continue
		}
		out[i], decoded[i] = bus.Apply(it), &it
		if !seen[it.Pool.CompanyID] {
			seen[it.Pool.CompanyID] = true
			ids = append(ids, it.Pool.CompanyID)
		}
	}
	unknown, err := h.companies.Unknown(ctx, h.repo.DB(), ids)
	if err != nil || len(unknown) == 0 {
		return out, err
	}
	for i, it := range decoded {
		if it != nil && unknown[it.Pool.CompanyID] {
			out[i] = bus.Reject[item](fmt.Errorf("unknown company %q", it.Pool.CompanyID))
		}
	}
	return out, nil
}

// Probe implements bus.Prober: the pool's database answers.
func (h *factHandler) Probe(ctx context.Context) error { return h.repo.DB().Ping(ctx) }

// Apply records the facts in one transaction.
func (h *factHandler) Apply(ctx context.Context, items []item) error {
	return h.record.Handle(ctx, command.RecordFacts{Facts: items})
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
	return item{Pool: id, Fact: f}, nil
}

// isPermanent reports an error no retry can fix: the fact is outside what a pool can record.
func isPermanent(err error) bool {
	return errors.Is(err, domain.ErrInvalidAmount) || errors.Is(err, domain.ErrAmountOutOfRange) ||
		errors.Is(err, domain.ErrInvalidPool) || errors.Is(err, eventstore.ErrInvalidEvent) ||
		errors.Is(err, events.ErrInvalid) || errors.Is(err, events.ErrUndecodable)
}
