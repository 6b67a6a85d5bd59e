// Package ports is how the webhook-dispatcher is driven: durable JetStream consumers of the
// catalogue events, and the NATS request-reply service "webhooks" the gateway calls.
package ports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// durablePrefix names the dispatcher's durable consumers ("webhook-dispatcher-p3"), and the
// pre-partition ones on each event stream that EnsureEventsStream retires
// ("webhook-dispatcher-payment", ...).
const durablePrefix = "webhook-dispatcher-"

// ackWait is how long JetStream waits before redelivering a message a dispatcher took and
// never acknowledged (it died). A batch is one short transaction, so this is ample, and short
// enough that a crash delays the events it held by seconds, not a minute. It matches the
// partitions' lease (app.AssignerConfig.LeaseTTL): the next owner of a dead dispatcher's
// partition finds the messages it held delivered again.
const ackWait = 10 * time.Second

// catalogueFilters returns the sorted subjects of the catalogue events of family, and whether
// every event type of the family is one.
func catalogueFilters(family string) (filters []string, whole bool) {
	whole = true
	for _, s := range events.All() {
		switch {
		case s.Family != family:
		case s.Catalogue:
			filters = append(filters, events.Subject(s.Family, "*", "*", s.Name))
		default:
			whole = false
		}
	}
	slices.Sort(filters)
	return filters, whole
}

// Consumer turns the messages of one partition's durable consumer into deliveries, through a
// bus.BatchConsumer.
type Consumer struct {
	h         *deliveryHandler
	consumer  jetstream.Consumer
	durable   string
	log       *slog.Logger
	metrics   *bus.ConsumerMetrics
	batchSize int
	maxWait   time.Duration
}

// NewConsumer returns the Consumer of the durable consumer of partition p of EventsStream.
func NewConsumer(d *app.Dispatcher, dl *bus.DeadLetterer, consumer jetstream.Consumer, p int, log *slog.Logger,
	metrics *bus.ConsumerMetrics) *Consumer {
	return &Consumer{h: &deliveryHandler{d: d, dl: dl, partition: p}, consumer: consumer,
		durable: PartitionConsumer(p).Durable, log: log, metrics: metrics, batchSize: 100, maxWait: time.Second}
}

// Run fetches and handles batches until ctx ends, each batch only while held reports the
// partition's lease held (a batch fetched when it no longer holds goes back to JetStream for
// the partition's next owner).
//
// A fetched batch is finished even when the partition is given back meanwhile (ctx ends),
// within batchTimeout: a batch cancelled halfway could have its deliveries committed without
// being enqueued (left to the recovery pass) or its messages nak'd for a later redelivery;
// either way the partition's next owner would deliver the company's later events first. What
// was fetched ahead of the batch goes back to JetStream at once when Run returns.
func (c *Consumer) Run(ctx context.Context, held func() bool) error {
	bc, err := bus.NewBatchConsumer[domain.NewDelivery](c.consumer, c.durable, c.h, bus.BatchOptions{
		BatchSize: c.batchSize, MaxWait: c.maxWait, DeadLetter: c.h.deadLetter, Hold: held,
		FinishBatch: batchTimeout, Logger: c.log, Metrics: c.metrics})
	if err != nil {
		return err
	}
	return bc.Run(ctx)
}

// batchTimeout bounds the handling of one fetched batch (its lookups and its insert), which
// the partition's cancellation does not interrupt.
const batchTimeout = 5 * time.Second

// deliveryHandler is the bus.BatchHandler of a partition: its items are the deliveries to
// create.
type deliveryHandler struct {
	d         *app.Dispatcher
	dl        *bus.DeadLetterer
	partition int
}

