package svctest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/testkit"
)

// AssertStartsAndStops starts the service described by o on a fresh database and JetStream
// server (Start) and fails the test unless it stops cleanly: the smoke test every service has,
// proving it migrates its schema, provisions the streams and becomes ready.
func AssertStartsAndStops(t testing.TB, o svc.Options) {
	t.Helper()
	s := Start(t, o)
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// DeadLetters counts the messages the consumer called durable has put on the dead-letter
// stream, for tests polling (testkit.WaitFor) until a bad message has been dead-lettered.
func DeadLetters(ctx context.Context, js jetstream.JetStream, durable string) (uint64, error) {
	st, err := js.Stream(ctx, bus.DeadLetterStream)
	if err != nil {
		return 0, err
	}
	subject := bus.DeadLetterSubject(durable)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, err
	}
	return info.State.Subjects[subject], nil
}

// LastDeadLetter is the last message the consumer called durable has put on the dead-letter
// stream, for tests checking the reason (header bus.HeaderDLQReason) it was refused with.
func LastDeadLetter(ctx context.Context, js jetstream.JetStream, durable string) (*jetstream.RawStreamMsg, error) {
	st, err := js.Stream(ctx, bus.DeadLetterStream)
	if err != nil {
		return nil, err
	}
	return st.GetLastMsgForSubject(ctx, bus.DeadLetterSubject(durable))
}

// deadLetterWait is how long WaitDeadLetters and WaitDeadLetter give a consumer to refuse what
// a test published: a batch, a retry or two, and the dead-letter publish.
const deadLetterWait = 30 * time.Second

// WaitDeadLetters polls until the consumer called durable has put exactly want messages on the
// dead-letter stream, and fails the test if that takes longer than deadLetterWait.
func WaitDeadLetters(t testing.TB, js jetstream.JetStream, durable string, want uint64) {
	t.Helper()
	testkit.WaitFor(t, deadLetterWait, 20*time.Millisecond, func() error {
		n, err := DeadLetters(context.Background(), js, durable)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("%s: %d dead letters, want %d", durable, n, want)
		}
		return nil
	})
}

// WaitDeadLetter polls until the consumer called durable has dead-lettered a message and
// returns the last one (LastDeadLetter), failing the test after deadLetterWait.
func WaitDeadLetter(t testing.TB, js jetstream.JetStream, durable string) *jetstream.RawStreamMsg {
	t.Helper()
	var msg *jetstream.RawStreamMsg
	testkit.WaitFor(t, deadLetterWait, 20*time.Millisecond, func() error {
		var err error
		msg, err = LastDeadLetter(context.Background(), js, durable)
		return err
	})
	return msg
}

// Drained returns nil once the consumer durable of stream has taken and acknowledged every
// message, and otherwise an error saying how many wait: a condition for testkit.WaitFor.
func Drained(ctx context.Context, js jetstream.JetStream, stream, durable string) error {
	c, err := js.Consumer(ctx, stream, durable)
	if err != nil {
		return err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	if info.NumPending != 0 || info.NumAckPending != 0 {
		return fmt.Errorf("%s: %d pending, %d awaiting ack", durable, info.NumPending, info.NumAckPending)
	}
	return nil
}
