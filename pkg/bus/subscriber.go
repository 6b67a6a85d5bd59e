package bus

import (
	"log/slog"
	"time"

	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/nats-io/nats.go"
)

// newSubscriber returns a Watermill NATS subscriber, in JetStream mode, bound to the durable
// push consumer of spec that EnsureConsumer created. It has its own connection, because
// closing the subscriber drains its connection.
//
// The library subscribes with the legacy js.QueueSubscribe (push). Bound with nats.Bind, it
// never creates a consumer, so draining never deletes one (the library deletes only the
// consumers it created). The DurableCalculator must name the durable: without it the library
// adds nats.BindStream(""), which conflicts with Bind. ManualAck is essential: without it
// nats.go acknowledges every message when the callback returns, including messages the
// subscriber dropped on its ack timeout or on close, which would then be lost.
func newSubscriber(cfg RouterConfig, spec ConsumerSpec, log *slog.Logger) (*wmnats.Subscriber, error) {
	detail := &wmnats.SubjectDetail{QueueGroup: spec.Durable}
	if len(spec.FilterSubjects) == 1 {
		detail.Primary = spec.FilterSubjects[0] // the legacy client checks it against the consumer's filter
	}
	return wmnats.NewSubscriber(wmnats.SubscriberConfig{
		URL:              cfg.URL,
		NatsOptions:      connectOptions("bus "+spec.Durable, cfg.NatsOptions),
		QueueGroupPrefix: spec.Durable,
		SubscribersCount: 1,
		CloseTimeout:     cfg.CloseTimeout,
		AckWaitTimeout:   cfg.AckTimeout,
		Unmarshaler:      Marshaler{},
		SubjectCalculator: func(string, string) *wmnats.SubjectDetail {
			d := *detail
			return &d
		},
		NakDelay: redeliveryDelay(spec.AckWait),
		JetStream: wmnats.JetStreamConfig{
			AutoProvision:     false,
			SubscribeOptions:  []nats.SubOpt{nats.Bind(spec.Stream, spec.Durable), nats.ManualAck()},
			DurableCalculator: func(string, string) string { return spec.Durable },
		},
	}, watermillLogger(log))
}

// redeliveryDelay is the NAK delay after a transient failure. A plain NAK redelivers at once,
// which would spin on a failing dependency. JetStream measures a NAK delay d from the
// delivery's AckWait: the message comes back after d - AckWait + (the delivery's ack
// deadline). With d = AckWait (BackOff[0] when BackOff is set) it comes back exactly when an
// unacknowledged message would have: after AckWait, or after the BackOff step of that delivery.
type redeliveryDelay time.Duration

// WaitTime implements wmnats.Delay.
func (d redeliveryDelay) WaitTime(uint64) time.Duration { return time.Duration(d) }
