package testkit

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// KillOnFirstAck wraps a pull consumer so that the process kills itself (KillSelf) on the first
// acknowledgement it makes: a consumer that committed its batch's effects and died before it
// could acknowledge any of them. It serves Fetch and FetchNoWait, what the platform's runners
// use.
func KillOnFirstAck(c jetstream.Consumer) jetstream.Consumer { return killingConsumer{c} }

type killingConsumer struct{ jetstream.Consumer }

func (k killingConsumer) Fetch(n int, opts ...jetstream.FetchOpt) (jetstream.MessageBatch, error) {
	b, err := k.Consumer.Fetch(n, opts...)
	return wrapBatch(b), err
}

func (k killingConsumer) FetchNoWait(n int) (jetstream.MessageBatch, error) {
	b, err := k.Consumer.FetchNoWait(n)
	return wrapBatch(b), err
}

func wrapBatch(b jetstream.MessageBatch) jetstream.MessageBatch {
	if b == nil {
		return nil
	}
	out := make(chan jetstream.Msg)
	go func() {
		defer close(out)
		for m := range b.Messages() {
			out <- killingMsg{m}
		}
	}()
	return killingBatch{inner: b, msgs: out}
}

type killingBatch struct {
	inner jetstream.MessageBatch
	msgs  chan jetstream.Msg
}

func (b killingBatch) Messages() <-chan jetstream.Msg { return b.msgs }
func (b killingBatch) Error() error                   { return b.inner.Error() }

type killingMsg struct{ jetstream.Msg }

func (killingMsg) Ack() error { KillSelf(); return nil }

func (killingMsg) DoubleAck(context.Context) error { KillSelf(); return nil }
