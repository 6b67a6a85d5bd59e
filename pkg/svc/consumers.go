package svc

import "github.com/payplat/platform/pkg/bus"

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
