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

// Consumer turns the messages of one durable consumer into deliveries.
type Consumer struct {
	d         *app.Dispatcher
	dl        *bus.DeadLetterer
	consumer  jetstream.Consumer
	durable   string
	partition int
	log       *slog.Logger
	metrics   *bus.ConsumerMetrics
	held      func() bool
	batch     int
	maxWait   time.Duration
}

// NewConsumer returns the Consumer of the durable consumer of partition p of EventsStream.
func NewConsumer(d *app.Dispatcher, dl *bus.DeadLetterer, consumer jetstream.Consumer, p int, log *slog.Logger,
	metrics *bus.ConsumerMetrics) *Consumer {
	durable := PartitionConsumer(p).Durable
	return &Consumer{d: d, dl: dl, consumer: consumer, durable: durable, partition: p, log: log.With("consumer", durable),
		metrics: metrics, batch: 100, maxWait: time.Second}
}

// Run fetches and handles batches until ctx ends, each batch only while held reports the
// partition's lease held (a batch fetched when it no longer holds goes back to JetStream for
// the partition's next owner).
func (c *Consumer) Run(ctx context.Context, held func() bool) error {
	c.held = held
	for ctx.Err() == nil {
		if err := c.step(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("webhook consumer batch failed; messages will be redelivered", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

func (c *Consumer) step(ctx context.Context) error {
	// The fetch is not cancelled when the partition is given back (ctx ends): a pull cancelled
	// while the server sends leaves the messages in flight unacknowledged until their AckWait,
	// and the partition's next owner would meanwhile deliver the company's later events first.
	// It lasts at most maxWait and its linger; what it brings is handled or nak'd below.
	msgs, err := bus.FetchAvailable(context.WithoutCancel(ctx), c.consumer, c.batch, c.maxWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	if c.held != nil && !c.held() {
		for _, m := range msgs {
			_ = m.Nak()
		}
		c.metrics.Add(c.durable, bus.OutcomeNacked, len(msgs))
		return nil
	}
	// A fetched batch is finished even when the partition is given back meanwhile (ctx ends):
	// cancelled halfway, its deliveries could be committed without being enqueued (left to the
	// recovery pass) or its messages nak'd for a later redelivery, and either way the
	// partition's next owner would deliver the company's later events first.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	return c.handle(bctx, msgs)
}

// batchTimeout bounds the handling of one fetched batch (its lookups and its insert), which
// the partition's cancellation does not interrupt.
const batchTimeout = 5 * time.Second

// handle turns a batch into deliveries. Events outside the catalogue are acknowledged without
// being decoded; those of a company and environment with no enabled endpoint (looked up once
// per batch, so an endpoint configured before the lookup gets them) are only decoded and
// validated (a bad one is dead-lettered), neither rendered nor stored: they would create no
// delivery. The others are decoded, rendered and created in one statement.
func (c *Consumer) handle(ctx context.Context, msgs []jetstream.Msg) error {
	candidates, targets, err := c.screen(ctx, msgs)
	if err != nil {
		return err
	}
	deliverable, err := c.d.Deliverable(ctx, uniqueTargets(targets))
	if err != nil {
		nakAll(candidates)
		return err
	}
	var (
		news []domain.NewDelivery
		good []jetstream.Msg
	)
	for i, m := range candidates {
		if !deliverable[targets[i]] {
			// No delivery to make, but a bad event still goes to the dead-letter stream, where
			// operators see it whether or not its company listens: decoding and validating are
			// cheap, the payload rendering and the insert skipped here are not.
			if _, _, err := events.Decode(OriginalSubject(m.Subject()), m.Headers().Get("Content-Type"), m.Data()); err != nil {
				if err := c.deadLetter(ctx, m, err); err != nil {
					nakAll(append(good, candidates[i:]...))
					return err
				}
				continue
			}
			c.ack(m)
			continue
		}
		n, deliver, err := toDelivery(m)
		switch {
		case err != nil:
			if err := c.deadLetter(ctx, m, err); err != nil {
				nakAll(append(good, candidates[i:]...))
				return err
			}
		case !deliver:
			c.ack(m)
		default:
			news = append(news, n)
			good = append(good, m)
		}
	}
	claims, err := c.d.Create(ctx, news)
	if err != nil {
		nakAll(good)
		return err
	}
	for _, m := range good {
		if err := m.Ack(); err != nil {
			// The deliveries are committed; a redelivery finds them and creates nothing.
			c.log.Warn("ack failed after commit", "subject", m.Subject(), "err", err)
		}
	}
	c.metrics.Add(c.durable, bus.OutcomeAcked, len(good))
	c.d.EnqueueFrom(ctx, c.partition, claims)
	return nil
}

// screen reads the subjects of msgs only. It acknowledges the events that are no webhook event
// (outside the catalogue, or of a type this binary does not know, which the family wildcard
// brings too), dead-letters those with a malformed subject, and returns the others with the
// company and environment of each.
func (c *Consumer) screen(ctx context.Context, msgs []jetstream.Msg) ([]jetstream.Msg, []domain.Target, error) {
	var (
		kept    []jetstream.Msg
		targets []domain.Target
	)
	for i, m := range msgs {
		parts, err := events.ParseSubject(OriginalSubject(m.Subject()))
		switch {
		case errors.Is(err, events.ErrUnknownType):
			c.ack(m)
		case err != nil:
			if err := c.deadLetter(ctx, m, fmt.Errorf("%w: %w", events.ErrUndecodable, err)); err != nil {
				nakAll(append(kept, msgs[i:]...))
				return nil, nil, err
			}
		default:
			if spec, _ := events.Lookup(parts.Type); !spec.Catalogue {
				c.ack(m)
				continue
			}
			kept = append(kept, m)
			targets = append(targets, domain.Target{CompanyID: parts.CompanyID, Environment: parts.Env})
		}
	}
	return kept, targets, nil
}

func uniqueTargets(targets []domain.Target) []domain.Target {
	seen := make(map[domain.Target]bool, len(targets))
	var out []domain.Target
	for _, t := range targets {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// toDelivery decodes a bus message; deliver is false for an event outside the catalogue.
func toDelivery(m jetstream.Msg) (domain.NewDelivery, bool, error) {
	msg, spec, err := events.Decode(OriginalSubject(m.Subject()), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		return domain.NewDelivery{}, false, err
	}
	if !spec.Catalogue {
		return domain.NewDelivery{}, false, nil
	}
	meta := events.Meta(msg)
	id, err := uuid.Parse(meta.GetEventId())
	if err != nil {
		return domain.NewDelivery{}, false, fmt.Errorf("%w: event id %q", events.ErrInvalid, meta.GetEventId())
	}
	payload, err := domain.Payload(spec.Type, meta.GetOccurredAt().AsTime(), msg)
	if err != nil {
		return domain.NewDelivery{}, false, bus.Permanent(err)
	}
	return domain.NewDelivery{EventID: id, EventType: spec.Type, CompanyID: meta.GetCompanyId(),
		Environment: meta.GetEnvironment(), Payload: payload}, true, nil
}

// deadLetter stores m in the dead-letter stream under the subject it was published on (a
// re-drive republishes it there, to every consumer of its stream, which all skip what they
// have applied).
func (c *Consumer) deadLetter(ctx context.Context, m jetstream.Msg, reason error) error {
	dl := bus.DeadLetter{Consumer: c.durable, Subject: OriginalSubject(m.Subject()), Header: m.Headers(), Data: m.Data(),
		Reason: reason}
	if md, err := m.Metadata(); err == nil {
		dl.Stream, dl.Sequence = md.Stream, md.Sequence.Stream
	}
	if err := c.dl.Send(ctx, dl); err != nil {
		return fmt.Errorf("dead-lettering %s: %w", m.Subject(), err)
	}
	c.log.Warn("message dead-lettered", "subject", dl.Subject, "reason", reason)
	c.metrics.Add(c.durable, bus.OutcomeDeadLettered, 1)
	return m.Ack()
}

// ack acknowledges a message that makes no delivery (no endpoint, not a webhook event).
func (c *Consumer) ack(m jetstream.Msg) {
	_ = m.Ack()
	c.metrics.Add(c.durable, bus.OutcomeAcked, 1)
}

func nakAll(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.NakWithDelay(time.Second)
	}
}
