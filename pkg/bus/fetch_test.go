package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/testkit"
)

// FetchAvailable hands over what the consumer has at once (up to max), and on a quiet consumer
// returns with the first message that arrives instead of waiting for a full batch until
// maxWait: here maxWait is an hour, and the test fails if the call is still waiting a minute
// after the message was published.
func TestFetchAvailableServesAQuietConsumerAtOnce(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	ctx := context.Background()
	c, err := EnsurePullConsumer(ctx, b.js, ConsumerSpec{Stream: "TREASURY", Durable: "fetch-test"})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(i int) {
		if _, err := b.js.Publish(ctx, "treasury.test.c1.deposit_detected", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		publish(i)
	}
	msgs, err := FetchAvailable(ctx, c, 3, time.Hour)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("available: %d messages, %v", len(msgs), err)
	}
	ack(t, msgs)
	if msgs, err = FetchAvailable(ctx, c, 10, time.Hour); err != nil || len(msgs) != 2 {
		t.Fatalf("the rest: %d messages, %v", len(msgs), err)
	}
	ack(t, msgs)

	got := make(chan []jetstream.Msg, 1)
	go func() {
		m, err := FetchAvailable(ctx, c, 100, time.Hour)
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	// The fetch is waiting once its pull request is pending on the server.
	testkit.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		info, err := c.Info(ctx)
		if err == nil && info.NumWaiting == 0 {
			err = errors.New("no pull request waiting")
		}
		return err
	})
	publish(5)
	select {
	case m := <-got:
		if len(m) != 1 || string(m[0].Data()) != "m5" {
			t.Fatalf("got %d messages", len(m))
		}
		ack(t, m)
	case <-time.After(time.Minute):
		t.Fatal("FetchAvailable still waiting for a full batch a minute after a message arrived")
	}

	// Nothing at all: no messages and no error once maxWait has passed.
	if m, err := FetchAvailable(ctx, c, 10, 50*time.Millisecond); err != nil || len(m) != 0 {
		t.Fatalf("empty consumer: %d messages, %v", len(m), err)
	}
}

// countingConsumer is a real pull consumer that records the pull requests made through it.
type countingConsumer struct {
	jetstream.Consumer
	calls []string
}

func (c *countingConsumer) Fetch(n int, opts ...jetstream.FetchOpt) (jetstream.MessageBatch, error) {
	c.calls = append(c.calls, "wait")
	return c.Consumer.Fetch(n, opts...)
}

func (c *countingConsumer) FetchNoWait(n int) (jetstream.MessageBatch, error) {
	c.calls = append(c.calls, "available")
	return c.Consumer.FetchNoWait(n)
}

// A Fetcher hands over every message in order, in batches of at most Max, whether its last
// batch was full (it asks for what is available first) or short (it waits for the next message
// first, then takes what came with it, without asking first for what is available).
func TestAFetcherTakesEveryMessageInOrderAfterFullAndShortBatches(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	ctx := context.Background()
	real, err := EnsurePullConsumer(ctx, b.js, ConsumerSpec{Stream: "TREASURY", Durable: "fetcher-test"})
	if err != nil {
		t.Fatal(err)
	}
	c := &countingConsumer{Consumer: real}
	next := 0
	publish := func(n int) {
		for range n {
			if _, err := b.js.Publish(ctx, "treasury.test.c1.deposit_detected", fmt.Appendf(nil, "m%d", next)); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	f := &Fetcher{Consumer: c, Max: 3, MaxWait: time.Minute}
	taken := 0
	fetch := func(want int, requests ...string) {
		t.Helper()
		c.calls = nil
		msgs, err := f.Fetch(ctx)
		if err != nil || len(msgs) != want {
			t.Fatalf("fetch: %d messages (%v), want %d", len(msgs), err, want)
		}
		for _, m := range msgs {
			if got := string(m.Data()); got != fmt.Sprintf("m%d", taken) {
				t.Fatalf("message %q, want m%d", got, taken)
			}
			taken++
		}
		ack(t, msgs)
		if !slices.Equal(c.calls, requests) {
			t.Fatalf("fetch of %d: pull requests %v, want %v", want, c.calls, requests)
		}
	}
	publish(5)
	// The consumer has them all before the first request for what is available.
	testkit.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		info, err := real.Info(ctx)
		if err == nil && info.NumPending != 5 {
			err = fmt.Errorf("%d messages pending", info.NumPending)
		}
		return err
	})
	fetch(3, "available")              // full
	fetch(2, "available", "available") // short, completed after the linger: the consumer is drained
	publish(4)
	fetch(3, "wait", "available") // after a short batch: one waited for, the rest taken with it
	fetch(1, "available", "available")
	f.MaxWait = 50 * time.Millisecond
	fetch(0, "wait") // nothing within MaxWait
}

// A batch found short waits out the linger and takes what arrived meanwhile: a message that
// arrives while the first one is held is handed over with it. (The linger is five seconds
// here so that the second publish surely lands inside it; FetchAvailable's is milliseconds.)
func TestFetchAvailableCompletesAShortBatchWithinTheLinger(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	ctx := context.Background()
	c, err := EnsurePullConsumer(ctx, b.js, ConsumerSpec{Stream: "TREASURY", Durable: "linger-test"})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(i int) {
		if _, err := b.js.Publish(ctx, "treasury.test.c1.deposit_detected", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	publish(0)
	got := make(chan []jetstream.Msg, 1)
	go func() {
		m, err := fetchAvailable(ctx, c, 10, time.Hour, 5*time.Second, false)
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	// Once the first message is out to the fetch, publish the second.
	for {
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	publish(1)
	m := <-got
	if len(m) != 2 || string(m[0].Data()) != "m0" || string(m[1].Data()) != "m1" {
		t.Fatalf("got %d messages, want m0 and m1 in one batch", len(m))
	}
	ack(t, m)
}

func ack(t *testing.T, msgs []jetstream.Msg) {
	t.Helper()
	for _, m := range msgs {
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
}

// A pull consumer's messages held by a runner that died are delivered again after
// DefaultPullAckWait (15 s), not the minute of the push consumers: recovery from a killed
// consumer waits that long.
func TestPullConsumersWaitDefaultPullAckWait(t *testing.T) {
	t.Parallel()
	b := newTestBus(t)
	c, err := EnsurePullConsumer(context.Background(), b.js, ConsumerSpec{Stream: "PAYMENTS", Durable: "pull-ackwait"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CachedInfo().Config.AckWait; got != DefaultPullAckWait {
		t.Fatalf("AckWait %s, want %s", got, DefaultPullAckWait)
	}
}
