package testkit

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// KillOnFirstAck wraps a pull consumer so that the process kills itself (KillSelf) on the first
// acknowledgement it makes: a consumer that committed its batch's effects and died before it
// could acknowledge any of them. It serves Messages, the long-lived pull subscription the
// platform's consumers fetch through (bus.Fetcher).
func KillOnFirstAck(c jetstream.Consumer) jetstream.Consumer { return killingConsumer{c} }

type killingConsumer struct{ jetstream.Consumer }

func (k killingConsumer) Messages(opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
	it, err := k.Consumer.Messages(opts...)
	if err != nil {
		return nil, err
	}
	return killingIterator{it}, nil
}

type killingIterator struct{ jetstream.MessagesContext }

func (i killingIterator) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	m, err := i.MessagesContext.Next(opts...)
	if err != nil {
		return nil, err
	}
	return killingMsg{m}, nil
}

type killingMsg struct{ jetstream.Msg }

func (killingMsg) Ack() error { KillSelf(); return nil }

func (killingMsg) DoubleAck(context.Context) error { KillSelf(); return nil }