// Screen decides what each message of a batch makes. Events outside the catalogue are skipped
// without being decoded; those of a company and environment with no enabled endpoint (looked
// up once per batch, so an endpoint configured before the lookup gets them) are only decoded
// and validated (a bad one is rejected), neither rendered nor stored: they would create no
// delivery. The others are decoded and rendered into the deliveries Apply creates.
func (h *deliveryHandler) Screen(ctx context.Context, msgs []jetstream.Msg) ([]bus.Verdict[domain.NewDelivery], error) {
	out := make([]bus.Verdict[domain.NewDelivery], len(msgs))
	targets := make([]*domain.Target, len(msgs))
	var unique []domain.Target
	seen := map[domain.Target]bool{}
	for i, m := range msgs {
		t, v := screenSubject(m)
		if t == nil {
			out[i] = v
			continue
		}
		targets[i] = t
		if !seen[*t] {
			seen[*t] = true
			unique = append(unique, *t)
		}
	}
	deliverable, err := h.d.Deliverable(ctx, unique)
	if err != nil {
		return nil, err
	}
	for i, m := range msgs {
		switch {
		case targets[i] == nil:
		case !deliverable[*targets[i]]:
			// No delivery to make, but a bad event still goes to the dead-letter stream, where
			// operators see it whether or not its company listens: decoding and validating are
			// cheap, the payload rendering and the insert skipped here are not.
			if _, _, err := events.Decode(OriginalSubject(m.Subject()), m.Headers().Get("Content-Type"), m.Data()); err != nil {
				out[i] = bus.Reject[domain.NewDelivery](err)
			} else {
				out[i] = bus.Skip[domain.NewDelivery]()
			}
		default:
			out[i] = toDelivery(m)
		}
	}
	return out, nil
}

// screenSubject reads the subject of m only. It skips the events that are no webhook event
// (outside the catalogue, or of a type this binary does not know, which the family wildcard
// brings too) and rejects those with a malformed subject (returning a nil target); for the
// others it returns their company and environment.
func screenSubject(m jetstream.Msg) (*domain.Target, bus.Verdict[domain.NewDelivery]) {
	parts, err := events.ParseSubject(OriginalSubject(m.Subject()))
	switch {
	case errors.Is(err, events.ErrUnknownType):
		return nil, bus.Skip[domain.NewDelivery]()
	case err != nil:
		return nil, bus.Reject[domain.NewDelivery](fmt.Errorf("%w: %w", events.ErrUndecodable, err))
	}
	if spec, _ := events.Lookup(parts.Type); !spec.Catalogue {
		return nil, bus.Skip[domain.NewDelivery]()
	}
	return &domain.Target{CompanyID: parts.CompanyID, Environment: parts.Env}, bus.Verdict[domain.NewDelivery]{}
}

// Apply creates the batch's deliveries in one statement and hands those it created to the
// partition's senders.
func (h *deliveryHandler) Apply(ctx context.Context, news []domain.NewDelivery) error {
	claims, err := h.d.Create(ctx, news)
	if err != nil {
		return err
	}
	h.d.EnqueueFrom(ctx, h.partition, claims)
	return nil
}

// toDelivery decodes a bus message into the delivery it makes: skipped for an event outside
// the catalogue, rejected when it cannot be decoded or rendered.
func toDelivery(m jetstream.Msg) bus.Verdict[domain.NewDelivery] {
	msg, spec, err := events.Decode(OriginalSubject(m.Subject()), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		return bus.Reject[domain.NewDelivery](err)
	}
	if !spec.Catalogue {
		return bus.Skip[domain.NewDelivery]()
	}
	meta := events.Meta(msg)
	id, err := uuid.Parse(meta.GetEventId())
	if err != nil {
		return bus.Reject[domain.NewDelivery](fmt.Errorf("%w: event id %q", events.ErrInvalid, meta.GetEventId()))
	}
	payload, err := domain.Payload(spec.Type, meta.GetOccurredAt().AsTime(), msg)
	if err != nil {
		return bus.Reject[domain.NewDelivery](bus.Permanent(err))
	}
	return bus.Apply(domain.NewDelivery{EventID: id, EventType: spec.Type, CompanyID: meta.GetCompanyId(),
		Environment: meta.GetEnvironment(), Payload: payload})
}

// deadLetter stores m in the dead-letter stream under the subject it was published on (a
// re-drive republishes it there, to every consumer of its stream, which all skip what they
// have applied). It has the shape of bus.DeadLetterFunc.
func (h *deliveryHandler) deadLetter(ctx context.Context, consumer string, m jetstream.Msg, reason error) error {
	dl := bus.DeadLetter{Consumer: consumer, Subject: OriginalSubject(m.Subject()), Header: m.Headers(), Data: m.Data(),
		Reason: reason}
	if md, err := m.Metadata(); err == nil {
		dl.Stream, dl.Sequence = md.Stream, md.Sequence.Stream
	}
	return h.dl.Send(ctx, dl)
}
