package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
)

// Options tune Run.
type Options struct {
	// Inflight is the most lifecycles published and not yet acknowledged (default 1000; the
	// JetStream context must allow 3 × Inflight pending asynchronous publishes).
	Inflight int
	// Rate is the lifecycles published per second; 0 publishes at full speed.
	Rate float64
	// SubjectPrefix is put in front of every subject (raw JetStream benchmarks publish the same
	// messages to a stream of their own); empty for the platform's subjects.
	SubjectPrefix string
	// OnConfirmed, when set, is called right after the payment.confirmed of each lifecycle is
	// handed to the client, with that time: where projection lag is measured from.
	OnConfirmed func(p Payment, at time.Time)
}

// Stats describe a finished Run.
type Stats struct {
	Lifecycles int
	Start      time.Time     // just before the first publish
	Elapsed    time.Duration // from Start to the last acknowledgement
}

// Rate is the lifecycles per second of the run.
func (s Stats) Rate() float64 { return float64(s.Lifecycles) / s.Elapsed.Seconds() }

// Publish publishes n lifecycles spread over tenants at full speed with at most inflight
// unacknowledged, and returns once every publish is acknowledged.
func Publish(ctx context.Context, js jetstream.JetStream, tenants []Tenant, n, inflight int) error {
	_, err := Run(ctx, js, tenants, n, Options{Inflight: inflight})
	return err
}

// Run publishes n lifecycles spread over tenants (payment i goes to tenant i mod len(tenants)),
// each event with Nats-Msg-Id = event id, with asynchronous JetStream publishes kept within a
// sliding window of o.Inflight lifecycles, at full speed or at o.Rate, and returns once every
// publish is acknowledged. A refused publish fails the run.
func Run(ctx context.Context, js jetstream.JetStream, tenants []Tenant, n int, o Options) (Stats, error) {
	if len(tenants) == 0 {
		return Stats{}, errors.New("no tenants")
	}
	if o.Inflight <= 0 {
		o.Inflight = 1000
	}
	var window acks
	start := time.Now()
	for i := range n {
		if o.Rate > 0 {
			if err := pace(ctx, start, i, o.Rate); err != nil {
				return Stats{}, err
			}
		}
		msgs, p := Lifecycle(tenants[i%len(tenants)], i, time.Now())
		for _, ev := range msgs {
			m, err := NATSMessage(ev, o.SubjectPrefix)
			if err != nil {
				return Stats{}, err
			}
			f, err := js.PublishMsgAsync(m)
			if err != nil {
				return Stats{}, fmt.Errorf("publishing: %w", err)
			}
			window.pending = append(window.pending, f)
		}
		if o.OnConfirmed != nil {
			o.OnConfirmed(p, time.Now())
		}
		if err := window.waitBelow(ctx, 3*o.Inflight); err != nil {
			return Stats{}, err
		}
	}
	if err := window.waitBelow(ctx, 0); err != nil {
		return Stats{}, err
	}
	return Stats{Lifecycles: n, Start: start, Elapsed: time.Since(start)}, nil
}

// pace waits until lifecycle i is due at rate per second from start. It sleeps in steps of a
// millisecond or more and lets the lifecycles that fell due meanwhile go out back to back, so
// the average rate holds even where timers are coarse.
func pace(ctx context.Context, start time.Time, i int, rate float64) error {
	due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
	wait := time.Until(due)
	if wait <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(max(wait, time.Millisecond)):
		return nil
	}
}

// acks is the window of unacknowledged asynchronous publishes, oldest first.
type acks struct {
	pending []jetstream.PubAckFuture
}

// waitBelow waits for the oldest publishes until at most limit are unacknowledged.
func (a *acks) waitBelow(ctx context.Context, limit int) error {
	for len(a.pending) > limit {
		f := a.pending[0]
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("publish to %s refused: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return ctx.Err()
		}
		a.pending[0] = nil
		a.pending = a.pending[1:]
	}
	if len(a.pending) == 0 {
		a.pending = a.pending[:0:0]
	}
	return nil
}

// NATSMessage is the bus message of an event as a publisher sends it: protobuf, Nats-Msg-Id =
// event id, on its subject (with prefix in front).
func NATSMessage(ev proto.Message, prefix string) (*nats.Msg, error) {
	subject, err := events.SubjectFor(ev)
	if err != nil {
		return nil, err
	}
	data, err := events.Marshal(ev)
	if err != nil {
		return nil, err
	}
	m := &nats.Msg{Subject: prefix + subject, Data: data, Header: nats.Header{}}
	m.Header.Set(bus.HeaderContentType, events.ContentTypeProtobuf)
	m.Header.Set(nats.MsgIdHdr, events.Meta(ev).GetEventId())
	return m, nil
}
