package adapters

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/gateway/domain"
	webhookapi "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// liveBuffer bounds the events waiting for one slow dashboard; past it events are dropped, which
// costs nothing but a refresh, since each one only tells the page to re-read.
const liveBuffer = 64

// LiveEvents feeds the dashboard's live updates of one company in one environment: ordered
// JetStream consumers (ephemeral, deliver-new) on the PAYMENTS and POOL streams filtered to
// that company's subjects, the webhook-dispatcher's outcome announcements for it, and the
// gateway's key-roll announcements naming it.
type LiveEvents struct {
	js  jetstream.JetStream
	nc  *nats.Conn
	log *slog.Logger
}

// NewLiveEvents returns the feed on nc.
func NewLiveEvents(nc *nats.Conn, js jetstream.JetStream, log *slog.Logger) *LiveEvents {
	return &LiveEvents{js: js, nc: nc, log: log}
}

// liveStreams are the streams a dashboard follows, by the family whose subjects it filters.
var liveStreams = []struct{ family, kind string }{
	{events.FamilyPayment, domain.LivePayment},
	{events.FamilyPool, domain.LivePool},
}

// Subscribe follows p's company and environment until ctx ends; the channel closes then.
func (l *LiveEvents) Subscribe(ctx context.Context, p domain.Principal) (<-chan domain.LiveEvent, error) {
	env, company := string(p.Environment), p.CompanyID.String()
	out := make(chan domain.LiveEvent, liveBuffer)
	// Stopping a consumer does not wait for a callback already running, so a callback may emit
	// after the feed ended: emit and the close take turns, and nothing is sent once closed.
	var (
		mu     sync.Mutex
		closed bool
	)
	emit := func(ev domain.LiveEvent) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		select {
		case out <- ev:
		default:
		}
	}
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, s := range liveStreams {
		stop, err := l.follow(ctx, s.family, s.kind, env, company, emit)
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, stop)
	}
	subs, err := l.announcements(env, company, emit)
	if err != nil {
		stopAll()
		return nil, err
	}
	stops = append(stops, subs)
	go func() {
		<-ctx.Done()
		stopAll()
		mu.Lock()
		closed = true
		close(out)
		mu.Unlock()
	}()
	return out, nil
}

// follow consumes a family's events of one tenant, from now on, in order.
func (l *LiveEvents) follow(ctx context.Context, family, kind, env, company string,
	emit func(domain.LiveEvent)) (func(), error) {
	stream, _ := events.StreamFor(family)
	cons, err := l.js.OrderedConsumer(ctx, stream.Name, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{family + "." + env + "." + company + ".>"},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("following %s: %w", stream.Name, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		emit(liveEvent(kind, m))
	})
	if err != nil {
		return nil, fmt.Errorf("following %s: %w", stream.Name, err)
	}
	return cc.Stop, nil
}

// liveEvent names what a bus message says happened: its type, and the payment or movement it
// concerns when the event carries one.
func liveEvent(kind string, m jetstream.Msg) domain.LiveEvent {
	ev := domain.LiveEvent{Kind: kind}
	msg, spec, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
	if err != nil {
		// Undecodable: still a change to show; the page re-reads the truth.
		return ev
	}
	ev.Type = spec.Type
	fields := msg.ProtoReflect().Descriptor().Fields()
	for _, name := range []protoreflect.Name{"payment_id", "status"} {
		if fd := fields.ByName(name); fd != nil && fd.Kind() == protoreflect.StringKind {
			v := msg.ProtoReflect().Get(fd).String()
			if name == "payment_id" {
				ev.ID = v
			} else {
				ev.Status = v
			}
		}
	}
	return ev
}

// announcements subscribes to the core NATS hints about the tenant: webhook outcomes, and key
// rolls of its company (the body of a roll announcement is the company id).
func (l *LiveEvents) announcements(env, company string, emit func(domain.LiveEvent)) (func(), error) {
	subject, ok := webhookapi.OutcomeSubject(env, company)
	if !ok {
		return nil, fmt.Errorf("no outcome subject for company %q", company)
	}
	hooks, err := l.nc.Subscribe(subject, func(m *nats.Msg) {
		ev := domain.LiveEvent{Kind: domain.LiveWebhook}
		if o, err := webhookapi.ParseOutcome(m.Data); err == nil {
			ev.Type, ev.ID, ev.Status = o.EventType, o.DeliveryID, o.Status
		}
		emit(ev)
	})
	if err != nil {
		return nil, fmt.Errorf("subscribing to webhook outcomes: %w", err)
	}
	keys, err := l.nc.Subscribe(KeysRevokedSubject, func(m *nats.Msg) {
		if strings.TrimSpace(string(m.Data)) == company {
			emit(domain.LiveEvent{Kind: domain.LiveKeysRolled})
		}
	})
	if err != nil {
		_ = hooks.Unsubscribe()
		return nil, fmt.Errorf("subscribing to key rolls: %w", err)
	}
	return func() {
		_ = hooks.Unsubscribe()
		_ = keys.Unsubscribe()
	}, nil
}
