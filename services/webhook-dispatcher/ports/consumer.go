// Package ports is how the webhook-dispatcher is driven: durable JetStream consumers of the
// catalogue events, and the NATS request-reply service "webhooks" the gateway calls.
package ports

import (
	"context"
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

// durablePrefix names the dispatcher's durable consumers ("webhook-dispatcher-payment", ...).
const durablePrefix = "webhook-dispatcher-"

// ackWait is how long JetStream waits before redelivering a message a dispatcher took and
// never acknowledged (it died). A batch is one short transaction, so this is ample, and short
// enough that a crash delays the events it held by seconds, not a minute.
const ackWait = 10 * time.Second

// ConsumerSpecs returns one durable pull consumer per stream carrying catalogue events (SPEC
// 6.4), filtered to those events: PAYMENTS, POOL (deposit_received, withdrawal_completed and
// low_balance only), SESSION_KEYS and DEVICES.
func ConsumerSpecs() []bus.ConsumerSpec {
	var specs []bus.ConsumerSpec
	for _, st := range events.Streams() {
		var filters []string
		for _, s := range events.All() {
			if s.Family == st.Family && s.Catalogue {
				filters = append(filters, events.Subject(s.Family, "*", "*", s.Name))
			}
		}
		if len(filters) == 0 {
			continue
		}
		slices.Sort(filters)
		specs = append(specs, bus.ConsumerSpec{Stream: st.Name, Durable: durablePrefix + st.Family,
			FilterSubjects: filters, AckWait: ackWait})
	}
	return specs
}

// Consumer turns the messages of one durable consumer into deliveries.
type Consumer struct {
	d        *app.Dispatcher
	dl       *bus.DeadLetterer
	consumer jetstream.Consumer
	durable  string
	log      *slog.Logger
	batch    int
	maxWait  time.Duration
}

// NewConsumer returns the Consumer of consumer (durable name durable).
func NewConsumer(d *app.Dispatcher, dl *bus.DeadLetterer, consumer jetstream.Consumer, durable string, log *slog.Logger) *Consumer {
	return &Consumer{d: d, dl: dl, consumer: consumer, durable: durable, log: log.With("consumer", durable),
		batch: 100, maxWait: time.Second}
}

// Run fetches and handles batches until ctx ends.
func (c *Consumer) Run(ctx context.Context) error {
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
	msgs, err := bus.FetchAvailable(ctx, c.consumer, c.batch, c.maxWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	return c.handle(ctx, msgs)
}

func (c *Consumer) handle(ctx context.Context, msgs []jetstream.Msg) error {
	var (
		news []domain.NewDelivery
		good []jetstream.Msg
	)
	for _, m := range msgs {
		n, deliver, err := toDelivery(m)
		switch {
		case err != nil:
			if err := c.deadLetter(ctx, m, err); err != nil {
				nakAll(append(good, m))
				return err
			}
		case !deliver:
			_ = m.Ack()
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
	c.d.Enqueue(ctx, claims)
	return nil
}

// toDelivery decodes a bus message; deliver is false for an event outside the catalogue.
func toDelivery(m jetstream.Msg) (domain.NewDelivery, bool, error) {
	msg, spec, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
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

func (c *Consumer) deadLetter(ctx context.Context, m jetstream.Msg, reason error) error {
	if err := c.dl.SendJetStream(ctx, c.durable, m, reason); err != nil {
		return fmt.Errorf("dead-lettering %s: %w", m.Subject(), err)
	}
	c.log.Warn("message dead-lettered", "subject", m.Subject(), "reason", reason)
	return m.Ack()
}

func nakAll(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.NakWithDelay(time.Second)
	}
}
