package svc

import (
	"context"

	"github.com/payplat/platform/pkg/bus"
)

// ConsumerSupport returns what every stream consumer of the service settles its messages with:
// the dead-letterer of the messages it cannot apply and the counters of what it settled. Both
// register their metrics in rt.Registry, so a service calls it once and shares the two between
// its consumers.
func (rt *Runtime) ConsumerSupport() (*bus.DeadLetterer, *bus.ConsumerMetrics, error) {
	dl, err := bus.NewDeadLetterer(rt.JS, rt.Registry)
	if err != nil {
		return nil, nil, err
	}
	metrics, err := bus.NewConsumerMetrics(rt.Registry)
	if err != nil {
		return nil, nil, err
	}
	return dl, metrics, nil
}

// WatchConsumer adds the readiness check "consumer <durable>" to /readyz: it fails, naming how
// many messages wait and for how long, while the durable has messages to apply and has settled
// none for Config.ConsumerStallAfter (bus.Progress.Stalled). Every consumer of the durable in
// the process shares p (bus.ConsumerMetrics.Progress), so the check is the durable's, not one
// goroutine's.
func (rt *Runtime) WatchConsumer(durable string, p *bus.Progress) {
	after := rt.Config.ConsumerStallAfter
	if after <= 0 {
		after = bus.DefaultStallAfter
	}
	rt.AddCheck("consumer "+durable, func(context.Context) error { return p.Stalled(after) })
}
