// Package ports is how the webhook-dispatcher is driven: the intakes that read the catalogue
// events from the event streams, and the NATS request-reply service "webhooks" the gateway
// calls.
package ports

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/webhook-dispatcher/app"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// durablePrefix names the durable consumers of earlier versions that RetireCopy deletes: one per
// partition on the copy stream ("webhook-dispatcher-p3"), one per event stream before that
// ("webhook-dispatcher-payment").
const durablePrefix = "webhook-dispatcher-"

// deadLetterConsumer is the consumer name the intakes' dead letters carry
// (deadletter.webhook-dispatcher).
const deadLetterConsumer = "webhook-dispatcher"

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

// verdict is what one message of a batch makes: a delivery to create (news), a dead letter
// (reject), or nothing (neither).
type verdict struct {
	news   *domain.NewDelivery
	reject error
}

// screen decides what each message of a batch makes. Events outside the catalogue are skipped
// without being decoded; those of a company and environment with no enabled endpoint (looked
// up once per batch, so an endpoint configured before the lookup gets them) are only decoded
// and validated (a bad one is rejected), neither rendered nor stored: they would create no
// delivery. The others are decoded and rendered into the deliveries to create. A message whose
// decoding panics is rejected.
func screen(ctx context.Context, d *app.Dispatcher, msgs []jetstream.Msg) ([]verdict, error) {
	out := make([]verdict, len(msgs))
	targets := make([]*domain.Target, len(msgs))
	var unique []domain.Target
	seen := map[domain.Target]bool{}
	for i, m := range msgs {
		t, reject := screenSubject(m)
		if t == nil {
			out[i].reject = reject
			continue
		}
		targets[i] = t
		if !seen[*t] {
			seen[*t] = true
			unique = append(unique, *t)
		}
	}
	deliverable, err := d.Deliverable(ctx, unique)
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
			out[i].reject = safely(m, func(m jetstream.Msg) verdict {
				if _, _, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data()); err != nil {
					return verdict{reject: err}
				}
				return verdict{}
			}).reject
		default:
			out[i] = safely(m, toDelivery)
		}
	}
	return out, nil
}

// safely is f(m), or a rejection if f panics.
func safely(m jetstream.Msg, f func(jetstream.Msg) verdict) (v verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = verdict{reject: fmt.Errorf("%w: screening: %v", bus.ErrHandlerPanicked, p)}
		}
	}()
	return f(m)
}

// screenSubject reads the subject of m only. It skips the events that are no webhook event
// (outside the catalogue, or of a type this binary does not know, which reading whole streams
// brings too) and rejects those with a malformed subject (returning a nil target with the
// reason); for the others it returns their company and environment.
func screenSubject(m jetstream.Msg) (*domain.Target, error) {
	parts, err := events.ParseSubject(m.Subject())
	switch {
	case errors.Is(err, events.ErrUnknownType):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", events.ErrUndecodable, err)
	}
	if spec, _ := events.Lookup(parts.Type); !spec.Catalogue {
		return nil, nil
	}
	return &domain.Target{CompanyID: parts.CompanyID, Environment: parts.Env}, nil
}

// toDelivery decodes a bus message into the delivery it makes: nothing for an event outside
// the catalogue, rejected when it cannot be decoded or rendered.
func toDelivery(m jetstream.Msg) verdict {
	msg, spec, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		return verdict{reject: err}
	}
	if !spec.Catalogue {
		return verdict{}
	}
	meta := events.Meta(msg)
	id, err := uuid.Parse(meta.GetEventId())
	if err != nil {
		return verdict{reject: fmt.Errorf("%w: event id %q", events.ErrInvalid, meta.GetEventId())}
	}
	payload, err := domain.Payload(spec.Type, meta.GetOccurredAt().AsTime(), msg)
	if err != nil {
		return verdict{reject: bus.Permanent(err)}
	}
	return verdict{news: &domain.NewDelivery{EventID: id, EventType: spec.Type, CompanyID: meta.GetCompanyId(),
		Environment: meta.GetEnvironment(), Payload: payload}}
}

// deadLetter stores m in the dead-letter stream under the subject it was published on (a
// re-drive republishes it there, to every consumer of its stream, which all skip what they
// have applied).
func deadLetter(ctx context.Context, dl *bus.DeadLetterer, m jetstream.Msg, reason error) error {
	letter := bus.DeadLetter{Consumer: deadLetterConsumer, Subject: m.Subject(), Header: m.Headers(), Data: m.Data(),
		Reason: reason}
	if md, err := m.Metadata(); err == nil {
		letter.Stream, letter.Sequence = md.Stream, md.Sequence.Stream
	}
	return dl.Send(ctx, letter)
}
